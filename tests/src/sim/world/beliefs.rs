//! Beliefs and their checks: who believes it owns which item, and at every
//! step that no two believers of one item overlap unless the lease policy
//! excuses it, and that every believer stays inside its budget.

use super::host::{Held, Phase};
use super::{key_eq, World, EPOCH};
use crate::sim::check::{self, Invariant};
use leasehold_core::lease::EvidenceKind;
use leasehold_core::runner::ItemKey;

impl World {
    pub(super) fn belief_starts(&mut self, w: u8, held: Held) {
        let now = self.now;
        // Believers of the same item during this ms: current ones, and ones
        // whose belief ended earlier in this same ms.
        // The worker's own older belief counts too: an owner that re-claims
        // its own stale item (the own-reclaim rule) may still hold it.
        let mut others: Vec<(u8, Held)> = Vec::new();
        for other in 0..self.cfg.workers {
            if let Some(inc) = &self.workers[usize::from(other)].inc {
                // A holder settling its outcome has ended its work: only
                // its fenced settle is in flight.
                let same = |h: &&Held| h.item == held.item && h.token != held.token && h.phase == Phase::Working;
                others.extend(inc.held.iter().flatten().filter(same).map(|h| (other, *h)));
            }
        }
        // A belief that ended by handing the item back (settle, release) is
        // a causal hand-off; one whose lease was taken over still shares the
        // millisecond it ended in.
        others.extend(
            self.ended_now
                .iter()
                .filter(|(t, _, h)| {
                    *t == now
                        && h.item == held.item
                        && h.token != held.token
                        && (h.taken.is_some() || self.was_cancelled(h.item, h.token))
                        && h.phase == Phase::Working
                })
                .map(|(_, o, h)| (*o, *h)),
        );
        for (other, old) in others {
            // The believer with the older token must be the one excused (a
            // claim answered late can make the newcomer the older one).
            let ((older_w, older), (newer_w, newer)) =
                if old.token < held.token { ((other, old), (w, held)) } else { ((w, held), (other, old)) };
            let stall = self.workers[usize::from(older_w)].stall();
            // What matters is how the older token lost the lease: the item
            // may have changed hands again since (released, re-claimed). A
            // cancel by the operator is held to the same rule as a takeover
            // on an expired lease: the retry is due at the lease's end, so
            // only a stalled owner may still believe when the next claim
            // lands.
            let cancelled = self.was_cancelled(older.item, older.token);
            let lease_takeover = older.taken == Some(EvidenceKind::LeaseExpired) || cancelled;
            if lease_takeover && check::excused(self.spans, older.base_stamp(), stall, now) {
                self.stats.excused_overlaps += 1;
                continue;
            }
            // A same-host takeover of a dead owner (whose belief ended when
            // it died, in this same ms): `pid-evidence-true` checks the
            // evidence itself.
            if older.taken == Some(EvidenceKind::SameHostPidDead) && !self.alive(older_w, older.inc) {
                continue;
            }
            let detail = format!(
                "w{newer_w} holds token {} while w{older_w} believes it owns token {} during the same ms (its lease {}; stamp t={} less its clock's anchor, in budget {}, stalled now {}, last stall ended {})",
                newer.token,
                older.token,
                match older.taken {
                    None if cancelled => "was cancelled by the operator",
                    None => "was not taken over",
                    Some(EvidenceKind::LeaseExpired) => "was taken over: lease-expired",
                    Some(_) => "was taken over: same-host-pid-dead",
                },
                older.base_stamp().saturating_sub(EPOCH),
                check::in_budget(self.spans, older.base_stamp(), now),
                stall.now,
                stall.last_end.saturating_sub(EPOCH)
            );
            self.violate(Invariant::ExclusiveOwnership, Some(held.item), vec![older_w, newer_w], detail);
            return;
        }
    }

    pub(super) fn end_belief(&mut self, w: u8, key: ItemKey) {
        let now = self.now;
        if let Some(inc) = self.workers[usize::from(w)].inc.as_mut() {
            if let Some(slot) = inc.held.get_mut(usize::from(key.slot)) {
                if let Some(held) = slot.take_if(|h| key_eq(h.key, key)) {
                    self.ended_now.retain(|(t, _, _)| *t == now);
                    self.ended_now.push((now, w, held));
                }
            }
        }
    }

    /// Every believer at this real ms is inside its budget or excused.
    pub(super) fn check_budgets(&mut self) {
        if !self.cfg.budget_check {
            return;
        }
        let now = self.now;
        for w in 0..self.workers.len() {
            let worker = &self.workers[w];
            let Some(inc) = &worker.inc else { continue };
            for held in inc.held.iter().flatten().filter(|h| h.phase == Phase::Working) {
                let stamp = held.base_stamp();
                if check::in_budget(self.spans, stamp, now) || check::excused(self.spans, stamp, worker.stall(), now) {
                    continue;
                }
                let others: Vec<u8> = self
                    .workers
                    .iter()
                    .enumerate()
                    .filter(|&(o, other)| {
                        o != w && other.inc.as_ref().is_some_and(|i| i.held.iter().flatten().any(|h| h.item == held.item))
                    })
                    .map(|(o, _)| o as u8)
                    .collect();
                let (invariant, mut workers) = if others.is_empty() {
                    (Invariant::OwnerStopsInBudget, vec![w as u8])
                } else {
                    (Invariant::ExclusiveOwnership, others)
                };
                if invariant == Invariant::ExclusiveOwnership {
                    workers.insert(0, w as u8);
                }
                let detail = format!(
                    "w{w} still believes it owns token {} at t={}, but its last confirmed stamp t={} (less its clock's anchor) + S {} − K {} ended its budget at t={} and no stall excuses it (last stall ended {})",
                    held.token,
                    now - EPOCH,
                    stamp.saturating_sub(EPOCH),
                    self.spans.stale_after,
                    self.spans.skew,
                    (stamp + self.spans.stale_after - self.spans.skew).saturating_sub(EPOCH),
                    worker.stall_end.saturating_sub(EPOCH)
                );
                let item = held.item;
                self.violate(invariant, Some(item), workers, detail);
                return;
            }
        }
    }

}
