//! The abort signal a `perform` gets.
//!
//! One signal state per pool slot, reused item after item; a signal handed to
//! an earlier item never sees a later item's abort (its generation differs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

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
}

impl SlotSignal {
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
}

impl AbortSignal {
    pub(crate) fn new(slot: Arc<SlotSignal>, generation: u32, job: Arc<str>) -> Self {
        AbortSignal { slot, generation, job }
    }

    /// Whether the claim was lost or lapsed.
    pub fn is_aborted(&self) -> bool {
        self.slot.reason(self.generation) != NOT_ABORTED
    }

    /// The reason, once aborted.
    pub fn reason(&self) -> Option<ClaimLost> {
        match self.slot.reason(self.generation) {
            NOT_ABORTED => None,
            r => Some(ClaimLost { job: self.job.clone(), lapsed: r == LAPSED }),
        }
    }

    /// Resolves when the signal fires (at once if it has). Use it in a
    /// `select!` against the work.
    pub async fn aborted(&self) -> ClaimLost {
        loop {
            let notified = self.slot.notify.notified();
            if let Some(reason) = self.reason() {
                return reason;
            }
            notified.await;
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
