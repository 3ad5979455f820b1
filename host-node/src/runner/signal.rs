//! The abort signal a `perform` gets.
//!
//! One signal state per pool slot, reused item after item; a signal handed to
//! an earlier item never sees a later item's abort (its generation differs).

use leasehold_core::Millis;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::Notify;
use tokio::time::Instant;

/// The stable code of a lost claim.
pub const JOB_CLAIM_LOST: &str = "CLAIM_LOST";

/// Why a signal fired.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Another process took over the work {job} had claimed.")]
pub struct ClaimLost {
    /// The runner's name.
    pub job: Arc<str>,
    /// True when supervision lapsed the claim (renewals stopped confirming);
    /// false when a renewal answered that the claim is lost.
    pub lapsed: bool,
}

impl ClaimLost {
    /// Always [`JOB_CLAIM_LOST`].
    pub fn code(&self) -> &'static str {
        JOB_CLAIM_LOST
    }
}

const NOT_ABORTED: u64 = 0;
const LOST: u64 = 1;
const LAPSED: u64 = 2;

/// Shared by the runner and the signals of one slot. Packs
/// `(generation << 2) | reason` so a read is one atomic load.
#[derive(Debug, Default)]
pub(crate) struct SlotSignal {
    state: AtomicU64,
    notify: Notify,
    /// The item's exit deadline: its generation, the core's instant (to tell
    /// a real move from a re-conversion) and the same on tokio's clock.
    deadline: Mutex<Option<(u32, Millis, Instant)>>,
    moved: Notify,
}

impl SlotSignal {
    /// Records the exit deadline of the item of `generation` (`at` on the
    /// runner clock, `instant` on tokio's), waking whoever waits for it to
    /// move.
    pub(crate) fn set_deadline(&self, generation: u32, at: Millis, instant: Instant) {
        let mut deadline = self.deadline.lock().unwrap_or_else(PoisonError::into_inner);
        if deadline.is_some_and(|(g, old, _)| g == generation && old == at) {
            return;
        }
        *deadline = Some((generation, at, instant));
        drop(deadline);
        self.moved.notify_waiters();
    }

    /// Forgets the exit deadline of the item of `generation`: its work has
    /// ended (what is left, a settle, is not bounded by it).
    pub(crate) fn clear_deadline(&self, generation: u32) {
        let mut deadline = self.deadline.lock().unwrap_or_else(PoisonError::into_inner);
        if deadline.is_some_and(|(g, ..)| g == generation) {
            *deadline = None;
        }
    }

    fn deadline(&self, generation: u32) -> Option<Instant> {
        let deadline = *self.deadline.lock().unwrap_or_else(PoisonError::into_inner);
        deadline.filter(|(g, ..)| *g == generation).map(|(.., instant)| instant)
    }

    pub(crate) fn abort(&self, generation: u32, lapsed: bool) {
        let reason = if lapsed { LAPSED } else { LOST };
        self.state.store((u64::from(generation) << 2) | reason, Ordering::Release);
        self.notify.notify_waiters();
    }

    fn reason(&self, generation: u32) -> u64 {
        let state = self.state.load(Ordering::Acquire);
        if state >> 2 == u64::from(generation) { state & 3 } else { NOT_ABORTED }
    }
}

/// Handed to [`super::Job::perform`]: fires when the item's claim is lost or
/// lapses. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AbortSignal {
    slot: Arc<SlotSignal>,
    generation: u32,
    job: Arc<str>,
    /// A host's own abort beside the runner's ([`AbortSignal::detached`]).
    own: Option<Arc<SlotSignal>>,
}

impl AbortSignal {
    pub(crate) fn new(slot: Arc<SlotSignal>, generation: u32, job: Arc<str>) -> Self {
        AbortSignal { slot, generation, job, own: None }
    }

