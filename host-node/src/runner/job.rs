//! The host's job trait,
//! `Send`-bounded for tokio.

use super::signal::AbortSignal;
use leasehold_core::Millis;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// Any error a job callback raises.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A job a [`super::JobRunner`] runs: one claim attempt at a time, the work for
/// one claimed item, and optionally the fenced renewal of its lease.
///
/// Futures may borrow `&self`; items are passed by value (the runner keeps a
/// clone for renewals only when [`Job::HEARTBEAT`] is true).
pub trait Job: Send + Sync + 'static {
    /// One claimed item: whatever `perform` needs (an id, a row).
    type Item: Clone + Send + Sync + 'static;

    /// Whether [`Job::heartbeat`] renews the lease. When false, the claim is held by wall clock alone.
    const HEARTBEAT: bool = false;

    /// One claim attempt at `at` (ms since the Unix
    /// epoch, from the runner's clock). `Ok(None)`: nothing to claim, the pass
    /// ends. `Err`: logged as `<name> claim failed`, traced, and the loop
    /// backs off.
    fn claim(&self, at: Millis) -> impl Future<Output = Result<Option<Self::Item>, BoxError>> + Send;

    /// The work for one item. When the claim
    /// is lost or lapses, `signal` fires; work that observes it must stop
    /// without settling the item. A perform still running one grace period
    /// after the signal fired is dropped (counted `claimLost`).
    fn perform(&self, item: Self::Item, signal: AbortSignal) -> impl Future<Output = Result<(), BoxError>> + Send;

    /// Renew the claim, answering whether the
    /// renewal landed (`false`: another process holds the item now). `Err`:
    /// the store could not answer; the lease is as it was. Called only when
    /// [`Job::HEARTBEAT`] is true.
    fn heartbeat(&self, item: Self::Item, at: Millis) -> impl Future<Output = Result<bool, BoxError>> + Send {
        let _ = (item, at);
        async { Ok(true) }
    }
}

/// An error payload as the runner carries it: cheap to clone (it is both
/// logged and traced), displayed as the original error.
#[derive(Clone)]
pub struct JobError(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl JobError {
    /// Wraps a raised error.
    pub fn new(error: BoxError) -> Self {
        JobError(Arc::from(error))
    }

    /// The original error.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
