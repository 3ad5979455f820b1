// One queue shared by the `leasehold` command-line tool and Node.js workers of
// `leasehold/postgres`, each killed with kill -9 in turn while they drain it: every job
// succeeds once (0 lost, 0 double successes) and no two executions of a job overlap.
//
// Needs LEASEHOLD_TEST_PG_URL (scripts/pg-cluster.sh start) and LEASEHOLD_BIN (a `leasehold`
// built with --features cli,postgres); skipped, saying which is missing, without them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from 'leasehold/postgres';

const here = path.dirname(fileURLToPath(import.meta.url));
const url = process.env.LEASEHOLD_TEST_PG_URL;
const bin = process.env.LEASEHOLD_BIN;
const missing = !url ? 'LEASEHOLD_TEST_PG_URL is not set (scripts/pg-cluster.sh start)' : !bin ? 'LEASEHOLD_BIN is not set (a leasehold built with --features cli,postgres)' : undefined;
const STALE_S = 2;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads the S/H/E execution log: per execution, its job, worker, start and last stamp (ns). */
function executions(log) {
  const runs = new Map();
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    const [kind, job, ex, a, b] = line.split(' ');
    if (kind === 'S') runs.set(ex, { job, worker: a, start: BigInt(b), last: BigInt(b), ended: false });
    else if (runs.has(ex)) {
      const run = runs.get(ex);
      const at = BigInt(a);
      if (at > run.last) run.last = at;
      if (kind === 'E') run.ended = true;
    }
  }
  return [...runs.values()];
}

/** Pairs of executions of one job that ran at the same time. */
function overlaps(runs) {
  const found = [];
  for (let i = 0; i < runs.length; i += 1) {
    for (let k = i + 1; k < runs.length; k += 1) {
      const [a, b] = [runs[i], runs[k]];
      if (a.job === b.job && a.start < b.last && b.start < a.last) found.push([a, b]);
    }
  }
  return found;
}

test('the CLI and Node.js workers drain one queue under kill -9: nothing lost, nothing twice at once, no double success', { skip: missing }, async () => {
  const schema = `nodepg_interop_${process.pid}`;
  const admin = new pg.Pool({ connectionString: url });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'leasehold-interop-'));
  const log = path.join(dir, 'executions.log');
  const events = path.join(dir, 'events'); // the CLI's event log, kept out of the working folder
  const cliUrl = `${url}&options[search_path]=${schema}`;
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
  const queue = await connect(pool);
  const workers = new Set();
  try {
    // Jobs queued from Node.js and from the command-line tool: the same payload shape.
    const jobs = 48;
    const job = path.join(here, '..', 'fixtures', 'queue-job.sh');
    for (let j = 1; j <= jobs; j += 1) {
      const line = `sh ${job} ${log} ${j} ${300 + ((j * 137) % 400)}`;
      if (j % 4 === 0) {
        const out = spawnSync(bin, ['--database', cliUrl, '--events', events, 'enqueue', '--queue', 'interop', '--max-attempts', '100', '--', line], { encoding: 'utf8' });
        assert.equal(out.status, 0, out.stderr);
      } else {
        await queue.enqueue('interop', { command: line }, { maxAttempts: 100 });
      }
    }
    let n = 0;
    const start = (kind) => {
      const tag = `${kind}${(n += 1)}`;
      const env = { ...process.env, QUEUE_WORKER: tag, QUEUE_SCHEMA: schema, QUEUE_STALE_MS: String(STALE_S * 1000) };
      const child =
        kind === 'cli'
          ? spawn(bin, ['--database', cliUrl, '--events', events, '--stale-after', `${STALE_S}s`, 'work', '--queue', 'interop', '--concurrency', '3'], { env, stdio: 'ignore' })
          : spawn(process.execPath, [path.join(here, '..', 'fixtures', 'queue-worker.mjs')], { env, stdio: 'ignore' });
      workers.add(child);
      return child;
    };
    let node = start('node');
    let cli = start('cli');
    // Each kind killed with SIGKILL in turn, mid-job, and replaced.
    for (let round = 0; round < 2; round += 1) {
      await sleep(1500);
      node.kill('SIGKILL');
      workers.delete(node);
      node = start('node');
      await sleep(1500);
      cli.kill('SIGKILL');
      workers.delete(cli);
      cli = start('cli');
    }
    const deadline = Date.now() + 60_000;
    let counts;
    while (Date.now() < deadline) {
      [counts] = await queue.counts();
      if (counts.queued === 0 && counts.running === 0) break;
      await sleep(200);
    }
    const runs = executions(log);
    const done = await admin.query(`SELECT job_id, count(*) AS n FROM ${schema}.leasehold_settlements WHERE outcome = 'done' GROUP BY job_id`);
    const twice = done.rows.filter((row) => Number(row.n) > 1);
    const ran = new Set(runs.map((r) => r.worker.replace(/\d+$/, '')));
    console.log(
      `jobs ${jobs}, executions ${runs.length} (${runs.filter((r) => r.worker.startsWith('node')).length} by Node.js), ` +
        `succeeded ${counts.succeeded}, overlaps ${overlaps(runs).length}, double ${twice.length}`,
    );
    assert.equal(counts.succeeded, jobs, `lost: ${jobs - counts.succeeded} jobs did not succeed`);
    assert.deepEqual(overlaps(runs).map(([a, b]) => `job ${a.job}: ${a.worker} and ${b.worker}`), []);
    assert.deepEqual(twice, [], 'jobs settled as done twice');
    assert.equal(done.rows.length, jobs, 'one done settlement per job');
    assert.ok(ran.has('node') && ran.has('cli'), `both kinds of worker ran jobs: ${[...ran]}`);
  } finally {
    for (const child of workers) child.kill('SIGTERM');
    await Promise.all([...workers].map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)))));
    await queue.close();
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
});
