//! The network and the store: each request a worker sends meets its fate
//! (answered, late, failed, hung, cut off by a partition), lands on the
//! fenced store, and its reply travels back.

use super::host::Phase;
use super::queue::Ev;
use super::{evidence_code, World, NO_ITEM, NO_WORKER};
use crate::sim::check::Invariant;
use crate::sim::store::{Claimant, Claimed, Written};
use crate::sim::trace::What;
use leasehold_core::lease::EvidenceKind;
use leasehold_core::runner::ItemKey;
use leasehold_core::supervision::CallId;
use leasehold_core::Millis;

/// A request on its way to the store.
#[derive(Clone, Copy, Debug)]
pub(super) enum Req {
    Claim { at: Millis },
    Renew { key: ItemKey, call: CallId, item: u32, token: u64, at: Millis },
    Settle { key: ItemKey, item: u32, token: u64 },
    /// `key`: the runner's declined claim being handed back (settle phase).
    Release { item: u32, token: u64, key: Option<ItemKey> },
}

/// What happens to the reply of a request the store applied.
#[derive(Clone, Copy, Debug)]
pub(super) enum Fate {
    /// Answered after this many ms.
    Answer(u64),
    /// An error after this many ms (the write may have landed).
    Error(u64),
    /// No reply ever.
    Never,
}

/// A reply on its way back to a worker. `Err(())` is a failed call.
#[derive(Clone, Copy, Debug)]
pub(super) enum Rep {
    Claim { at: Millis, answer: Result<Claimed, ()> },
    Renew { key: ItemKey, call: CallId, item: u32, token: u64, at: Millis, sent: u64, answer: Result<bool, ()> },
    Settle { key: ItemKey, item: u32, token: u64, answer: Result<bool, ()> },
    Release { item: u32, token: u64, key: Option<ItemKey>, answer: Result<bool, ()> },
}

impl World {
    pub(super) fn send(&mut self, w: u8, req: Req) {
        let inc = self.workers[usize::from(w)].inc.as_ref().expect("a live worker sends").number;
        let f = self.cfg.faults;
        let calm = self.calm;
        let is_renew = matches!(req, Req::Renew { .. });
        let late_ok = f.late_claims || !matches!(req, Req::Claim { .. });
        let worker = &mut self.workers[usize::from(w)];
        let partition = if calm { None } else { worker.partition };
        let rng = &mut worker.calls;
        let d1 = rng.range(0, f.latency_max_ms);
        let d2 = rng.range(0, f.latency_max_ms);
        let now = self.now;
        let mut reach = d1;
        let failed = |time| (time, Ev::Reply { w, inc, rep: failed_reply(req) });
        let (arrive, direct): (Option<Fate>, Option<(u64, Ev)>) = if let Some(hang) = partition {
            if !hang {
                (None, Some(failed(now + d1 + d2)))
            } else if is_renew {
                (None, None)
            } else {
                let timeout = rng.range(1, f.hang_max_ms.max(1));
                (None, Some(failed(now + timeout)))
            }
        } else if calm {
            (Some(Fate::Answer(d2)), None)
        } else {
            let roll = rng.below(1000) as u32;
            let (fail, hang, late) = (f.call_fail_per_mille, f.call_hang_per_mille, f.call_late_per_mille);
            let slow = f.call_slow_per_mille;
            if roll < fail {
                if rng.chance(500) {
                    (Some(Fate::Error(d2)), None)
                } else {
                    (None, Some(failed(now + d1 + d2)))
                }
            } else if roll < fail + hang {
                let applied = rng.chance(500);
                let timeout = rng.range(1, f.hang_max_ms.max(1));
                let fate = if is_renew { Fate::Never } else { Fate::Error(timeout) };
                match (applied, is_renew) {
                    (true, _) => (Some(fate), None),
                    (false, true) => (None, None),
                    (false, false) => (None, Some(failed(now + timeout))),
                }
            } else if roll < fail + hang + late && late_ok {
                (Some(Fate::Answer(rng.range(d2, f.late_max_ms.max(d2)))), None)
            } else if roll < fail + hang + late + slow && late_ok {
                // Queued behind a lock or in a client pool: applied late
                // (a renewal may land after a takeover), then answered.
                reach = rng.range(d1, f.late_max_ms.max(d1));
                (Some(Fate::Answer(d2)), None)
            } else {
                (Some(Fate::Answer(d2)), None)
            }
        };
        if let Some(fate) = arrive {
            self.at(now + reach, Ev::Arrive { w, inc, req, fate, sent: now });
        }
        if let Some((time, ev)) = direct {
            self.at(time, ev);
        }
    }

