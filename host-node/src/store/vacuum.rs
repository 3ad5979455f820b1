//! PostgreSQL: vacuuming the jobs table as claims churn it.
//!
//! A claim turns a queued row into a running one. The queued-jobs index
//! keeps the old entry, pointing at a dead row version, and it sits at the
//! head of the index, exactly where the next claim starts its scan; settles
//! do the same to the running-jobs index, where the stale-lease scan starts.
//! Until a `VACUUM` removes them, every claim walks past all of them (marked
//! dead after the first visit, but still walked), so a busy queue slows down
//! as it works. Autovacuum visits a database at most once per
//! `autovacuum_naptime` (one minute by default), by which time a busy
//! queue has left tens of thousands. So the store vacuums the table itself,
//! in the background, after every [`StoreConfig::vacuum_every`] jobs it
//! claimed.
//!
//! [`StoreConfig::vacuum_every`]: super::StoreConfig::vacuum_every

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Counts a store's claimed jobs and says when a vacuum is due; at most one
/// runs at a time per store.
#[derive(Debug)]
pub(crate) struct VacuumSchedule {
    every: Option<u64>,
    claimed: AtomicU64,
    running: Arc<AtomicBool>,
}

/// A vacuum this store is running; dropping it lets the next one start.
#[derive(Debug)]
pub(crate) struct VacuumTurn {
    running: Arc<AtomicBool>,
}

impl Drop for VacuumTurn {
    fn drop(&mut self) {
        self.running.store(false, Ordering::Release);
    }
}

impl VacuumSchedule {
    /// A schedule that asks for a vacuum after each `every` claimed jobs;
    /// `None` or `Some(0)` never does.
    pub(crate) fn new(every: Option<u32>) -> Self {
        VacuumSchedule {
            every: every.filter(|n| *n > 0).map(u64::from),
            claimed: AtomicU64::new(0),
            running: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Counts `n` more claimed jobs. Answers the turn to run a vacuum when
    /// the count crossed a multiple of `every` and none is running; a
    /// crossing while one runs is skipped (that vacuum is still removing
    /// the same dead entries).
    pub(crate) fn claimed(&self, n: usize) -> Option<VacuumTurn> {
        let every = self.every?;
        let n = n as u64;
        let before = self.claimed.fetch_add(n, Ordering::Relaxed);
        if (before + n) / every == before / every {
            return None;
        }
        self.running
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        Some(VacuumTurn {
            running: self.running.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vacuum_is_due_each_time_the_count_crosses_a_multiple() {
        let s = VacuumSchedule::new(Some(10));
        assert!(s.claimed(9).is_none());
        let turn = s.claimed(1).expect("10 claimed");
        drop(turn);
        assert!(s.claimed(9).is_none());
        assert!(s.claimed(25).is_some(), "a page that jumps past 20 and 30");
    }

    #[test]
    fn no_second_vacuum_while_one_runs() {
        let s = VacuumSchedule::new(Some(1));
        let turn = s.claimed(1).expect("first");
        assert!(s.claimed(1).is_none(), "one is running");
        drop(turn);
        assert!(s.claimed(1).is_some());
    }

    #[test]
    fn none_or_zero_never_vacuums() {
        for every in [None, Some(0)] {
            let s = VacuumSchedule::new(every);
            assert!(s.claimed(1_000_000).is_none());
        }
    }
}
