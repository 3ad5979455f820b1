// Compiled by types.test.mjs with `tsc --noEmit` (module nodenext): the CommonJS view.
import leasehold = require('leasehold');

const runner = leasehold.createJobRunner({
  name: 'typed-cjs',
  intervalMs: 100,
  staleAfterMs: 3000,
  claim: () => null,
  perform: () => undefined,
});
runner.start();
const lost: leasehold.JobClaimLostError = new leasehold.JobClaimLostError('typed-cjs');
void lost.code;
void leasehold.jobBackoff(5).maxMs;
const sink = leasehold.createJobTraceSink();
void leasehold.resumeJobTrace(sink.save()).spans().length;

// Without a heartbeat, staleAfterMs may be left out (the runtime does not need it) ...
leasehold.createJobRunner({ name: 'no-heartbeat', intervalMs: 100, claim: () => null, perform: () => undefined });
// ... with one it is required.
// @ts-expect-error staleAfterMs is required with a heartbeat
leasehold.createJobRunner({ name: 'hb', intervalMs: 100, claim: () => 1, perform: () => undefined, heartbeat: () => true });
// The CommonJS view has no default export (require gives the namespace itself).
// @ts-expect-error no `default` in the CommonJS types
void leasehold.default;
void leasehold.init().then(() => leasehold.initTrace());
