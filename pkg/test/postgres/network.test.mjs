// The lease promise of `leasehold/postgres` when the network between a worker and the
// database stalls. Worker A talks to PostgreSQL through a TCP proxy (fixtures/stalling-proxy.mjs)
// that holds traffic back; worker B talks to it directly. Each handler records its execution
// in a ledger (fixtures/queue-chaos-worker.mjs: a step every ~50 ms, each stamped when it
// checked its signal), and no two executions of a job may intersect in time.
//
// - A page of claimed jobs whose answer came late: the database stamped the jobs' leases when
//   the claim ran, so by the time the page arrives they are stale and B may have taken them
//   over. The proxy holds the answer of A's claim (pageSize 2, one slot) until B took both
//   jobs over; A must perform neither beside B.
// - A job cancelled and retried while A, running it, is cut off (every byte held both ways):
//   A hears neither the cancel's NOTIFY nor its renewals' answers, and works on until its
//   lease lapses; B must not start the retried job before then.
// - A's wall clock steps back a minute while it is cut off: it must stop within its lease as
//   measured by time passing, not by its wall clock, as B takes the job over on the server's.
//
// Needs LEASEHOLD_TEST_PG_URL (scripts/pg-cluster.sh start); skipped without it. About 20 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from 'leasehold/postgres';
import { stallingProxy } from '../fixtures/stalling-proxy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, '..', 'fixtures', 'queue-chaos-worker.mjs');
const url = process.env.LEASEHOLD_TEST_PG_URL;
const skip = url ? undefined : 'LEASEHOLD_TEST_PG_URL is not set (scripts/pg-cluster.sh start)';
const STALE_MS = 3000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ledger's executions: job, token, execution, start and last activity (a stop is none). */
function readLedger(file) {
  const runs = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f[0] === 'S') runs.set(f[3], { job: f[1], token: f[2], ex: f[3], start: Number(f[5]), last: Number(f[5]) });
    else if (runs.has(f[2]) && f[0] !== 'X') runs.get(f[2]).last = Math.max(runs.get(f[2]).last, Number(f[3]));
  }
  return [...runs.values()];
}

/**
 * Runs `body(world)` on a fresh schema with a proxy and the workers it starts
 * (`world.start(tag, address, env)`), then stops them and answers the ledger's overlaps
 * (one line each) once `body` answers; cleans up either way.
 */
