//! The world's side of [`crate::sim::exit`]: each perform starts an
//! execution that its worker's stalls do not stop; aborts stop it within
//! the exit grace, a crash ends it at once, and its guard stops it once the
//! exit deadline passes unmoved. `executions-exclusive` is checked whenever
//! one starts.

use super::queue::Ev;
use super::{World, EPOCH};
use crate::sim::check::Invariant;
use crate::sim::config::Mutation;
use crate::sim::exit::ExecId;
use crate::sim::trace::What;
use leasehold_core::Millis;

impl World {
    /// Real ms at which the guard of work whose last confirmed stamp is
    /// `stamp` (`w`'s clock) stops it, unless a renewal moves it: the
    /// core's exit deadline (`T + W + I + G`, the instant the work must have
    /// ended by) less the grace `G` the work takes to end, converted from
    /// `w`'s clock.
    pub(super) fn guard_deadline(&self, w: u8, stamp: u64) -> u64 {
        let policy = self.config.lease.expect("heartbeat configured");
        let stop_at = policy.exit_deadline(Millis(stamp)).0.saturating_sub(policy.exit_grace_ms);
        self.now + stop_at.saturating_sub(self.local(w).0)
    }

    /// How long a stopped execution takes to end: drawn in `[0, G]`, the
    /// runner's exit grace.
    pub(super) fn exit_latency(&mut self) -> u64 {
        let grace = self.config.lease.map_or(0, |lease| lease.exit_grace_ms);
        if grace == 0 { 0 } else { self.exit_rng.range(0, grace) }
    }

    /// `w` performs `item` under `token` (claimed with stamp `stamp`, work
    /// that `fails` or not): an execution starts, checked against every
    /// other execution of the item, and its guard is armed.
    pub(super) fn execution_starts(&mut self, w: u8, inc: u32, item: u32, token: u64, stamp: u64, fails: bool) -> ExecId {
        let deadline = self.guard_deadline(w, stamp);
        let (id, overlapped) = self.execs.start(item, w, inc, token, self.now, deadline, fails);
        if let Some(other) = overlapped {
            let detail = format!(
                "w{w} starts token {token} while the execution of token {} by w{} (started t={}) still runs{}",
                other.token,
                other.worker,
                other.start - EPOCH,
                match other.end {
                    Some(end) => format!(" until t={}", end - EPOCH),
                    None => String::new(),
                }
            );
            self.violate(Invariant::ExecutionsExclusive, Some(item), vec![other.worker, w], detail);
        }
        self.at(deadline, Ev::GuardCheck { exec: id, deadline });
        id
    }

    /// A confirmed renewal stamped `stamp` reached `w`: the guard of `exec`
    /// gets the later deadline.
    pub(super) fn guard_renewed(&mut self, w: u8, exec: ExecId, stamp: u64) {
        let deadline = self.guard_deadline(w, stamp);
        if deadline > self.execs.get(exec).deadline {
            self.execs.move_deadline(exec, deadline);
            self.at(deadline, Ev::GuardCheck { exec, deadline });
        }
    }

    /// A claim by `claimant` landed on `item`, under a new token; `taken`:
    /// from whom, when the item was running. Finished work is kept: when the
    /// token before finished its work with a result to keep, and nobody took
    /// the lease over since (the item was given back, or its own worker
    /// claims it again), its fence still held and its settle was dropped:
    /// `finished-work-kept` is broken.
    pub(super) fn claim_lands_on(&mut self, claimant: u8, nonce: u64, item: u32, taken: Option<(u8, u64)>) {
        let previous = self.store.item(item).previous_token;
        let Some(done) = self.execs.succeeded(item, previous).copied() else { return };
        let by_a_peer = taken.is_some_and(|(_, owner_nonce)| owner_nonce != nonce);
        if by_a_peer {
            return;
        }
        let how = if taken.is_some() { "takes over its own stale lease" } else { "claims it again" };
        let detail = format!(
            "w{claimant} {how} although the work of token {previous} by w{} finished at t={} and no one took its lease over: its settle was dropped",
            done.worker,
            done.end.unwrap_or(0).saturating_sub(EPOCH)
        );
        self.violate(Invariant::FinishedWorkKept, Some(item), vec![done.worker, claimant], detail);
    }

    /// The guard of `exec` wakes at its `deadline`: unless moved since, it
    /// stops the work it still runs.
    pub(super) fn guard_check(&mut self, exec: ExecId, deadline: u64) {
        if self.cfg.mutation == Mutation::GuardDeadlineOff || self.execs.get(exec).deadline != deadline {
            return;
        }
        let latency = self.exit_latency();
        if self.execs.guard_check(exec, self.now, latency) {
            let e = *self.execs.get(exec);
            self.log(What::GuardStop, e.worker, e.item, e.token, latency);
        }
    }
}
