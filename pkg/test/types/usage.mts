// Compiled by types.test.mjs with `tsc --noEmit` (module nodenext): the ES module view.
import {
  createJobRunner,
  jobBackoff,
  JobClaimLostError,
  JOB_CLAIM_LOST,
  DEFAULT_JOB_BATCH_LIMIT,
  type JobEvent,
  type JobPassReport,
  type JobRunner,
} from 'leasehold';

interface Row {
  id: number;
}

const runner: JobRunner = createJobRunner<Row>({
  name: 'typed',
  intervalMs: 100,
  staleAfterMs: 3000,
  heartbeatSkewMs: 200,
  claim: async (at: number) => (at > 0 ? { id: at } : null),
  perform: async (row, signal) => {
    signal.throwIfAborted();
    row.id.toFixed();
  },
  heartbeat: async (row, at) => row.id < at,
  backoff: jobBackoff(100),
  onEvent: (event: JobEvent) => {
    if (event.type === 'performed') event.durationMs.toFixed();
    if (event.type === 'claim-lost' && event.lapsed) event.unconfirmedMs?.toFixed();
  },
});
const report: Promise<JobPassReport> = runner.tick();
void report;
const reason = new JobClaimLostError('typed', true);
const code: 'CLAIM_LOST' = reason.code;
const same: typeof JOB_CLAIM_LOST = code;
const limit: number = DEFAULT_JOB_BATCH_LIMIT;
void [same, limit, reason.lapsed, reason.job];

// @ts-expect-error intervalMs is required
createJobRunner({ name: 'x', staleAfterMs: 1, claim: async () => null, perform: async () => {} });
// @ts-expect-error perform receives the claimed row
createJobRunner<Row>({ name: 'x', intervalMs: 1, staleAfterMs: 1, claim: async () => null, perform: async (row: string) => {} });

// The trace ring.
import { createJobTraceSink, resumeJobTrace, type JobTraceSink, type JobTraceSpan, type SavedJobTrace } from 'leasehold';
const sink: JobTraceSink = createJobTraceSink({ capacity: 50, onSpan: (span: JobTraceSpan) => span.items[0]?.durationMs.toFixed() });
createJobRunner<Row>({ name: 'traced', intervalMs: 1, staleAfterMs: 1, claim: async () => null, perform: async () => {}, onEvent: sink });
const saved: SavedJobTrace = sink.save();
const outcome: 'performed' | 'failed' | 'claim-lost' | 'unsettled' | undefined = sink.spans()[0]?.items[0]?.outcome;
void [outcome, sink.capacity, sink.dropped, saved.version];
resumeJobTrace(JSON.stringify(sink), { capacity: 10 }).dispose();
resumeJobTrace(saved);
// @ts-expect-error capacity is a number
createJobTraceSink({ capacity: '10' });
// @ts-expect-error saved is a saved trace or its text
resumeJobTrace(42);

// Loading: init takes a URL, a Response, bytes, a compiled module or a promise of one.
import leasehold, { init, initSync, initTrace, type WasmSource } from 'leasehold';
await init(new URL('https://cdn.example/leasehold_bg.wasm'));
await init(fetch('/leasehold_bg.wasm'));
await initTrace(new Uint8Array(8));
initSync(new WebAssembly.Module(new Uint8Array(8)));
const source: WasmSource = '/leasehold_bg.wasm';
await leasehold.init(source);
// @ts-expect-error initSync needs the bytes or a module
initSync();
// Without a heartbeat, staleAfterMs may be left out; with one it is required.
createJobRunner({ name: 'no-heartbeat', intervalMs: 100, claim: () => null, perform: () => undefined });
// @ts-expect-error staleAfterMs is required with a heartbeat
createJobRunner({ name: 'hb', intervalMs: 100, claim: () => 1, perform: () => undefined, heartbeat: () => true });
