//! A worker's host: what it believes it holds, how it answers the
//! replies and finished work it hears of, and how it executes its
//! runner's actions and arms the runner's one timer.

use super::network::{Rep, Req};
use super::queue::Ev;
use super::{answer_code, evidence_code, key_eq, World, EPOCH, NO_ITEM};
use crate::sim::check::{self, Invariant, Stall};
use crate::sim::config::Mutation;
use crate::sim::exit::ExecId;
use crate::sim::rng::Rng;
use crate::sim::store::{Claimed, Owner};
use crate::sim::trace::What;
use leasehold_core::lease::EvidenceKind;
use leasehold_core::runner::{Action, ItemKey, Runner, SettleAnswer};
use leasehold_core::supervision::CallId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Working,
    Settling,
}

/// One item a worker believes it owns.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    /// The incarnation that holds it.
    pub(super) inc: u32,
    pub(super) key: ItemKey,
    pub(super) item: u32,
    pub(super) token: u64,
    /// `T`: the last stamp the store confirmed and the worker heard of.
    pub(super) stamp: u64,
    /// Its incarnation's anchor (see `World::anchors`): `stamp` less it is
    /// what the checks compare with real time.
    pub(super) anchor: i64,
    /// Every renewal so far was confirmed and heard of within `G`.
    pub(super) prompt: bool,
    /// The renewal in flight: its call and real send time.
    pub(super) inflight: Option<(CallId, u64)>,
    /// A renewal answered `false` reached the worker while its runner still
    /// supervised the lease.
    pub(super) lost_seen: bool,
    /// The runner's supervision lapsed after the work had finished (its
    /// worker was paused): the outcome is kept and its settle's fence
    /// decides; later renewal answers are no longer the runner's to act on.
    pub(super) lapsed: bool,
    /// How the store took this token's lease over, if it did.
    pub(super) taken: Option<EvidenceKind>,
    pub(super) phase: Phase,
    pub(super) work_ms: u64,
    pub(super) work_fails: bool,
    /// Its execution, once performed.
    pub(super) exec: Option<ExecId>,
}

impl Held {
    /// `T − A`: its stamp on a clock that reads real time plus its offset
    /// in the band, so within `K` after the renewal's send time, however far
    /// its incarnation's clock was anchored from real time.
    pub(super) fn base_stamp(&self) -> u64 {
        self.stamp.saturating_add_signed(-self.anchor)
    }
}

pub(super) struct Incarnation {
    pub(super) number: u32,
    pub(super) owner: Owner,
    pub(super) runner: Runner<()>,
    pub(super) held: Vec<Option<Held>>,
    /// Claims the runner declined (heard too late), handed back by key:
    /// item and token.
    pub(super) declined: Vec<(ItemKey, u32, u64)>,
    /// Real time of the armed timer.
    pub(super) timer: Option<u64>,
    /// Real time the armed timer was due before a throttle rounded it up
    /// (while throttled, the first due time it missed).
    pub(super) due: u64,
}

pub(super) struct Worker {
    pub(super) host: u8,
    pub(super) uid: u8,
    pub(super) offset: u64,
    pub(super) inc: Option<Incarnation>,
    pub(super) incarnations: u32,
    pub(super) paused: bool,
    pub(super) throttle: Option<u64>,
    /// `Some(true)`: calls hang; `Some(false)`: calls fail.
    pub(super) partition: Option<bool>,
    pub(super) stall_end: u64,
    /// When its host last ran the runner's timer later than it was due
    /// because the worker was stalled (real ms; 0: never).
    pub(super) late_timer: u64,
    pub(super) deferred: Vec<Ev>,
    /// The items its last crashed incarnation was settling (number, items):
    /// a claim it sent before it died still excludes them when it lands.
    pub(super) crashed_settling: (u32, Vec<u32>),
    pub(super) calls: Rng,
    pub(super) work: Rng,
    pub(super) faults: Rng,
}

impl Worker {
    pub(super) fn stall(&self) -> Stall {
        Stall { now: self.paused || self.throttle.is_some(), last_end: self.stall_end }
    }
}


