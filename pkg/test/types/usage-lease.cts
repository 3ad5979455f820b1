// Compiled by types.test.mjs with `tsc --noEmit` (module nodenext): the run-lease API, CommonJS view.
import leasehold = require('leasehold');

const owner: leasehold.OwnerId = { hostId: 'h', pid: 2, nonce: 'n' };
const lease = leasehold.heartbeatLoop({
  runId: 'run-cjs',
  owner,
  store: { heartbeat: () => 'Updated', reconfirm: () => 'Updated' },
});
lease.stop();
void leasehold.leaseLiveness()(owner, { claimant: owner, heartbeatAtMs: 1, nowMs: 2 });
void new leasehold.LeaseLostError('run-cjs', { type: 'lost', outcome: 'LostToNewerToken', at: 1 }).outcome;
