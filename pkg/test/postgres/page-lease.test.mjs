// A page of claimed jobs whose answer came late (the network between a worker and the
// database held it up for longer than the stale window): the jobs' leases were stamped by
// the database when the claim ran, so by the time the page arrives they are stale and a
// peer may have taken them over. Worker A (pageSize 2, one slot) talks to PostgreSQL through
// a TCP proxy that holds back the answer of its claim until worker B, direct, has taken both
// jobs over (once their leases went stale). A must not perform either of them beside B: each
// handler records its execution in a ledger (fixtures/queue-chaos-worker.mjs) and no two
// executions of a job may intersect in time.
//
// Needs LEASEHOLD_TEST_PG_URL (scripts/pg-cluster.sh start); skipped without it. About 10 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from 'leasehold/postgres';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, '..', 'fixtures', 'queue-chaos-worker.mjs');
const url = process.env.LEASEHOLD_TEST_PG_URL;
const STALE_MS = 3000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where the server of `url` listens: a Unix socket (host is a folder) or host:port. */
function serverOf(address) {
  const u = new URL(address);
  const host = u.searchParams.get('host') ?? (u.hostname || 'localhost');
  const port = Number(u.searchParams.get('port') ?? (u.port || 5432));
  return host.startsWith('/') ? { path: path.join(host, `.s.PGSQL.${port}`) } : { host, port };
}

/**
 * A TCP proxy to the server. Once armed, the first chunk the server sends that holds a
 * claimed job (a row whose first column, kind, is 'claimed') and everything after it on that
 * connection are held back, as a network that stalls would, until `release()`; `onHold()` is
 * called when it starts.
 */
/** A DataRow's first column holding 'claimed' (its length, then the text): a claimed job. */
const CLAIMED_ROW = Buffer.from('\0\0\0\x07claimed', 'latin1');

function stallingProxy(server) {
  let armed;
  let release = () => undefined;
  const proxy = net.createServer((client) => {
    const upstream = net.connect(server);
    let chain = Promise.resolve();
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (armed !== undefined && chunk.includes(CLAIMED_ROW)) {
        chain = chain.then(() => new Promise((resolve) => (release = resolve)));
        armed.onHold();
        armed = undefined;
      }
      chain = chain.then(() => client.write(chunk));
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  return {
    listen: () => new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy.address().port))),
    arm: (onHold) => (armed = { onHold }),
    release: () => release(),
    close: () => {
      release();
      proxy.close();
    },
  };
}

function readLedger(file) {
  const runs = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f[0] === 'S') runs.set(f[3], { job: f[1], token: f[2], ex: f[3], start: Number(f[5]), last: Number(f[5]) });
    else if (runs.has(f[2]) && f[0] !== 'X') runs.get(f[2]).last = Math.max(runs.get(f[2]).last, Number(f[3]));
  }
  return [...runs.values()];
}

test('a page claimed through a network that held its answer past the stale window: no job is performed beside the peer that took it over', { skip: url ? undefined : 'LEASEHOLD_TEST_PG_URL is not set (scripts/pg-cluster.sh start)' }, async () => {
  const schema = `nodepg_page_${process.pid}`;
  const options = `-c search_path=${schema}`;
  const admin = new pg.Pool({ connectionString: url, options });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'leasehold-page-lease-'));
  const ledger = path.join(dir, 'ledger');
  const pool = new pg.Pool({ connectionString: url, options });
  const queue = await connect(pool);
  const proxy = stallingProxy(serverOf(url));
  const proxyPort = await proxy.listen();
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
  try {
    // Paused while A starts, so that its first page is the one the proxy holds.
    await queue.pause('chaos');
    for (let i = 0; i < 2; i += 1) await queue.enqueue('chaos', { steps: 40 }, { maxAttempts: 10 });
    const user = new URL(url).username || 'postgres';
    const database = new URL(url).pathname.slice(1);
    await start('A', `postgres://${user}@127.0.0.1:${proxyPort}/${database}`, { CHAOS_CONCURRENCY: '1', CHAOS_PAGE_SIZE: '2' });
    let held;
    const holding = new Promise((resolve) => proxy.arm(() => resolve((held = Date.now()))));
    await queue.resume('chaos');
    await holding;
    // A's page is held: B takes both jobs over once their leases are stale; then A hears it.
    await start('B', url, { CHAOS_CONCURRENCY: '2', CHAOS_PAGE_SIZE: '2' });
    const tokens = async () => (await admin.query('SELECT min(token) AS t FROM leasehold_jobs')).rows[0].t;
    while (Number(await tokens()) < 2 && Date.now() - held < 20_000) await sleep(100);
    assert.ok(Date.now() - held >= STALE_MS, 'B took the jobs over only once their leases were stale');
    proxy.release();

    const deadline = Date.now() + 30_000;
    let counts;
    while (Date.now() < deadline) {
      [counts] = await queue.counts();
      if (counts.succeeded === 2) break;
      await sleep(200);
    }
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
    console.log(`executions: ${runs.map((r) => `${r.ex} job ${r.job} token ${r.token}`).join(', ')}; overlaps ${overlapping.length}`);
    assert.equal(counts?.succeeded, 2, `both jobs succeed (${JSON.stringify(counts)})`);
    assert.deepEqual(overlapping, [], 'no two executions of a job overlap');
  } finally {
    for (const child of children) child.kill('SIGKILL');
    proxy.close();
    await queue.close().catch(() => undefined);
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
});
