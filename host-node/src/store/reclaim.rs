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

/// Per queue, the caller instant (ms) of the last claim that looked.
#[derive(Debug)]
pub(crate) struct ReclaimSchedule {
    every_ms: u64,
    looked: Mutex<HashMap<String, u64>>,
}

impl ReclaimSchedule {
    pub(crate) fn new(every: Duration) -> Self {
        ReclaimSchedule {
            every_ms: u64::try_from(every.as_millis()).unwrap_or(u64::MAX),
            looked: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a claim on `queue` at `now` under a lease of `lease_ms` looks
    /// for stale leases: when `min(every, lease_ms)` has passed since the
    /// last look (a claimant with short leases thereby looks at least once
    /// per lease of its own, as its peers' leases are likely as short), or
    /// when `now` is before the last look (a clock stepped back, or callers
    /// whose clocks disagree: looking once too often is cheap, not looking
    /// for a long while is not).
    pub(crate) fn turn(&self, queue: &str, now: Millis, lease_ms: i64) -> bool {
        let mut looked = self.looked.lock().unwrap_or_else(|e| e.into_inner());
        let gap = self.every_ms.min(u64::try_from(lease_ms).unwrap_or(0));
        if let Some(&last) = looked.get(queue) {
            if now.0 >= last && now.0 - last < gap {
                return false;
            }
        }
        looked.insert(queue.to_owned(), now.0);
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
    fn a_clock_that_stepped_back_looks_at_once() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        assert!(s.turn("a", Millis(50_000), 30_000));
        assert!(s.turn("a", Millis(20_000), 30_000));
        assert!(!s.turn("a", Millis(20_500), 30_000));
    }

    #[test]
    fn zero_looks_at_every_claim() {
        let s = ReclaimSchedule::new(Duration::ZERO);
        for _ in 0..3 {
            assert!(s.turn("a", Millis(5), 30_000));
        }
    }
}
