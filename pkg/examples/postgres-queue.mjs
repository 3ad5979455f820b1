// A durable job queue in PostgreSQL, worked by leasehold. Run as many of these
// processes as you like, on as many machines, against one database:
//
//   DATABASE_URL=postgres://user@host/db node postgres-queue.mjs
//
// Enqueue work from anywhere with
//   INSERT INTO jobs (payload) VALUES ('{"text": "hello"}'); NOTIFY jobs_queued;
//
// Each job is claimed under a lease: `lease_token` (a fencing token that grows at
// every claim) and `leased_until`. Heartbeats extend the lease while the work runs;
// a worker that dies stops renewing, its lease goes stale, and another worker
// reclaims the job. Every write that renews or settles a job names the token it
// holds, so a worker that lost its job changes nothing.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { createJobRunner, jobBackoff } from 'leasehold';

const STALE_AFTER_MS = 30_000;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 6 });

await pool.query(`
  CREATE TABLE IF NOT EXISTS jobs (
    id           bigserial   PRIMARY KEY,
    payload      jsonb       NOT NULL,
    state        text        NOT NULL DEFAULT 'queued',  -- queued | done
    lease_token  bigint      NOT NULL DEFAULT 0,
    leased_until timestamptz,
    attempts     integer     NOT NULL DEFAULT 0,
    result       text
  )`);

const runner = createJobRunner({
  name: 'jobs.digest',
  intervalMs: 5_000, // poll at least this often; NOTIFY wakes the loop sooner
  staleAfterMs: STALE_AFTER_MS, // heartbeats default to a third of it: every 10 s
  concurrency: 4,
  batchLimit: 100,
  backoff: jobBackoff(5_000), // a database that keeps failing gets room: 5 s doubling to 50 s

  // One claim: the oldest queued job nobody holds a live lease on. SKIP LOCKED
  // lets concurrent workers pass each other instead of queueing on one row.
  claim: async (at) => {
    const { rows } = await pool.query(
      `UPDATE jobs
          SET lease_token = lease_token + 1,
              leased_until = to_timestamp($1 / 1000.0) + make_interval(secs => $2 / 1000.0),
              attempts = attempts + 1
        WHERE id = (SELECT id FROM jobs
                     WHERE state = 'queued'
                       AND (leased_until IS NULL OR leased_until < to_timestamp($1 / 1000.0))
                     ORDER BY id
                     LIMIT 1
                     FOR UPDATE SKIP LOCKED)
      RETURNING id, payload, lease_token`,
      [at, STALE_AFTER_MS],
    );
    return rows[0] ?? null; // null: nothing to do, the pass ends
  },

  // Renews the lease if we still hold it. false: another worker reclaimed the job,
  // and the runner aborts `perform`'s signal.
  heartbeat: async (job, at) => {
    const { rowCount } = await pool.query(
      `UPDATE jobs SET leased_until = to_timestamp($3 / 1000.0) + make_interval(secs => $4 / 1000.0)
        WHERE id = $1 AND lease_token = $2 AND state = 'queued'`,
      [job.id, job.lease_token, at, STALE_AFTER_MS],
    );
    return rowCount === 1;
  },

  // The work itself, then the settling write, fenced by the lease token.
  perform: async (job, signal) => {
    const digest = createHash('sha256').update(String(job.payload.text)).digest('hex');
    signal.throwIfAborted(); // the claim was lost meanwhile: settle nothing
    const { rowCount } = await pool.query(
      `UPDATE jobs SET state = 'done', result = $3, leased_until = NULL
        WHERE id = $1 AND lease_token = $2`,
      [job.id, job.lease_token, digest],
    );
    if (rowCount === 0) throw new Error(`job ${job.id}: lease lost before it settled`);
  },

  logger: () => console,
  onEvent: (event) => {
    if (event.type === 'pass-end') console.log(`${event.name}: ${JSON.stringify(event.report)}`);
    if (event.type === 'claim-lost') console.warn(`${event.name}: item ${event.item} lost its claim`);
  },
});

// NOTIFY jobs_queued wakes the loop at once instead of at the next interval.
const listener = await pool.connect();
await listener.query('LISTEN jobs_queued');
listener.on('notification', () => runner.wake());

runner.start();
console.log('jobs.digest: working');

// The runner's timers never keep the process alive; the pool does. On a signal,
// finish the items in flight, then close the database connections.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await runner.dispose();
    listener.release();
    await pool.end();
    console.log('jobs.digest: stopped');
  });
}
