//! The user's calls: start, tick, wake, stop, quiesce, dispose.

use super::{PassId, Runner, Ticket};
use crate::event::PassReport;
use crate::options::Scheduling;
use crate::Millis;

impl<E: Clone> Runner<E> {
    /// A pass at once, then one per delay (queue scheduling: a claim at
    /// once, then idle polls). A second start, or a start after dispose,
    /// does nothing.
    pub fn start(&mut self, now: Millis) {
        if self.disposed || self.started {
            return;
        }
        self.started = true;
        let chain = self.generation;
        self.run_chain(now, chain);
    }

    /// One pass, joining the one in flight instead of overlapping it (queue
    /// scheduling: the busy period in flight, which claims again; or a new
    /// one, which claims at once, even while failed claims pause the pool).
    /// After dispose: [`Ticket::Done`] with an idle report.
    pub fn tick(&mut self, now: Millis) -> Ticket {
        if self.disposed {
            return Ticket::Done(PassReport::IDLE);
        }
        let queue = self.config.scheduling == Scheduling::Queue;
        if let Some(pass) = &self.pass {
            let id = pass.id;
            if queue {
                self.queue_may_be_work(now);
            }
            return Ticket::Pass(id);
        }
        if queue {
            self.may_be_work = true;
        }
        Ticket::Pass(self.begin_pass(now))
    }

    /// Passes: idle, one pass now; during a pass, exactly one follow-up pass
    /// after it, however many wakes arrive. Queue scheduling: work may be
    /// there, so a free slot claims (once claims are not paused).
    pub fn wake(&mut self, now: Millis) {
        if self.disposed {
            return;
        }
        if self.config.scheduling == Scheduling::Queue {
            return self.queue_may_be_work(now);
        }
        if self.pass.is_none() {
            self.begin_pass(now);
        } else {
            self.waking = true;
        }
    }

    /// Retires the scheduling chain (a pass that outlives its stop schedules
    /// nothing) and drops a pending follow-up. The pass in flight drains
    /// (queue scheduling: it claims no more, and ends once its items are
    /// done); in the settle phase it drains its settling items too, however
    /// many stops or disposes follow: an outcome reached is never given up
    /// on, it ends only when its settle lands or its fence is refused.
    pub fn stop(&mut self) {
        self.started = false;
        self.waking = false;
        self.generation += 1;
        self.timer = None;
        self.chain_after_pass = None;
        if self.config.scheduling == Scheduling::Queue {
            self.queue_stop();
        }
    }

    /// Stops; answers the pass to wait for, if one is in
    /// flight. The runner can start again.
    pub fn quiesce(&mut self) -> Option<PassId> {
        self.stop();
        self.pass_in_flight()
    }

    /// Quiesces for good. Later `start`, `tick` and
    /// `wake` do nothing. A second dispose answers `None` at once.
    pub fn dispose(&mut self) -> Option<PassId> {
        if self.disposed {
            return None;
        }
        self.stop();
        self.disposed = true;
        self.pass_in_flight()
    }
}
