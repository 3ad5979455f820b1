// A strict TypeScript user under module node16: the ES module view.
import leasehold, { createJobRunner, init, type JobRunner, type WasmSource } from 'leasehold';

interface Row {
  readonly id: number;
}
const runner: JobRunner = createJobRunner<Row>({
  name: 'typed',
  intervalMs: 100,
  claim: async () => ({ id: 1 }),
  perform: async (row, signal) => {
    signal.throwIfAborted();
    void row.id;
  },
});
const source: WasmSource = new URL('https://cdn.example/leasehold_bg.wasm');
await init(source);
await leasehold.initTrace();
runner.start();

// leasehold/indexeddb from Node.js (with an IndexedDB such as fake-indexeddb's).
import { connect, type JobRecord } from 'leasehold/indexeddb';

const queue = await connect({ name: 'typed-node' });
const record: JobRecord | null = await queue.job(1);
void record?.attemptsLog;
await queue.close();

// leasehold/otel: the runner's events as spans of an @opentelemetry/api tracer.
import { trace } from '@opentelemetry/api';
import { jobEventSpans, LEASE_LOST } from 'leasehold/otel';

createJobRunner({ name: 'traced', intervalMs: 100, claim: () => null, perform: () => {}, onEvent: jobEventSpans({ tracer: trace.getTracer('typed') }) });
const lost: 'lease_lost' = LEASE_LOST;
void lost;
// @ts-expect-error a tracer is required
jobEventSpans({});

// The job queue of `leasehold/postgres` and `leasehold/pglite` (Node.js entries).
import { connect as connectPostgres, LeaseholdSchemaError, type Queue } from 'leasehold/postgres';
import pglite from 'leasehold/pglite';

declare const pool: { query(): unknown; connect(): unknown; end(): unknown; readonly totalCount: number; readonly idleCount: number };
const pgQueue: Queue = await connectPostgres(pool, { migrate: true });
const { id, created } = await pgQueue.enqueue('mail', { to: 'ada' }, { delayMs: 1000, idempotencyKey: 'ada' });
const working = pgQueue.work<{ to: string }>(
  'mail',
  async (payload, { signal, job }) => {
    signal.throwIfAborted();
    return { length: payload.to.length, attempt: job.attempt };
  },
  { concurrency: 4, staleAfterMs: 30_000 },
);
await working.dispose();
void [id, created, (await pgQueue.counts())[0]?.succeeded, new LeaseholdSchemaError('x').name];
const lite = await pglite.connect({ dataDir: '/tmp/queue' });
// @ts-expect-error delay is not an option (delayMs is)
await lite.enqueue('mail', 1, { delay: 5 });
await lite.close();