    pub(super) fn arrive(&mut self, w: u8, inc: u32, req: Req, fate: Fate, sent: u64) {
        let rep = match req {
            Req::Claim { at } => {
                let claimant = self.owners[usize::from(w)][inc as usize];
                let uid = self.workers[usize::from(w)].uid;
                let dead_before = self.store.dead_lettered;
                // The items whose outcome this incarnation still settles (as
                // it sent the claim: a claim of a crashed one lands too).
                let worker = &self.workers[usize::from(w)];
                let settling: Vec<u32> = match worker.inc.as_ref().filter(|i| i.number == inc) {
                    Some(i) => i.held.iter().flatten().filter(|h| h.phase == Phase::Settling).map(|h| h.item).collect(),
                    None if worker.crashed_settling.0 == inc => worker.crashed_settling.1.clone(),
                    None => Vec::new(),
                };
                let mono = self.mono(w, inc);
                let watch = &mut self.watches[usize::from(w)][inc as usize];
                let claimed = self.store.claim(Claimant { owner: &claimant, uid, at, watch, mono }, &self.table, &settling);
                if self.store.dead_lettered != dead_before {
                    self.stats.dead_lettered = self.store.dead_lettered;
                    self.log(What::DeadLettered, NO_WORKER, NO_ITEM, u64::from(self.cfg.params.max_attempts), 0);
                }
                match claimed {
                    Claimed::Empty => self.log(What::ClaimEmpty, w, NO_ITEM, 0, 0),
                    Claimed::Item { item, token, stolen } => {
                        self.log(What::ClaimLanded, w, item, token, evidence_code(stolen.map(|s| s.1)));
                        self.claim_lands_on(w, claimant.nonce, item, stolen.map(|(owner, _)| (owner.worker, owner.nonce)));
                        if let Some((owner, kind)) = stolen {
                            self.stats.steals += 1;
                            let apart = self.anchor(w, inc) - self.anchor(owner.worker, owner.incarnation);
                            if apart.unsigned_abs() > self.spans.skew {
                                self.stats.takeovers_across_steps += 1;
                            }
                            let old_token = self.store.item(item).previous_token;
                            self.takeovers.push((item, old_token, kind));
                            let now = self.now;
                            for (_, _, held) in self.ended_now.iter_mut().filter(|(t, _, _)| *t == now) {
                                if held.item == item && held.token == old_token {
                                    held.taken = Some(kind);
                                }
                            }
                            if let Some(inc) = self.workers[usize::from(owner.worker)].inc.as_mut() {
                                if inc.number == owner.incarnation {
                                    for held in inc.held.iter_mut().flatten() {
                                        if held.item == item && held.token == old_token {
                                            held.taken = Some(kind);
                                        }
                                    }
                                }
                            }
                            if kind == EvidenceKind::SameHostPidDead && self.alive(owner.worker, owner.incarnation) {
                                self.violate(
                                    Invariant::PidEvidenceTrue,
                                    Some(item),
                                    vec![owner.worker, w],
                                    format!(
                                        "w{w} took the item over with same-host-pid-dead evidence, but its owner w{} (pid {}) is alive",
                                        owner.worker, owner.pid
                                    ),
                                );
                            }
                        }
                    }
                }
                Rep::Claim { at, answer: Ok(claimed) }
            }
            Req::Renew { key, call, item, token, at } => {
                let written = self.store.renew(item, token, at);
                self.fenced(w, item, token, written, What::RenewLanded);
                Rep::Renew { key, call, item, token, at, sent, answer: Ok(written.landed) }
            }
            Req::Settle { key, item, token } => {
                let written = self.store.settle(item, token);
                self.fenced(w, item, token, written, What::SettleLanded);
                if written.landed {
                    self.stats.settled += 1;
                    self.maybe_finish();
                    if self.store.item(item).settles > 1 {
                        self.violate(
                            Invariant::SettledExactlyOnce,
                            Some(item),
                            vec![w],
                            format!("a second settle landed (token {token})"),
                        );
                    }
                }
                Rep::Settle { key, item, token, answer: Ok(written.landed) }
            }
            Req::Release { item, token, key } => {
                let written = self.store.release(item, token);
                self.fenced(w, item, token, written, What::ReleaseLanded);
                Rep::Release { item, token, key, answer: Ok(written.landed) }
            }
        };
        match fate {
            Fate::Answer(delay) => self.at(self.now + delay, Ev::Reply { w, inc, rep }),
            Fate::Error(delay) => self.at(self.now + delay, Ev::Reply { w, inc, rep: failed_reply(req_of(rep)) }),
            Fate::Never => {}
        }
        self.after_store_change();
    }

    /// Once the faults stopped and the store is done, the reclaim probe
    /// comes next.
    pub(super) fn after_store_change(&mut self) {
        if self.store_done() && self.probe.is_none() && self.calm {
            self.schedule_probe();
        }
    }

    pub(super) fn fenced(&mut self, w: u8, item: u32, token: u64, written: Written, what: What) {
        self.log(what, w, item, token, u64::from(written.landed));
        if written.below_current {
            let current = self.store.item(item).token;
            self.violate(
                Invariant::FenceMonotonic,
                Some(item),
                vec![w],
                format!("the store landed a write with token {token} below the current token {current}"),
            );
        }
    }

    /// Every item enqueued and finished (settled, dead-lettered, or left
    /// cancelled by the operator), and no step of the operator's waits.
    pub(super) fn store_done(&self) -> bool {
        self.enqueued == self.cfg.workload.items && self.operator_pending == 0 && self.store.all_done()
    }

}

fn failed_reply(req: Req) -> Rep {
    match req {
        Req::Claim { at } => Rep::Claim { at, answer: Err(()) },
        Req::Renew { key, call, item, token, at } => Rep::Renew { key, call, item, token, at, sent: 0, answer: Err(()) },
        Req::Settle { key, item, token } => Rep::Settle { key, item, token, answer: Err(()) },
        Req::Release { item, token, key } => Rep::Release { item, token, key, answer: Err(()) },
    }
}

fn req_of(rep: Rep) -> Req {
    match rep {
        Rep::Claim { at, .. } => Req::Claim { at },
        Rep::Renew { key, call, item, token, at, .. } => Req::Renew { key, call, item, token, at },
        Rep::Settle { key, item, token, .. } => Req::Settle { key, item, token },
        Rep::Release { item, token, key, .. } => Req::Release { item, token, key },
    }
}