async function withWorld(name, body) {
  const schema = `nodepg_${name}_${process.pid}`;
  const options = `-c search_path=${schema}`;
  const admin = new pg.Pool({ connectionString: url, options });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const dir = mkdtempSync(path.join(tmpdir(), `leasehold-${name}-`));
  const ledger = path.join(dir, 'ledger');
  const pool = new pg.Pool({ connectionString: url, options });
  const queue = await connect(pool);
  const proxy = await stallingProxy(url);
  const children = [];
  const start = (tag, address, extra) => {
    const env = { ...process.env, LEASEHOLD_TEST_PG_URL: address, CHAOS_TAG: tag, CHAOS_SCHEMA: schema, CHAOS_LEDGER: ledger, CHAOS_STALE_MS: String(STALE_MS), ...extra };
    const child = spawn(process.execPath, [fixture], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      child.stdout.once('data', () => resolve(child));
      child.once('exit', (code) => reject(new Error(`worker ${tag} exited (${code}) before it worked`)));
    });
  };
  /** Waits until `n` jobs succeeded (30 s at most); answers the counts. */
  const succeeded = async (n) => {
    const deadline = Date.now() + 30_000;
    let counts;
    while (Date.now() < deadline) {
      [counts] = await queue.counts();
      if (counts.succeeded === n) break;
      await sleep(200);
    }
    return counts;
  };
  try {
    await body({ admin, queue, proxy, start, succeeded });
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)))));
    const runs = readLedger(ledger);
    const overlapping = [];
    for (let i = 0; i < runs.length; i += 1) {
      for (let k = i + 1; k < runs.length; k += 1) {
        const [a, b] = [runs[i], runs[k]];
        const ms = Math.min(a.last, b.last) - Math.max(a.start, b.start);
        if (a.job === b.job && ms > 0) overlapping.push(`job ${a.job}: ${a.ex} (token ${a.token}) and ${b.ex} (token ${b.token}) for ${ms.toFixed(0)} ms`);
      }
    }
    console.log(`${name}: executions ${runs.map((r) => `${r.ex} job ${r.job} token ${r.token}`).join(', ')}; overlaps ${overlapping.length}`);
    return overlapping;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    proxy.close();
    await queue.close().catch(() => undefined);
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a page claimed through a network that held its answer past the stale window: no job is performed beside the peer that took it over', { skip }, async () => {
  let counts;
  const overlapping = await withWorld('page', async ({ admin, queue, proxy, start, succeeded }) => {
    // Paused while A starts, so that its first page is the one the proxy holds.
    await queue.pause('chaos');
    for (let i = 0; i < 2; i += 1) await queue.enqueue('chaos', { steps: 40 }, { maxAttempts: 10 });
    await start('A', proxy.url, { CHAOS_CONCURRENCY: '1', CHAOS_PAGE_SIZE: '2' });
    let held;
    const holding = new Promise((resolve) => proxy.holdClaim(() => resolve((held = Date.now()))));
    await queue.resume('chaos');
    await holding;
    // A's page is held: B takes both jobs over once their leases are stale; then A hears it.
    await start('B', url, { CHAOS_CONCURRENCY: '2', CHAOS_PAGE_SIZE: '2' });
    const tokens = async () => (await admin.query('SELECT min(token) AS t FROM leasehold_jobs')).rows[0].t;
    while (Number(await tokens()) < 2 && Date.now() - held < 20_000) await sleep(100);
    assert.ok(Date.now() - held >= STALE_MS, 'B took the jobs over only once their leases were stale');
    proxy.release();
    counts = await succeeded(2);
  });
  assert.equal(counts?.succeeded, 2, `both jobs succeed (${JSON.stringify(counts)})`);
  assert.deepEqual(overlapping, [], 'no two executions of a job overlap');
});

test('a job cancelled and retried while its worker is cut off from the database: the next worker does not start it before that worker stopped', { skip }, async () => {
  let counts;
  const overlapping = await withWorld('cancel', async ({ admin, queue, proxy, start, succeeded }) => {
    const { id } = await queue.enqueue('chaos', { steps: 60 }, { maxAttempts: 10 });
    await start('A', proxy.url, { CHAOS_CONCURRENCY: '1' });
    while ((await queue.job(id)).state !== 'running') await sleep(50);
    await sleep(300);
    // A is cut off (its renewals go unanswered, it hears no cancel): an operator cancels its
    // job and queues it again, as one restarts a job stuck on an unreachable worker.
    proxy.partition();
    assert.deepEqual(await queue.cancel([id]), [id]);
    assert.deepEqual(await queue.retry([id]), [id]);
    await start('B', url, { CHAOS_CONCURRENCY: '1' });
    await sleep(STALE_MS + 1000);
    proxy.release();
    counts = await succeeded(1);
  });
  assert.equal(counts?.succeeded, 1, `the job succeeds (${JSON.stringify(counts)})`);
  assert.deepEqual(overlapping, [], 'no two executions of a job overlap');
});

test('a worker whose wall clock steps back while it is cut off from the database stops within its lease', { skip }, async () => {
  let counts;
  const overlapping = await withWorld('stepback', async ({ queue, proxy, start, succeeded }) => {
    const { id } = await queue.enqueue('chaos', { steps: 120 }, { maxAttempts: 10 });
    const a = await start('A', proxy.url, { CHAOS_CONCURRENCY: '1', CHAOS_CLOCK_STEP_MS: '-60000' });
    while ((await queue.job(id)).state !== 'running') await sleep(50);
    await sleep(300);
    // A's renewals go unanswered, and its wall clock steps back a minute (an NTP correction):
    // B takes the job over once its lease is stale by the database's clock.
    proxy.partition();
    a.kill('SIGUSR2');
    await start('B', url, { CHAOS_CONCURRENCY: '1' });
    counts = await succeeded(1);
    proxy.release();
  });
  assert.equal(counts?.succeeded, 1, `the job succeeds (${JSON.stringify(counts)})`);
  assert.deepEqual(overlapping, [], 'no two executions of a job overlap');
});
