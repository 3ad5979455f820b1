//! Calm and the reclaim probe: once the faults stop every worker comes
//! back, and once the store is done one more item is claimed by an owner
//! that crashes holding it, which a peer must reclaim in time.

use super::queue::Ev;
use super::{World, EPOCH, NO_ITEM, NO_WORKER};
use crate::sim::check::Invariant;
use crate::sim::store::ItemState;
use crate::sim::trace::What;

impl World {
    pub(super) fn calm(&mut self) {
        self.calm = true;
        self.log(What::Calm, NO_WORKER, NO_ITEM, 0, 0);
        for w in 0..self.cfg.workers {
            let i = usize::from(w);
            if self.workers[i].partition.take().is_some() {
                self.log(What::PartitionEnd, w, NO_ITEM, 0, 0);
            }
            self.unthrottle(w);
            self.resume(w);
            if self.workers[i].inc.is_none() {
                self.restart(w);
            }
        }
        if self.store_done() {
            self.schedule_probe();
        }
    }

    pub(super) fn schedule_probe(&mut self) {
        // Let every worker's backoff run out, so each polls every interval.
        let backoff = (10 * self.cfg.params.claim_interval_ms).min(60_000);
        self.probe = Some(NO_ITEM);
        self.at(self.now + backoff + 2 * self.cfg.params.claim_interval_ms, Ev::ProbeStart);
    }

    pub(super) fn probe_start(&mut self) {
        let item = self.store.add_item();
        self.probe = Some(item);
        self.store.enqueue(item);
        self.log(What::ProbeEnqueue, NO_WORKER, item, 0, 0);
        self.wake_someone();
    }

    pub(super) fn probe_crash(&mut self, w: u8, inc: u32, item: u32) {
        if !self.alive(w, inc) {
            return;
        }
        let p = self.cfg.params;
        let bound = self.now + p.stale_after_ms + p.heartbeat_every_ms + p.claim_interval_ms;
        self.probe_crash_at = self.now;
        self.log(What::ProbeCrash, w, item, bound - EPOCH, 0);
        self.crash(w);
        self.restart(w);
        self.at(bound + 1, Ev::ProbeDeadline { item });
    }

    /// Called by the store when a settle lands: the run ends once the probe
    /// item is settled.
    pub(super) fn maybe_finish(&mut self) {
        if let Some(item) = self.probe {
            if item != NO_ITEM && self.store.item(item).state == ItemState::Settled && self.now > self.probe_crash_at + 1 {
                self.finished = true;
            }
        }
    }

    /// The probe's bound passed: its item must have been re-claimed by a
    /// peer (or settled) by now.
    pub(super) fn probe_deadline(&mut self, item: u32) {
        let reclaimed = self.store.item(item).owner.is_some_and(|o| Some((o.worker, o.incarnation)) != self.probe_owner);
        let settled = self.store.item(item).state == ItemState::Settled;
        if !reclaimed && !settled {
            let bound = self.cfg.params.stale_after_ms + self.cfg.params.heartbeat_every_ms + self.cfg.params.claim_interval_ms;
            let detail = format!(
                "the owner crashed at t={} holding the item (stamp {}); nobody re-claimed it within S + I + claim interval = {bound}ms",
                self.probe_crash_at - EPOCH,
                self.store.item(item).stamp.0
            );
            let workers = self.probe_owner.map(|(w, _)| vec![w]).unwrap_or_default();
            self.violate(Invariant::DeadOwnerReclaimed, Some(item), workers, detail);
        }
    }
}