impl World {
    pub(super) fn reply(&mut self, w: u8, rep: Rep) {
        let now = self.now;
        let local = self.local(w);
        let mutation = self.cfg.mutation;
        let prompt = self.prompt;
        match rep {
            Rep::Claim { answer: Ok(Claimed::Empty), .. } => self.inc_mut(w).runner.claim_empty(local),
            Rep::Claim { answer: Err(()), .. } => {
                self.log(What::ClaimFailed, w, NO_ITEM, 0, 0);
                self.inc_mut(w).runner.claim_failed(local, ());
            }
            Rep::Claim { at, answer: Ok(Claimed::Item { item, token, stolen }) } => {
                let unconfirmed = local.since(at);
                let Some(key) = self.inc_mut(w).runner.claim_found(local) else {
                    // Declined and no worker left to hand it back: its
                    // lease goes stale for a peer.
                    self.log(What::ClaimDeclined, w, item, token, unconfirmed);
                    self.stats.claims_declined += 1;
                    return;
                };
                if !check::claim_heard_in_time(self.spans, at.0, local.0) {
                    // Heard past the write tolerance: the runner must hand
                    // it back (`Action::Release`), never perform it.
                    self.log(What::ClaimDeclined, w, item, token, unconfirmed);
                    self.stats.claims_declined += 1;
                    self.inc_mut(w).declined.push((key, item, token));
                    return;
                }
                let worker = &mut self.workers[usize::from(w)];
                let long = worker.work.chance(self.cfg.workload.long_per_mille);
                let work_ms = if long {
                    worker.work.range(self.cfg.workload.work_short_max_ms, self.cfg.workload.work_long_max_ms)
                } else {
                    worker.work.range(1, self.cfg.workload.work_short_max_ms)
                };
                let mut work_fails = worker.work.chance(self.cfg.workload.work_fail_per_mille);
                let mut work_ms = work_ms;
                if Some(item) == self.probe {
                    work_fails = false;
                    if self.probe_owner.is_none() {
                        // The probe's first owner never finishes: it crashes holding the item.
                        work_ms = u64::MAX / 4;
                        let inc = worker.inc.as_ref().expect("alive").number;
                        self.probe_owner = Some((w, inc));
                        let hold = self.rng.range(0, 3 * self.cfg.params.heartbeat_every_ms);
                        self.at(now + hold, Ev::ProbeCrash { w, inc, item });
                    }
                }
                let evidence = stolen.map(|s| s.1);
                let inc = self.inc_mut(w).number;
                let anchor = self.anchor(w, inc);
                let held = Held {
                    inc,
                    key,
                    item,
                    token,
                    // The claim's `at`: the lease's first stamp, where the
                    // runner's supervision starts from.
                    stamp: at.0,
                    anchor,
                    // Renewing from a claim heard within `W` (the only
                    // kind performed): its own renewals decide from here.
                    prompt: true,
                    inflight: None,
                    lost_seen: false,
                    lapsed: false,
                    // A claim heard late may have been taken over already.
                    taken: self.takeovers.iter().find(|t| t.0 == item && t.1 == token).map(|t| t.2),
                    phase: Phase::Working,
                    work_ms,
                    work_fails,
                    exec: None,
                };
                self.inc_mut(w).held[usize::from(key.slot)] = Some(held);
                self.log(What::ClaimHeard, w, item, token, evidence_code(evidence));
                self.belief_starts(w, held);
            }
            Rep::Renew { key, call, item, token, at, sent, answer } => {
                self.log(What::RenewHeard, w, item, token, answer_code(answer));
                let mut renewed = None;
                if let Some(held) = self.held_mut(w, key) {
                    if held.inflight.is_some_and(|(c, _)| c == call) {
                        held.inflight = None;
                        let quick = prompt.is_some_and(|g| now - sent <= g);
                        match answer {
                            Ok(true) => {
                                held.stamp = held.stamp.max(at.0);
                                held.prompt &= quick;
                                renewed = held.exec.map(|exec| (exec, held.stamp));
                            }
                            Ok(false) => {
                                // After a lapse the runner's supervision has
                                // ended and ignores the answer; the settle's
                                // fence decides (see the core's settle phase).
                                held.lost_seen |= !held.lapsed;
                                held.prompt = false;
                            }
                            Err(()) => held.prompt = false,
                        }
                    }
                }
                if let Some((exec, stamp)) = renewed {
                    self.guard_renewed(w, exec, stamp);
                }
                let told = match answer {
                    Ok(false) if mutation == Mutation::FenceIgnored => Ok(true),
                    other => other,
                };
                if !(told == Ok(true) && mutation == Mutation::ConfirmationDropped) {
                    self.inc_mut(w).runner.renewal_answered(local, key, call, told);
                }
            }
            Rep::Settle { key, item, token, answer } => {
                self.log(What::SettleHeard, w, item, token, answer_code(answer));
                let settling = self.held_mut(w, key).is_some_and(|h| h.phase == Phase::Settling && h.token == token);
                if settling {
                    let answer = match answer {
                        Ok(true) => SettleAnswer::Landed,
                        Ok(false) => SettleAnswer::FenceRefused,
                        // The store did not answer: asked again later,
                        // unless the host drops the outcome (the mutation:
                        // what hosts did before the settle phase).
                        Err(()) if mutation == Mutation::SettleDropped => SettleAnswer::FenceRefused,
                        Err(()) => SettleAnswer::Unavailable(()),
                    };
                    if answer != SettleAnswer::Unavailable(()) {
                        self.end_belief(w, key);
                        self.log(What::ItemSettled, w, item, token, u64::from(answer == SettleAnswer::Landed));
                        if mutation == Mutation::SettleDropped && answer == SettleAnswer::FenceRefused {
                            self.release(w, item, token);
                        }
                    }
                    self.inc_mut(w).runner.settle_answered(local, key, answer);
                }
            }
            Rep::Release { key: Some(key), answer, .. } => {
                // A declined claim handed back: the worker is free again.
                self.inc_mut(w).declined.retain(|d| !key_eq(d.0, key));
                self.inc_mut(w).runner.release_answered(local, key, answer.map(drop));
            }
            Rep::Release { item, token, answer, key: None } => {
                if answer.is_err() {
                    let inc = self.inc_mut(w).number;
                    self.at(now + self.cfg.params.heartbeat_every_ms, Ev::ReleaseRetry { w, inc, item, token });
                }
            }
        }
    }

