//! The work itself, apart from the worker that started it: each perform is
//! an *execution* (for the command-line tool, a command's process group
//! under its guard), which runs on whatever its worker does.
//!
//! - It starts when the host performs an item, and ends when its work is
//!   done, when it is stopped, or when its worker dies (the guard ends the
//!   group at once: its parent-death signal).
//! - Stopped (the runner aborted the item, or the guard's deadline passed),
//!   it takes up to the exit grace `G` to end: a drawn latency in `[0, G]`.
//! - It runs on while its worker is paused: a paused worker neither renews
//!   nor aborts, so only its guard can end the work. The guard knows the
//!   instant by which the work must have ended (the *exit deadline*, from
//!   the last confirmed renewal); every confirmed renewal the worker hears
//!   moves it forward, and when it passes unmoved the guard stops the work
//!   itself, so that it has ended by the deadline plus `G`.
//!
//! The invariant checked here, `executions-exclusive`: no two executions of
//! one item overlap in time, exit latency included. Intervals are half-open
//! `[start, end)` in real ms, so one that ends at the very ms another starts
//! does not overlap it.

/// Which execution: an index into [`Executions`].
pub type ExecId = usize;

/// One execution of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Execution {
    /// The item.
    pub item: u32,
    /// The worker and incarnation that started it.
    pub worker: u8,
    /// The incarnation of that worker.
    pub incarnation: u32,
    /// The fencing token it works under.
    pub token: u64,
    /// Real ms it started.
    pub start: u64,
    /// Real ms it ends (`None`: still running, end unknown). Once set it
    /// only moves earlier (work done before a stop's latency ran out).
    pub end: Option<u64>,
    /// Whether its work ran to completion (rather than being stopped).
    pub finished: bool,
    /// Whether its work, once complete, fails (an outcome to retry, not a
    /// result to keep).
    pub fails: bool,
    /// The guard's exit deadline, real ms: stopped unless moved by then.
    pub deadline: u64,
}

impl Execution {
    /// Whether it still runs at real ms `t` (`[start, end)`).
    pub fn running_at(&self, t: u64) -> bool {
        self.start <= t && self.end.is_none_or(|end| end > t)
    }
}

/// Every execution of the run.
#[derive(Clone, Debug, Default)]
pub struct Executions {
    all: Vec<Execution>,
}

impl Executions {
    /// An execution of `item` under `token` by `worker`'s `incarnation`,
    /// starting at `now` with the guard's exit deadline `deadline`, whose
    /// work `fails` or not. Answers its id, and the execution of the same
    /// item it overlaps, if one still runs.
    #[allow(clippy::too_many_arguments, reason = "one field of the execution each")]
    pub fn start(&mut self, item: u32, worker: u8, incarnation: u32, token: u64, now: u64, deadline: u64, fails: bool) -> (ExecId, Option<Execution>) {
        let overlapped = self.all.iter().find(|e| e.item == item && e.running_at(now)).copied();
        self.all.push(Execution { item, worker, incarnation, token, start: now, end: None, finished: false, fails, deadline });
        (self.all.len() - 1, overlapped)
    }

    /// The execution `id`.
    pub fn get(&self, id: ExecId) -> &Execution {
        &self.all[id]
    }

    /// The running execution of `worker`'s `incarnation` under `token`.
    pub fn find(&self, worker: u8, incarnation: u32, token: u64) -> Option<ExecId> {
        self.all.iter().rposition(|e| e.worker == worker && e.incarnation == incarnation && e.token == token)
    }

    /// Its work came to its end at `now`: it ends now, unless a stop ended
    /// it already. Answers whether it *finished*: ran to completion before
    /// any stop (work that completes while it is being stopped ends then,
    /// but its worker has given it up).
    pub fn work_done(&mut self, id: ExecId, now: u64) -> bool {
        let e = &mut self.all[id];
        match e.end {
            None => {
                e.end = Some(now);
                e.finished = true;
                true
            }
            Some(end) => {
                e.end = Some(end.min(now));
                false
            }
        }
    }

    /// Stopped at `now` (SIGTERM, then SIGKILL by the grace): it ends after
    /// `latency` ms, unless it ends sooner on its own.
    pub fn stop(&mut self, id: ExecId, now: u64, latency: u64) {
        let e = &mut self.all[id];
        let by = now + latency;
        if e.end.is_none_or(|end| end > by) {
            e.end = Some(by);
        }
    }

