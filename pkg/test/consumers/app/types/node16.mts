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
