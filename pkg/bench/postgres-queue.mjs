// Jobs per second of `leasehold/postgres` as full worker loops, beside the Rust `Worker`
// (also full loops) and graphile-worker, on one PostgreSQL database in one run: each round
// queues N no-op jobs for each contender in turn (each round starting with the next one), on
// a fresh schema after a CHECKPOINT, and times its worker from start until all N have
// succeeded (the handler counts its calls; the database is read only once all N ran).
// Prints one line per round and the medians (jobs/s, and the WAL bytes per job each wrote
// from its start until all N were done, by pg_current_wal_lsn); the figures the project watches are Node.js /
// Rust (target at least 0.8) and Node.js / graphile-worker (target above 1).
//
//   eval "$(scripts/pg-cluster.sh start)"
//   cargo build --release -p leasehold --features postgres --example worker_bench
//   scripts/build-pkg.sh
//   cd pkg && node bench/postgres-queue.mjs [--jobs 20000] [--rounds 3] [--concurrency 10] [--page 100]
//        [--graphile DIR]   # a folder where `npm install graphile-worker@0.17` ran (outside the repo)
//
// Environment: LEASEHOLD_TEST_PG_URL (the database), WORKER_BENCH (the Rust example's binary;
// default ../target/release/examples/worker_bench).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from 'leasehold/postgres';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = { jobs: 20_000, rounds: 3, concurrency: 10, page: 100, graphile: undefined };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '');
  if (!(key in args)) throw new Error(`unknown argument ${process.argv[i]} (see the header of this file)`);
  args[key] = key === 'graphile' ? process.argv[i + 1] : Number(process.argv[i + 1]);
}
const url = process.env.LEASEHOLD_TEST_PG_URL;
if (!url) throw new Error('LEASEHOLD_TEST_PG_URL is not set: eval "$(scripts/pg-cluster.sh start)"');
const rustBin = process.env.WORKER_BENCH ?? path.resolve(here, '../../target/release/examples/worker_bench');
const SCHEMA = 'bench_queue';
const QUEUE = 'bench';
const admin = new pg.Pool({ connectionString: url, max: 2 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** The server's WAL position, to count the bytes a contender's run wrote. */
const walAt = async () => (await admin.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
/** WAL bytes per job since `from`. */
const walPerJob = async (from) =>
  Number((await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS n', [from])).rows[0].n) / args.jobs;

/** A fresh schema with the queue's tables and N due jobs; answers a pool on it. */
async function freshLeasehold() {
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`);
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${SCHEMA}`, max: 12 });
  const queue = await connect(pool); // migrates
  await queue.close();
  await pool.query(
    `INSERT INTO leasehold_jobs (queue, payload, priority, run_at, max_attempts, created_at)
     SELECT $1, '{}'::jsonb, 0, t.now, 25, t.now
     FROM generate_series(1, $2), (SELECT CAST(floor(extract(epoch FROM now()) * 1000) AS bigint) AS now) t`,
    [QUEUE, args.jobs],
  );
  await admin.query('VACUUM ANALYZE');
  await admin.query('CHECKPOINT');
  return pool;
}

async function rust() {
  const pool = await freshLeasehold();
  await pool.end();
  const wal = await walAt();
  const out = spawnSync(rustBin, [`${url}&options[search_path]=${SCHEMA}`, QUEUE, String(args.jobs), String(args.concurrency), String(args.page)], {
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`worker_bench failed: ${out.stderr}`);
  return { rate: JSON.parse(out.stdout.trim().split('\n').pop()).jobsPerSecond, wal: await walPerJob(wal) };
}

async function node() {
  const pool = await freshLeasehold();
  const queue = await connect(pool);
  const performed = counter();
  const wal = await walAt();
  const started = performance.now();
  const working = queue.work(QUEUE, performed.count, { concurrency: args.concurrency, pageSize: args.page, pollMs: 20 });
  await performed.all;
  for (;;) {
    const counts = (await queue.counts()).find((c) => c.queue === QUEUE);
    if ((counts?.succeeded ?? 0) >= args.jobs) break;
    await sleep(5);
  }
  const seconds = (performance.now() - started) / 1000;
  const written = await walPerJob(wal);
  await working.dispose();
  await queue.close();
  await pool.end();
  return { rate: args.jobs / seconds, wal: written };
}

/**
 * The contenders' no-op handler, counting: `all` resolves when it has run N times. Each
 * contender is timed until its database says all N are done, read only from then on (a
 * count every few ms during the run would load the database the contenders share).
 */
function counter() {
  let n = 0;
  let resolve;
  const all = new Promise((r) => (resolve = r));
  return {
    all,
    count: () => {
      n += 1;
      if (n === args.jobs) resolve();
    },
  };
}

/** graphile-worker with a local queue of a page's size and batched completions, as its performance guide sets it up. */
async function graphile() {
  const require = createRequire(path.join(path.resolve(args.graphile), 'package.json'));
  const { run, runMigrations } = require('graphile-worker');
  await admin.query('DROP SCHEMA IF EXISTS graphile_worker CASCADE');
  const pool = new pg.Pool({ connectionString: url, max: 12 });
  // graphile-worker asks for error handlers on the pool and its clients (it warns without them).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  await runMigrations({ pgPool: pool, logger: quiet(require) });
  await pool.query(
    `SELECT graphile_worker.add_jobs(ARRAY(SELECT ('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec
       FROM generate_series(1, $1)))`,
    [args.jobs],
  );
  await admin.query('VACUUM ANALYZE');
  await admin.query('CHECKPOINT');
  const performed = counter();
  const wal = await walAt();
  const started = performance.now();
  const runner = await run({
    pgPool: pool,
    concurrency: args.concurrency,
    noHandleSignals: true,
    pollInterval: 20,
    taskList: { noop: async () => performed.count() },
    logger: quiet(require),
    preset: { worker: { localQueue: { size: args.page }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  await performed.all;
  for (;;) {
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
    if (rows[0].n === 0) break;
    await sleep(5);
  }
  const seconds = (performance.now() - started) / 1000;
  const written = await walPerJob(wal);
  await runner.stop();
  await pool.end();
  return { rate: args.jobs / seconds, wal: written };
}

function quiet(require) {
  const { Logger } = require('graphile-worker');
  return new Logger(() => () => undefined);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const contenders = [
  ['rust Worker', rust, existsSync(rustBin) ? undefined : `${rustBin} is missing (cargo build --release -p leasehold --features postgres --example worker_bench)`],
  ['leasehold/postgres', node, undefined],
  ['graphile-worker', graphile, args.graphile ? undefined : 'pass --graphile DIR (a folder where `npm install graphile-worker@0.17` ran)'],
];
console.log(`postgres-queue bench: ${args.jobs} no-op jobs per run, concurrency ${args.concurrency}, pages of ${args.page}, ${args.rounds} rounds`);
const figures = new Map(contenders.map(([name]) => [name, []]));
const walBytes = new Map(contenders.map(([name]) => [name, []]));
for (let round = 1; round <= args.rounds; round += 1) {
  const line = [];
  // Each round starts with the next contender (the machine's load drifts within a round).
  const order = contenders.map((_, i) => contenders[(i + round - 1) % contenders.length]);
  for (const [name, measure, missing] of order) {
    if (missing) continue;
    const { rate, wal } = await measure();
    figures.get(name).push(rate);
    walBytes.get(name).push(wal);
    line.push(`${name} ${Math.round(rate)}`);
  }
  console.log(`round ${round}: ${line.join(', ')} jobs/s`);
}
for (const [name, , missing] of contenders) {
  if (missing) console.log(`${name}: skipped, ${missing}`);
  else {
    console.log(
      `${name}: median ${Math.round(median(figures.get(name)))} jobs/s (${figures.get(name).map(Math.round).join(', ')}); ` +
        `WAL median ${Math.round(median(walBytes.get(name)))} bytes/job`,
    );
  }
}
const [r, n] = [figures.get('rust Worker'), figures.get('leasehold/postgres')];
if (r.length && n.length) {
  const ratios = r.map((x, i) => n[i] / x);
  console.log(`leasehold/postgres / rust Worker: median ${median(ratios).toFixed(2)} (rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')}; target 0.80)`);
}
const g = figures.get('graphile-worker');
if (g.length && n.length) {
  const ratios = n.map((x, i) => x / g[i]);
  console.log(`leasehold/postgres / graphile-worker: median ${(median(n) / median(g)).toFixed(2)} (rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')})`);
}
await admin.end();
