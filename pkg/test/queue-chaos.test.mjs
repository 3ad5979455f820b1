// The lease promise of `leasehold/postgres` under faults, with real processes: three Node.js
// workers (2 slots each) drain one queue while one is killed with SIGKILL mid-job, one is
// frozen with SIGSTOP for twice the stale window and then resumed, and the PostgreSQL
// server is stopped for twice the stale window and started again. Each handler records its
// execution in a ledger (fixtures/queue-chaos-worker.mjs: a start, a step every ~50 ms
// stamped when it checked its signal, a stop when it saw the signal aborted, an end). Once
// the queue drained it counts, as scripts/chaos.sh does for the command-line tool:
//
//   lost     jobs not succeeded
//   overlap  pairs of executions of one job whose recorded activity intersects in time
//            (and the longest intersection, ms): a job worked on by two workers at once
//   double   jobs whose success was settled twice (the settlements journal)
//   rerun    finished work run again: allowed only where the worker that finished it was
//            killed or frozen before its outcome landed, or the database was away for
//            longer than the stale window (a peer then takes the job over, and the fence
//            refuses the late outcome); any other re-run is counted `bad`
//
// and asserts lost = overlap = double = bad = 0. It needs LEASEHOLD_TEST_PG_URL, served by
// a cluster of scripts/pg-cluster.sh whose folder is LEASEHOLD_PG_DIR (the test stops and
// starts that server); it is skipped, saying which is missing, without them. About 20 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from 'leasehold/postgres';

const here = path.dirname(fileURLToPath(import.meta.url));
const cluster = path.join(here, '..', '..', 'scripts', 'pg-cluster.sh');
const url = process.env.LEASEHOLD_TEST_PG_URL;
const pgDir = process.env.LEASEHOLD_PG_DIR ?? '/tmp/leasehold-pg';
const pgPort = url ? (new URL(url).searchParams.get('port') ?? new URL(url).port) : '';

/** Why the test cannot run here, or undefined. */
function missing() {
  if (!url) return 'LEASEHOLD_TEST_PG_URL is not set (scripts/pg-cluster.sh start): the leasehold/postgres chaos test skipped';
  const pid = path.join(pgDir, 'data', 'postmaster.pid');
  // postmaster.pid's 4th line is the server's port: the cluster in the folder serves the URL.
  const port = existsSync(pid) ? readFileSync(pid, 'utf8').split('\n')[3] : undefined;
  if (port !== pgPort) {
    return `the server of LEASEHOLD_TEST_PG_URL (port ${pgPort}) is not the scripts/pg-cluster.sh cluster in LEASEHOLD_PG_DIR (${pgDir}), which the test must stop and start: the leasehold/postgres chaos test skipped`;
  }
  return undefined;
}

const STALE_MS = 1500;
const WORKERS = 3;
const SLOTS = 2;
const JOBS = 90;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pgCluster = (command) =>
  execFileSync(cluster, [command], { env: { ...process.env, LEASEHOLD_PG_DIR: pgDir, LEASEHOLD_PG_PORT: pgPort }, stdio: ['ignore', 'ignore', 'inherit'] });

/** The ledger's executions: job, token, worker, start, last stamp (ms), how it ended ('E', 'X' or none), steps. */
function readLedger(file) {
  const runs = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f[0] === 'S') runs.set(f[3], { job: f[1], token: f[2], ex: f[3], worker: f[4], start: Number(f[5]), last: Number(f[5]), end: undefined, steps: [] });
    else if (runs.has(f[2])) {
      const run = runs.get(f[2]);
      const at = Number(f[3]);
      // A stop (X) is no activity: the handler saw its signal aborted and did nothing more.
      if (f[0] !== 'X' && at > run.last) run.last = at;
      if (f[0] === 'H') run.steps.push(at);
      else run.end = f[0];
    }
  }
  return [...runs.values()];
}

/** Pairs of executions of one job whose recorded activity intersects, with the intersection (ms). */
function overlaps(runs) {
  const found = [];
  const byJob = new Map();
  for (const r of runs) byJob.set(r.job, [...(byJob.get(r.job) ?? []), r]);
  for (const list of byJob.values()) {
    for (let i = 0; i < list.length; i += 1) {
      for (let k = i + 1; k < list.length; k += 1) {
        const [a, b] = [list[i], list[k]];
        const ms = Math.min(a.last, b.last) - Math.max(a.start, b.start);
        if (ms > 0) found.push({ a, b, ms });
      }
    }
  }
  return found;
}

