//! When a claim looks for stale leases: at most once per
//! `min(reclaim_every, lease)` per queue and store (see
//! [`StoreConfig::reclaim_every`](super::StoreConfig::reclaim_every)).
//!
//! Why a cadence and not every claim: a stale lease is the rare case (a
//! worker crashed or stalled), while the look costs every claim an index scan
//! (PostgreSQL) or a statement (SQLite). Looking once a second keeps the
//! reclaim prompt — a stale job waits at most one cadence for it — and takes
//! the look off the hot path of a busy queue.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use leasehold_core::Millis;

/// Per queue, the caller instant (ms) from which a claim looks again.
#[derive(Debug)]
pub(crate) struct ReclaimSchedule {
    every_ms: u64,
    next: Mutex<HashMap<String, u64>>,
}

impl ReclaimSchedule {
    pub(crate) fn new(every: Duration) -> Self {
        ReclaimSchedule {
            every_ms: u64::try_from(every.as_millis()).unwrap_or(u64::MAX),
            next: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a claim on `queue` at `now` under a lease of `lease_ms` looks
    /// for stale leases; when it does, the next look is due
    /// `min(every, lease_ms)` later. A claimant with short leases thereby
    /// looks at least once per lease of its own, as its peers' leases are
    /// likely as short.
    pub(crate) fn turn(&self, queue: &str, now: Millis, lease_ms: i64) -> bool {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if next.get(queue).is_some_and(|&due| now.0 < due) {
            return false;
        }
        let gap = self.every_ms.min(u64::try_from(lease_ms).unwrap_or(0));
        next.insert(queue.to_owned(), now.0.saturating_add(gap));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_first_then_once_per_cadence_per_queue() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        assert!(s.turn("a", Millis(10_000), 30_000), "the first claim looks");
        assert!(!s.turn("a", Millis(10_999), 30_000));
        assert!(s.turn("b", Millis(10_999), 30_000), "queues keep apart");
        assert!(s.turn("a", Millis(11_000), 30_000));
        assert!(!s.turn("a", Millis(11_500), 30_000));
    }

    #[test]
    fn a_lease_shorter_than_the_cadence_sets_the_cadence() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        assert!(s.turn("a", Millis(0), 100));
        assert!(!s.turn("a", Millis(99), 100));
        assert!(s.turn("a", Millis(100), 100));
    }

    #[test]
    fn zero_looks_at_every_claim() {
        let s = ReclaimSchedule::new(Duration::ZERO);
        for _ in 0..3 {
            assert!(s.turn("a", Millis(5), 30_000));
        }
    }
}
