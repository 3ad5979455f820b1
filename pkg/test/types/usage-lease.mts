// Compiled by types.test.mjs with `tsc --noEmit` (module nodenext): the run-lease API, ES module view.
import {
  heartbeatLoop,
  runSupervised,
  leaseLiveness,
  sameHostIncarnation,
  leasePolicy,
  LeaseLostError,
  LEASE_LOST,
  type HeartbeatLoop,
  type LeaseEnd,
  type LeaseStore,
  type LivenessCheck,
  type OwnerId,
  type Supervised,
} from 'leasehold';

const owner: OwnerId = { hostId: 'host-a', pid: 1, nonce: 'n' };
const store: LeaseStore = {
  heartbeat: async (runId: string, who: OwnerId, nowMs: number) => (runId && who.hostId && nowMs > 0 ? 'Updated' : 'LostMissing'),
  reconfirm: async () => ({ _tag: 'Updated' }),
};
const lease: HeartbeatLoop = heartbeatLoop({
  runId: 'run-1',
  owner,
  store,
  policy: { heartbeatIntervalMs: 500, staleAfterMs: 4000 },
  onReconfirm: async (unconfirmedMs) => unconfirmedMs.toFixed(),
  onLapse: (unconfirmedMs) => void unconfirmedMs,
  logger: { warn: (message: string) => void message, error: () => {} },
  now: () => Date.now(),
});
lease.signal.throwIfAborted();
void lease.ended.then((end: LeaseEnd) => {
  if (end.type === 'lost') void end.at.toFixed();
  if (end.type === 'lapsed') void end.unconfirmedMs.toFixed();
});
lease.stop();

const result: Promise<Supervised<number>> = runSupervised(async (signal) => (signal.aborted ? 0 : 1), { runId: 'r', owner, store });
void result.then((r) => (r.type === 'finished' ? r.value.toFixed() : r.type));

const check: LivenessCheck = leaseLiveness(15_000);
const alive: boolean = check(owner, { claimant: owner, heartbeatAtMs: null, nowMs: 1 });
const same: boolean = sameHostIncarnation(owner, { hostId: 'host-b' });
const reason = new LeaseLostError('run-1', { type: 'lapsed', unconfirmedMs: 13_000 });
const code: typeof LEASE_LOST = reason.code;
void [alive, same, code, reason.lapsed, leasePolicy().warnings.length, leasePolicy({ staleAfterMs: 20_000 }).staleAfterMs];

// @ts-expect-error the store needs reconfirm too
heartbeatLoop({ runId: 'r', owner, store: { heartbeat: async () => 'Updated' } });
// @ts-expect-error runId is a string
heartbeatLoop({ runId: 1, owner, store });
// @ts-expect-error policy fields are numbers
leasePolicy({ staleAfterMs: '15s' });
