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
//! in the background, as its own claims' walks add up (see
//! [`VacuumSchedule`] and [`StoreConfig::vacuum_every`]).
//!
//! [`StoreConfig::vacuum_every`]: super::StoreConfig::vacuum_every

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Counts the dead index entries this store's claims have walked since its
/// last vacuum and says when the next is due; at most one runs at a time
/// per store.
///
/// The walk of one claim statement is estimated as the jobs claimed since
/// the last vacuum (each left one dead entry at the head). One job per
/// claim, the walks add up to `J²/2` after `J` jobs; a vacuum is due when
/// they reach `every²/2`: after `every` jobs claimed one at a time, after
/// `10 × every` claimed in pages of 100 (whose walks are shared by 100 jobs),
/// and, when claims find nothing, after enough empty polls over the same
/// dead head.
#[derive(Debug)]
pub(crate) struct VacuumSchedule {
    /// `every²/2`, or `None`: never.
    due_at: Option<u64>,
    /// (jobs claimed, entries walked) since the last vacuum.
    since: Mutex<(u64, u64)>,
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
    /// A schedule for `StoreConfig::vacuum_every`; `None` or `Some(0)`
    /// never asks for a vacuum.
    pub(crate) fn new(every: Option<u32>) -> Self {
        VacuumSchedule {
            due_at: every
                .filter(|n| *n > 0)
                .map(|n| u64::from(n) * u64::from(n) / 2),
            since: Mutex::new((0, 0)),
            running: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Counts one claim statement that claimed `n` jobs (0 for an empty
    /// poll). Answers the turn to run a vacuum when one is due and none is
    /// running (then the count starts again); while one runs, the count
    /// goes on.
    pub(crate) fn claimed(&self, n: usize) -> Option<VacuumTurn> {
        let due_at = self.due_at?;
        let mut since = self.since.lock().unwrap_or_else(|e| e.into_inner());
        let (jobs, walked) = &mut *since;
        *walked = walked.saturating_add(*jobs);
        *jobs = jobs.saturating_add(n as u64);
        if *walked < due_at {
            return None;
        }
        self.running
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        *since = (0, 0);
        Some(VacuumTurn {
            running: self.running.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claim statements of `n` jobs until a vacuum is due; how many jobs.
    fn jobs_until_due(s: &VacuumSchedule, n: usize) -> usize {
        let mut jobs = 0;
        loop {
            jobs += n;
            if s.claimed(n).is_some() {
                return jobs;
            }
            assert!(jobs < 10_000_000, "never due");
        }
    }

    #[test]
    fn one_job_per_claim_vacuums_after_every_jobs() {
        let s = VacuumSchedule::new(Some(100));
        // Statement k walks k-1 entries: 0 + 1 + ... + 100 = 5050 >= 5000.
        assert_eq!(jobs_until_due(&s, 1), 101);
        assert_eq!(jobs_until_due(&s, 1), 101, "the count starts again");
    }

    #[test]
    fn pages_of_100_vacuum_ten_times_less_often() {
        let s = VacuumSchedule::new(Some(1000));
        let jobs = jobs_until_due(&s, 100);
        assert!((10_000..=10_100).contains(&jobs), "{jobs}");
    }

    #[test]
    fn empty_polls_over_a_dead_head_come_due() {
        let s = VacuumSchedule::new(Some(100));
        assert!(s.claimed(50).is_none());
        let polls = (1..).find(|_| s.claimed(0).is_some()).unwrap();
        assert_eq!(polls, 100, "each empty poll walks the 50 dead entries");
    }

    #[test]
    fn no_second_vacuum_while_one_runs() {
        let s = VacuumSchedule::new(Some(2));
        assert!(s.claimed(5).is_none());
        let turn = s.claimed(0).expect("due");
        assert!(s.claimed(5).is_none());
        assert!(s.claimed(0).is_none(), "due again, but one is running");
        drop(turn);
        assert!(s.claimed(0).is_some());
    }

    #[test]
    fn none_or_zero_never_vacuums() {
        for every in [None, Some(0)] {
            let s = VacuumSchedule::new(every);
            for _ in 0..1000 {
                assert!(s.claimed(1000).is_none());
            }
        }
    }
}
