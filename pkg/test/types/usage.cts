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
void leasehold.default.jobBackoff(5).maxMs;
const sink = leasehold.createJobTraceSink();
void leasehold.resumeJobTrace(sink.save()).spans().length;