test('leasehold/postgres workers under kill -9, SIGSTOP past the lease and a database outage: nothing lost, no job worked on twice at once, none settled twice', { skip: missing() }, async () => {
  const schema = `nodepg_chaos_${process.pid}`;
  const options = `-c search_path=${schema}`;
  const admin = new pg.Pool({ connectionString: url, options });
  admin.on('error', () => undefined); // idle connections cut by the outage
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'leasehold-queue-chaos-'));
  const ledger = path.join(dir, 'ledger');
  const pool = new pg.Pool({ connectionString: url, options });
  pool.on('error', () => undefined);
  const queue = await connect(pool);
  const workers = new Set();
  const faults = { killed: new Set(), paused: new Set(), outage: [] };
  let halted = false;
  let n = 0;
  const start = () => {
    const tag = `w${(n += 1)}`;
    const env = { ...process.env, CHAOS_TAG: tag, CHAOS_SCHEMA: schema, CHAOS_LEDGER: ledger, CHAOS_STALE_MS: String(STALE_MS), CHAOS_CONCURRENCY: String(SLOTS) };
    const child = spawn(process.execPath, [path.join(here, 'fixtures', 'queue-chaos-worker.mjs')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.tag = tag;
    workers.add(child);
    return new Promise((resolve, reject) => {
      child.stdout.once('data', () => resolve(child));
      child.once('exit', (code) => reject(new Error(`worker ${tag} exited (${code}) before it worked`)));
    });
  };
  try {
    // 400 to 1,000 ms of steps each: the slots stay busy through every fault.
    for (let j = 0; j < JOBS; j += 1) await queue.enqueue('chaos', { steps: 8 + ((j * 7) % 13) }, { maxAttempts: 100 });
    const [w1, w2] = await Promise.all(Array.from({ length: WORKERS }, start));

    // kill -9 mid-job, and a replacement.
    await sleep(1000);
    w1.kill('SIGKILL');
    faults.killed.add(w1.tag);
    workers.delete(w1);
    await start();

    // Frozen for twice the stale window (its jobs are taken over meanwhile), then resumed.
    await sleep(500);
    w2.kill('SIGSTOP');
    faults.paused.add(w2.tag);
    await sleep(2 * STALE_MS);
    w2.kill('SIGCONT');

    // The database away for twice the stale window, then back.
    await sleep(1000);
    const from = Date.now();
    halted = true;
    pgCluster('halt');
    await sleep(2 * STALE_MS);
    pgCluster('start');
    halted = false;
    faults.outage = [from, Date.now()];

    const deadline = Date.now() + 45_000;
    let counts;
    while (Date.now() < deadline) {
      [counts] = await queue.counts();
      if (counts.queued + counts.retrying + counts.scheduled + counts.running === 0) break;
      await sleep(200);
    }
    for (const child of workers) child.kill('SIGTERM');
    await Promise.all([...workers].map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)))));
    workers.clear();

    const runs = readLedger(ledger);
    const done = await admin.query(`SELECT job_id, count(*) AS n FROM leasehold_settlements WHERE outcome = 'done' GROUP BY job_id`);
    const twice = done.rows.filter((row) => Number(row.n) > 1);
    const overlapping = overlaps(runs);
    // Finished work run again: an execution that started after another of its job ended.
    const rerun = { faulted: 0, outage: 0, bad: [] };
    for (const r of runs.filter((x) => x.end === 'E')) {
      const again = runs.find((x) => x.job === r.job && x !== r && x.start > r.last);
      if (again === undefined) continue;
      if (faults.killed.has(r.worker) || faults.paused.has(r.worker)) rerun.faulted += 1;
      else if (r.last >= faults.outage[0] - STALE_MS && r.last <= faults.outage[1]) rerun.outage += 1;
      else rerun.bad.push(`job ${r.job}: finished by ${r.ex} at ${r.last.toFixed(0)}, run again by ${again.ex} at ${again.start.toFixed(0)}`);
    }
    const maxMs = overlapping.reduce((max, o) => Math.max(max, o.ms), 0);
    console.log(
      `jobs ${JOBS}, execs ${runs.length}, lost ${JOBS - (counts?.succeeded ?? 0)}, overlap ${overlapping.length}, max ms ${maxMs.toFixed(1)}, ` +
        `double ${twice.length}, rerun killed/paused ${rerun.faulted}, rerun outage ${rerun.outage}, rerun bad ${rerun.bad.length}, ` +
        `stopped on abort ${runs.filter((r) => r.end === 'X').length}`,
    );
    const described = overlapping.map(
      ({ a, b, ms }) =>
        `job ${a.job}: ${a.ex} (token ${a.token}, ${a.start.toFixed(0)}..${a.last.toFixed(0)}) and ${b.ex} (token ${b.token}, ${b.start.toFixed(0)}..${b.last.toFixed(0)}) for ${ms.toFixed(1)} ms`,
    );
    for (const line of described) console.log(`overlap: ${line}`);
    assert.equal(counts?.succeeded, JOBS, `lost: ${JOBS - (counts?.succeeded ?? 0)} jobs did not succeed (${JSON.stringify(counts)})`);
    assert.deepEqual(described, [], 'no two executions of a job overlap');
    assert.deepEqual(twice, [], 'no job settled as done twice');
    assert.equal(done.rows.length, JOBS, 'one done settlement per job');
    assert.deepEqual(rerun.bad, [], 'finished work runs again only after its worker was killed or frozen, or the database was away past the stale window');
  } finally {
    for (const child of workers) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    if (halted) pgCluster('start');
    await queue.close().catch(() => undefined);
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    if (process.env.QUEUE_CHAOS_KEEP) console.log(`ledger kept in ${ledger}`);
    else rmSync(dir, { recursive: true, force: true });
  }
});