    pub(super) fn work_done(&mut self, w: u8, key: ItemKey) {
        let local = self.local(w);
        let Some(held) = self.held_mut(w, key).copied() else { return };
        if held.phase != Phase::Working {
            return;
        }
        self.log(What::WorkDone, w, held.item, held.token, u64::from(held.work_fails));
        if held.work_fails {
            self.end_belief(w, key);
            self.log(What::ItemSettled, w, held.item, held.token, 0);
            self.inc_mut(w).runner.item_settled(local, key, Err(()));
            self.release(w, held.item, held.token);
            return;
        }
        if held.lost_seen {
            self.violate(
                Invariant::NoSettleAfterLost,
                Some(held.item),
                vec![w],
                format!("w{w} sends a settle for token {} after a renewal answered false", held.token),
            );
        }
        // The outcome is reached: the runner asks for its settle
        // (`Action::Settle`) until the store answers.
        self.held_mut(w, key).expect("held").phase = Phase::Settling;
        self.inc_mut(w).runner.outcome_reached(local, key, Ok(()));
    }

    pub(super) fn release(&mut self, w: u8, item: u32, token: u64) {
        self.log(What::ReleaseSent, w, item, token, 0);
        self.send(w, Req::Release { item, token, key: None });
    }

    pub(super) fn inc_mut(&mut self, w: u8) -> &mut Incarnation {
        self.workers[usize::from(w)].inc.as_mut().expect("a live incarnation")
    }

    pub(super) fn held_mut(&mut self, w: u8, key: ItemKey) -> Option<&mut Held> {
        let inc = self.workers[usize::from(w)].inc.as_mut()?;
        inc.held.get_mut(usize::from(key.slot))?.as_mut().filter(|h| key_eq(h.key, key))
    }

    /// Executes the runner's actions until it has none, then arms its timer.
    pub(super) fn drive(&mut self, w: u8) {
        loop {
            let Some(inc) = self.workers[usize::from(w)].inc.as_mut() else { return };
            let Some(action) = inc.runner.poll_action() else { break };
            match action {
                Action::Claim { at } => {
                    self.log(What::ClaimSent, w, NO_ITEM, at.0, 0);
                    self.send(w, Req::Claim { at });
                }
                Action::Perform { key } => {
                    let now = self.now;
                    let inc_number = inc.number;
                    if let Some(&(_, item, token)) = inc.declined.iter().find(|d| key_eq(d.0, key)) {
                        self.violate(
                            Invariant::LateClaimNotPerformed,
                            Some(item),
                            vec![w],
                            format!("w{w} performs token {token} although its claim was heard past its write tolerance"),
                        );
                    }
                    if let Some(held) = self.held_mut(w, key).copied() {
                        self.log(What::Perform, w, held.item, held.token, held.work_ms);
                        let exec = self.execution_starts(w, inc_number, held.item, held.token, held.stamp, held.work_fails);
                        self.held_mut(w, key).expect("held").exec = Some(exec);
                        self.at(now.saturating_add(held.work_ms), Ev::WorkDone { w, inc: inc_number, key, exec });
                    }
                }
                Action::Renew { key, call, at } => {
                    let now = self.now;
                    if let Some(held) = self.held_mut(w, key) {
                        held.inflight = Some((call, now));
                        let (item, token) = (held.item, held.token);
                        self.log(What::RenewSent, w, item, token, at.0);
                        self.send(w, Req::Renew { key, call, item, token, at });
                    }
                }
                Action::Abort { key, lapsed } => self.abort(w, key, lapsed),
                Action::Settle { key } => {
                    if let Some(held) = self.held_mut(w, key).copied().filter(|h| h.phase == Phase::Settling) {
                        self.log(What::SettleSent, w, held.item, held.token, 0);
                        self.send(w, Req::Settle { key, item: held.item, token: held.token });
                    }
                }
                Action::Release { key } => {
                    let inc = self.inc_mut(w);
                    if let Some(&(_, item, token)) = inc.declined.iter().find(|d| key_eq(d.0, key)) {
                        self.log(What::ReleaseSent, w, item, token, 0);
                        self.send(w, Req::Release { item, token, key: Some(key) });
                    }
                }
                Action::Drop { .. } | Action::Log { .. } | Action::Emit(_) | Action::PassEnded { .. } => {}
            }
        }
        self.arm(w);
    }

