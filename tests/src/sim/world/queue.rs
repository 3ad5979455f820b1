//! The event queue: what happens next, in simulated real time, and in
//! the order it was scheduled when two events fall on the same ms.

use super::faults::Fault;
use super::network::{Fate, Rep, Req};
use super::World;
use crate::sim::exit::ExecId;
use leasehold_core::runner::ItemKey;
use std::cmp::Reverse;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    Timer { w: u8, inc: u32 },
    Arrive { w: u8, inc: u32, req: Req, fate: Fate, sent: u64 },
    Reply { w: u8, inc: u32, rep: Rep },
    /// The work of `exec` comes to its end (its process exits, stalled
    /// worker or not); the host hears of it when it runs.
    WorkDone { w: u8, inc: u32, key: ItemKey, exec: ExecId },
    /// The guard of `exec` checks whether its exit deadline passed unmoved.
    GuardCheck { exec: ExecId, deadline: u64 },
    ReleaseRetry { w: u8, inc: u32, item: u32, token: u64 },
    Fault { w: u8, fault: Fault },
    Enqueue { item: u32 },
    Calm,
    ProbeStart,
    ProbeCrash { w: u8, inc: u32, item: u32 },
    ProbeDeadline { item: u32 },
    /// The operator cancels a random pending or running item.
    OperatorCancel,
    /// The operator retries `item` if it is still cancelled.
    OperatorRetry { item: u32 },
    /// The operator cancels `item` again if it still waits.
    OperatorCancelAgain { item: u32 },
}

impl Ev {
    /// The worker whose host handles this event (a paused host defers it).
    pub(super) fn host_worker(&self) -> Option<(u8, u32)> {
        match *self {
            Ev::Timer { w, inc }
            | Ev::Reply { w, inc, .. }
            | Ev::WorkDone { w, inc, .. }
            | Ev::ReleaseRetry { w, inc, .. } => Some((w, inc)),
            _ => None,
        }
    }
}

pub(super) struct Queued {
    pub(super) time: u64,
    pub(super) seq: u64,
    pub(super) ev: Ev,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

impl World {
    /// Schedules `ev` at real ms `time`.
    pub(super) fn at(&mut self, time: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse(Queued { time, seq: self.seq, ev }));
    }
}
