// A strict TypeScript user under moduleResolution bundler (a Vite or webpack app).
import { init, initSync, createJobRunner, createJobTraceSink, initTrace } from 'leasehold';
import * as auto from 'leasehold/auto';
// The esbuild recipe: the .wasm imported as a file (its URL), typed by esbuild-wasm.d.ts.
import wasmUrl from 'leasehold/leasehold_bg.wasm';

await init(fetch('/leasehold_bg.wasm'));
await init(wasmUrl);
initSync(new Uint8Array(0));
await initTrace();
const runner = createJobRunner({
  name: 'typed-bundler',
  intervalMs: 100,
  claim: () => null,
  perform: () => undefined,
  onEvent: createJobTraceSink({ capacity: 10 }),
});
void auto.createJobRunner;
void runner.tick();

// leasehold/indexeddb: the queue API, typed.
import { connect, QueueUnavailableError, type IndexedDbQueue, type WorkContext, type QueueCounts } from 'leasehold/indexeddb';

const queue: IndexedDbQueue = await connect({ name: 'typed', durability: 'strict' });
const { id, created } = await queue.enqueue('mail', { to: 'ada@example.com' }, { delayMs: 10, priority: -1, idempotencyKey: 'k' });
const working = queue.work<{ to: string }>('mail', async (payload, { signal, job }: WorkContext) => {
  signal.throwIfAborted();
  return { sent: payload.to, attempt: job.attempt };
}, { concurrency: 4, staleAfterMs: 10_000 });
const counts: QueueCounts[] = await queue.counts();
void [id, created, counts, QueueUnavailableError];
await working.dispose();
// @ts-expect-error connect needs a name
await connect({});

// leasehold/otel in a bundled app.
import { trace } from '@opentelemetry/api';
import { jobEventSpans } from 'leasehold/otel';

void createJobRunner({ name: 'traced', intervalMs: 100, claim: () => null, perform: () => undefined, onEvent: jobEventSpans({ tracer: trace.getTracer('app') }) });