    /// Every execution of `worker`'s `incarnation` that still runs at `now`
    /// ends now: the worker died, and each guard ends its group at once.
    pub fn worker_died(&mut self, worker: u8, incarnation: u32, now: u64) {
        for e in self.all.iter_mut().filter(|e| e.worker == worker && e.incarnation == incarnation) {
            if e.end.is_none_or(|end| end > now) {
                e.end = Some(now);
            }
        }
    }

    /// A confirmed renewal moved the exit deadline of `id` to `deadline`
    /// (never backwards).
    pub fn move_deadline(&mut self, id: ExecId, deadline: u64) {
        let e = &mut self.all[id];
        e.deadline = e.deadline.max(deadline);
    }

    /// The guard of `id` checks its deadline at `now`: when it passed
    /// unmoved and the work still runs, the guard stops it (ending after
    /// `latency`). Answers whether it did.
    pub fn guard_check(&mut self, id: ExecId, now: u64, latency: u64) -> bool {
        let e = self.all[id];
        if e.deadline > now || e.end.is_some() {
            return false;
        }
        self.stop(id, now, latency);
        true
    }

    /// Executions of `item` whose work ran to completion, with their tokens.
    pub fn finished(&self, item: u32) -> impl Iterator<Item = &Execution> {
        self.all.iter().filter(move |e| e.item == item && e.finished)
    }

    /// The execution of `item` under `token` that finished its work with a
    /// result to keep, if one did.
    pub fn succeeded(&self, item: u32, token: u64) -> Option<&Execution> {
        self.finished(item).find(|e| e.token == token && !e.fails)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_second_execution_overlaps_one_that_still_runs_but_not_one_that_ended_at_its_start() {
        let mut x = Executions::default();
        let (a, none) = x.start(7, 0, 0, 1, 100, 500, false);
        assert!(none.is_none());
        let (_, overlapped) = x.start(7, 1, 0, 2, 200, 600, false);
        assert_eq!(overlapped.map(|e| e.token), Some(1), "still running at 200");
        x.stop(a, 250, 50);
        let (_, after) = x.start(7, 2, 0, 3, 300, 700, false);
        assert!(after.is_some_and(|e| e.token == 2), "the one at 200 still runs");
        let mut y = Executions::default();
        let (b, _) = y.start(3, 0, 0, 1, 100, 500, false);
        y.stop(b, 250, 50);
        assert!(y.start(3, 1, 0, 2, 300, 700, false).1.is_none(), "ended at 300 exactly: no overlap");
        assert!(y.start(4, 1, 0, 5, 120, 700, false).1.is_none(), "another item");
    }

    #[test]
    fn work_done_while_being_stopped_ends_it_then_but_is_not_finished_work() {
        let mut x = Executions::default();
        let (a, _) = x.start(1, 0, 0, 1, 0, 500, false);
        assert!(x.work_done(a, 90));
        assert_eq!(x.finished(1).count(), 1);
        let (b, _) = x.start(2, 0, 0, 2, 0, 500, false);
        x.stop(b, 100, 80);
        assert!(!x.work_done(b, 150));
        assert_eq!(x.get(b).end, Some(150));
        let (c, _) = x.start(2, 0, 0, 3, 200, 500, false);
        x.stop(c, 210, 10);
        assert!(!x.work_done(c, 250));
        assert_eq!(x.get(c).end, Some(220), "it had ended at 220");
        assert_eq!(x.finished(2).count(), 0);
    }

    #[test]
    fn the_guard_stops_work_only_once_its_deadline_passed_unmoved() {
        let mut x = Executions::default();
        let (a, _) = x.start(1, 0, 0, 1, 0, 500, false);
        assert!(!x.guard_check(a, 499, 30));
        x.move_deadline(a, 800);
        assert!(!x.guard_check(a, 500, 30), "moved by a renewal");
        x.move_deadline(a, 700);
        assert_eq!(x.get(a).deadline, 800, "never backwards");
        assert!(x.guard_check(a, 800, 30));
        assert_eq!(x.get(a).end, Some(830));
    }

    #[test]
    fn a_dead_worker_takes_its_running_work_with_it_at_once() {
        let mut x = Executions::default();
        let (a, _) = x.start(1, 0, 0, 1, 0, 500, false);
        let (b, _) = x.start(2, 0, 0, 2, 0, 500, false);
        x.stop(b, 10, 100);
        let (c, _) = x.start(3, 1, 0, 3, 0, 500, false);
        x.worker_died(0, 0, 50);
        assert_eq!([x.get(a).end, x.get(b).end, x.get(c).end], [Some(50), Some(50), None]);
    }
}