    /// The runner aborted an item: its perform observes the signal and
    /// raises at once, while its work takes up to the exit grace to end; a
    /// lapsed lease is given back once the work has ended.
    pub(super) fn abort(&mut self, w: u8, key: ItemKey, lapsed: bool) {
        let now = self.now;
        let local = self.local(w);
        let Some(held) = self.held_mut(w, key).copied() else { return };
        if lapsed && held.exec.is_some_and(|e| self.execs.get(e).finished) {
            // The work finished while its worker could not hear of it (it
            // was paused): an outcome reached, settled once the host hears
            // of it (its WorkDone waits), whatever the lapse says.
            self.log(What::Abort, w, held.item, held.token, 1);
            self.held_mut(w, key).expect("held").lapsed = true;
            return;
        }
        self.log(What::Abort, w, held.item, held.token, u64::from(lapsed));
        if lapsed {
            self.stats.lapses += 1;
        } else {
            self.stats.losses += 1;
        }
        let young = held.inflight.is_none_or(|(_, sent)| self.prompt.is_some_and(|g| now - sent <= g));
        let on_time = check::timers_on_time(self.spans, held.base_stamp(), self.workers[usize::from(w)].late_timer);
        if held.prompt && young && on_time && self.prompt.is_some() {
            self.violate(
                Invariant::RenewingOwnerNotInterrupted,
                Some(held.item),
                vec![w],
                format!(
                    "w{w} was interrupted ({}) on token {} although every renewal was confirmed within {}ms and its timers ran on time",
                    if lapsed { "lapsed" } else { "lost" },
                    held.token,
                    self.prompt.unwrap_or(0)
                ),
            );
        }
        // The work gets SIGTERM, then SIGKILL by the grace.
        let latency = self.exit_latency();
        if let Some(exec) = held.exec {
            self.execs.stop(exec, now, latency);
        }
        self.end_belief(w, key);
        self.log(What::ItemSettled, w, held.item, held.token, 0);
        self.inc_mut(w).runner.item_settled(local, key, Err(()));
        if lapsed && latency == 0 {
            self.release(w, held.item, held.token);
        } else if lapsed {
            // Given back once the work has ended, not while it still runs.
            let inc = self.inc_mut(w).number;
            self.at(now + latency, Ev::ReleaseRetry { w, inc, item: held.item, token: held.token });
        }
    }

    pub(super) fn arm(&mut self, w: u8) {
        let now = self.now;
        let local = self.local(w).0;
        let worker = &mut self.workers[usize::from(w)];
        if worker.paused {
            return;
        }
        let throttle = worker.throttle;
        let Some(inc) = worker.inc.as_mut() else { return };
        let Some(deadline) = inc.runner.poll_timeout() else {
            inc.timer = None;
            return;
        };
        let mut real = now + deadline.0.saturating_sub(local);
        // A throttled host keeps the first due time it missed, so the
        // timer counts as late when it finally runs.
        let missed = throttle.is_some() && inc.timer.is_some() && inc.due < now;
        if !missed {
            inc.due = real;
        }
        if let Some(period) = throttle {
            real = EPOCH + (real - EPOCH).div_ceil(period) * period;
        }
        if inc.timer != Some(real) {
            inc.timer = Some(real);
            let number = inc.number;
            self.at(real, Ev::Timer { w, inc: number });
        }
    }

}
