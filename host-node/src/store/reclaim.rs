//! When a claim looks for stale leases: at most once per
//! `min(reclaim_every, lease)` per queue and store (see
//! [`StoreConfig::reclaim_every`](super::StoreConfig::reclaim_every)), and
//! again at once after a look that found some.
//!
//! Why a cadence and not every claim: a stale lease is the rare case (a
//! worker crashed or stalled), while the look costs every claim an index scan
//! (PostgreSQL) or a statement (SQLite). Looking once a second keeps the
//! reclaim prompt — a stale job waits at most one cadence for it — and takes
//! the look off the hot path of a busy queue. A look takes at most a page of
//! stale jobs, and a worker claiming one job at a time takes one per look; so
//! a look that found any is followed by another at the next claim, until one
//! finds none: a dead worker's many jobs come back one claim after another,
//! not one cadence after another.
//!
//! The time between looks is read on two clocks, and either one passing the
//! gap is enough: the callers' `now` (SQLite stamps with it, and tests drive
//! it) and this process's monotonic clock (PostgreSQL stamps with its own
//! clock, so a caller may pass a `now` that never moves).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use leasehold_core::Millis;

/// When a queue's last look happened, on both clocks.
#[derive(Clone, Copy, Debug)]
struct Look {
    now_ms: u64,
    at: Instant,
}

/// Per queue, the last claim that looked (absent: the next claim looks).
#[derive(Debug)]
pub(crate) struct ReclaimSchedule {
    every: Duration,
    looked: Mutex<HashMap<String, Look>>,
}

impl ReclaimSchedule {
    pub(crate) fn new(every: Duration) -> Self {
        ReclaimSchedule {
            every,
            looked: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a claim on `queue` at `now` under a lease of `lease_ms` looks
    /// for stale leases; see [`ReclaimSchedule::turn_at`].
    pub(crate) fn turn(&self, queue: &str, now: Millis, lease_ms: i64) -> bool {
        self.turn_at(queue, now, lease_ms, Instant::now())
    }

    /// [`ReclaimSchedule::turn`] with the monotonic clock read at `at`. A
    /// claim looks when `min(every, lease_ms)` has passed since the last look
    /// on either clock (a claimant with short leases thereby looks at least
    /// once per lease of its own, as its peers' leases are likely as short),
    /// or when `now` is before the last look (a clock stepped back, or callers
    /// whose clocks disagree: looking once too often is cheap, not looking
    /// for a long while is not). A look is remembered as the last one.
    fn turn_at(&self, queue: &str, now: Millis, lease_ms: i64, at: Instant) -> bool {
        let mut looked = self.looked.lock().unwrap_or_else(|e| e.into_inner());
        let gap = self.every.min(Duration::from_millis(u64::try_from(lease_ms).unwrap_or(0)));
        if let Some(last) = looked.get(queue) {
            let gap_ms = u64::try_from(gap.as_millis()).unwrap_or(u64::MAX);
            let by_now = now.0 < last.now_ms || now.0 - last.now_ms >= gap_ms;
            let by_clock = at.saturating_duration_since(last.at) >= gap;
            if !by_now && !by_clock {
                return false;
            }
        }
        looked.insert(queue.to_owned(), Look { now_ms: now.0, at });
        true
    }

    /// A look on `queue` found stale jobs: the next claim looks again, as
    /// there may be more than the look could take.
    pub(crate) fn found_stale(&self, queue: &str) {
        self.looked.lock().unwrap_or_else(|e| e.into_inner()).remove(queue);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: i64 = 30_000;

    #[test]
    fn looks_first_then_once_per_cadence_per_queue() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        let t = Instant::now();
        assert!(s.turn_at("a", Millis(10_000), LONG, t), "the first claim looks");
        assert!(!s.turn_at("a", Millis(10_999), LONG, t));
        assert!(s.turn_at("b", Millis(10_999), LONG, t), "queues keep apart");
        assert!(s.turn_at("a", Millis(11_000), LONG, t));
        assert!(!s.turn_at("a", Millis(11_500), LONG, t));
    }

    #[test]
    fn a_lease_shorter_than_the_cadence_sets_the_cadence() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        let t = Instant::now();
        assert!(s.turn_at("a", Millis(0), 100, t));
        assert!(!s.turn_at("a", Millis(99), 100, t));
        assert!(s.turn_at("a", Millis(100), 100, t));
    }

    #[test]
    fn a_clock_that_stepped_back_looks_at_once() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        let t = Instant::now();
        assert!(s.turn_at("a", Millis(50_000), LONG, t));
        assert!(s.turn_at("a", Millis(20_000), LONG, t));
        assert!(!s.turn_at("a", Millis(20_500), LONG, t));
    }

    #[test]
    fn a_caller_clock_that_never_moves_looks_by_the_monotonic_clock() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        let t = Instant::now();
        assert!(s.turn_at("a", Millis(0), LONG, t));
        assert!(!s.turn_at("a", Millis(0), LONG, t + Duration::from_millis(999)));
        assert!(s.turn_at("a", Millis(0), LONG, t + Duration::from_secs(1)));
    }

    #[test]
    fn a_look_that_found_stale_jobs_is_followed_by_another() {
        let s = ReclaimSchedule::new(Duration::from_secs(1));
        let t = Instant::now();
        assert!(s.turn_at("a", Millis(0), LONG, t));
        s.found_stale("a");
        assert!(s.turn_at("a", Millis(1), LONG, t));
        assert!(!s.turn_at("a", Millis(2), LONG, t), "that look found none");
    }

    #[test]
    fn zero_looks_at_every_claim() {
        let s = ReclaimSchedule::new(Duration::ZERO);
        let t = Instant::now();
        for _ in 0..3 {
            assert!(s.turn_at("a", Millis(5), LONG, t));
        }
    }
}