    /// The same signal with an abort of its own, which the runner does not
    /// fire: a host that may learn of a loss before the runner's next
    /// renewal does (a job cancelled in the store) hands this one to the
    /// work and fires it with [`Self::abort_lost`]. It fires on the
    /// runner's aborts too, and has the runner's deadline. Only the stores
    /// use it, so a build without one leaves it out.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn detached(&self) -> AbortSignal {
        AbortSignal { own: Some(Arc::default()), ..self.clone() }
    }

    /// Fires a [`Self::detached`] signal as a lost claim (the runner's own
    /// signal is left alone; on any other signal this does nothing).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn abort_lost(&self) {
        if let Some(own) = &self.own {
            own.abort(self.generation, false);
        }
    }

    /// The runner's reason, else the host's own, else a lapse when the exit
    /// deadline has passed: the runner fires the signal from the task that
    /// polls the work, so work that held the thread past the deadline (a
    /// blocking call, a long computation) would otherwise read it unfired
    /// until it yields, after another process may have taken the item over.
    fn state(&self) -> u64 {
        match self.slot.reason(self.generation) {
            NOT_ABORTED => match self.own.as_ref().map_or(NOT_ABORTED, |own| own.reason(self.generation)) {
                NOT_ABORTED if self.deadline().is_some_and(|deadline| Instant::now() >= deadline) => LAPSED,
                reason => reason,
            },
            reason => reason,
        }
    }

    /// Whether the claim was lost or lapsed, or its exit deadline
    /// ([`AbortSignal::deadline`]) has passed (as a lapse), even if the
    /// runner has not yet had the thread to fire the signal.
    pub fn is_aborted(&self) -> bool {
        self.state() != NOT_ABORTED
    }

    /// The reason, once aborted.
    pub fn reason(&self) -> Option<ClaimLost> {
        match self.state() {
            NOT_ABORTED => None,
            r => Some(ClaimLost { job: self.job.clone(), lapsed: r == LAPSED }),
        }
    }

    /// Resolves when the signal fires (at once if it has). Use it in a
    /// `select!` against the work.
    pub async fn aborted(&self) -> ClaimLost {
        loop {
            let notified = self.slot.notify.notified();
            let own = self.own.as_ref().map(|own| own.notify.notified());
            if let Some(reason) = self.reason() {
                return reason;
            }
            match own {
                Some(own) => tokio::select! {
                    () = notified => {}
                    () = own => {}
                },
                None => notified.await,
            }
        }
    }

    /// The instant, on tokio's clock, by which this item's work must have
    /// ended: the send time of the claim's last confirmed renewal plus the
    /// lease's write tolerance, one renewal interval and the abort grace
    /// (`T + W + I + G`). The runner lapses the claim, firing this signal,
    /// the abort grace before it at the latest, and drops the perform at it;
    /// no other process may reclaim the item until after it (by the skew
    /// allowance at least). Every confirmed renewal moves it later. Bound
    /// your own I/O by it (`tokio::time::timeout_at(deadline, io)`), or hand
    /// it to whatever must end the work when this process cannot, as the
    /// command-line tool hands it to each command's guard process.
    ///
    /// `None` when the job does not renew its claims ([`super::Job::HEARTBEAT`]
    /// is false: nothing bounds the work then), or once the perform has
    /// answered (what is left, writing its outcome, is not bounded by it).
    pub fn deadline(&self) -> Option<Instant> {
        self.slot.deadline(self.generation)
    }

    /// Resolves with [`AbortSignal::deadline`] once it differs from `seen`
    /// (at once if it already does): each confirmed renewal that moves it.
    /// Pending for as long as it does not move.
    pub async fn deadline_moved(&self, seen: Option<Instant>) -> Option<Instant> {
        loop {
            let moved = self.slot.moved.notified();
            let now = self.deadline();
            if now != seen {
                return now;
            }
            moved.await;
        }
    }

    /// `Err(ClaimLost)` once aborted: `signal.check()?` between stages.
    ///
    /// # Errors
    /// [`ClaimLost`] when the signal fired.
    pub fn check(&self) -> Result<(), ClaimLost> {
        self.reason().map_or(Ok(()), Err)
    }
}
