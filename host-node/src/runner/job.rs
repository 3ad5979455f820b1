//! The host's job trait,
//! `Send`-bounded for tokio.

use super::signal::AbortSignal;
use leasehold_core::Millis;
use leasehold_core::lease::LeasePolicy;
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

    /// Whether `perform`'s work runs in a process of its own that a guard
    /// ends by the item's exit deadline, `perform` only waiting to read how
    /// it ended (the `leasehold` command-line tool's commands). Default
    /// false: the work runs in `perform` itself, and a perform aborted late
    /// (this process frozen or starved past its lapse) is dropped by the exit
    /// deadline, or at once past it, rather than after a whole grace, so work
    /// that ignores its signal stops at its next await before a peer may
    /// reclaim the item. True leaves such a perform its whole grace, time to
    /// read the exit of work its guard saw end meanwhile.
    const GUARDED: bool = false;

    /// The lease this job's claims and renewals stamp in its store, when it
    /// keeps one there (a [`crate::worker::Worker`] does); `None` (default):
    /// none. [`super::JobRunnerBuilder::spawn`] refuses a runner whose
    /// stale window is longer than it: other workers take over a job once
    /// the store's lease runs out, and the runner stops the work only at the
    /// end of its stale window.
    fn store_lease(&self) -> Option<std::time::Duration> {
        None
    }

    /// Told once, at [`super::JobRunnerBuilder::spawn`], the lease policy
    /// each claim is supervised under, when the job renews
    /// ([`Job::HEARTBEAT`]). A job that hands a claim made earlier to a later
    /// `claim` (a page of jobs claimed in one statement) renews it first
    /// when its lease was stamped longer than
    /// [`LeasePolicy::claim_age_tolerance_ms`] before that call, as the
    /// runner measures the lease from the call. Default: nothing.
    fn bind_lease(&self, policy: &LeasePolicy) {
        let _ = policy;
    }

    /// The queue this job claims from in its store, when it claims from one
    /// (a [`crate::worker::Worker`] does); `None` (default): none.
    /// [`super::JobRunnerBuilder::spawn`] refuses a name that breaks the
    /// rule of queue names ([`leasehold_core::queue::rules::check_queue_name`]),
    /// which every claim on it would fail.
    fn store_queue(&self) -> Option<&str> {
        None
    }

    /// One claim attempt at `at` (ms since the Unix
    /// epoch, from the runner's clock). `Ok(None)`: nothing to claim, the pass
    /// ends. `Err`: logged as `<name> claim failed`, traced, and the loop
    /// backs off.
    fn claim(&self, at: Millis) -> impl Future<Output = Result<Option<Self::Item>, BoxError>> + Send;

    /// The work for one item. When the claim
    /// is lost or lapses, `signal` fires; work that observes it must stop
    /// without settling the item. A perform still running once the abort
    /// grace has passed after the signal fired is dropped (counted
    /// `claimLost`; see [`super::JobRunnerBuilder::abort_grace`]), which
    /// falls before any other process may reclaim the item.
    fn perform(&self, item: Self::Item, signal: AbortSignal) -> impl Future<Output = Result<(), BoxError>> + Send;

    /// Renew the claim, answering whether the
    /// renewal landed (`false`: another process holds the item now). `Err`:
    /// the store could not answer; the lease is as it was. Called only when
    /// [`Job::HEARTBEAT`] is true.
    fn heartbeat(&self, item: Self::Item, at: Millis) -> impl Future<Output = Result<bool, BoxError>> + Send {
        let _ = (item, at);
        async { Ok(true) }
    }

    /// Whether outcomes are written by [`Job::settle`], in a phase of their
    /// own, rather than inside `perform` (the default, as the JS API does).
    ///
    /// When true, `perform` does the work and answers its outcome without
    /// writing it: `Ok(())`, or an error of its own. An error that is the
    /// signal's [`super::ClaimLost`] (from [`AbortSignal::check`] or
    /// [`AbortSignal::aborted`]) means the work stopped without an outcome:
    /// nothing is settled. Any other outcome — reached even after the signal
    /// fired, within the grace — is handed to `settle`, which the runner
    /// calls again (100 ms, doubling to 1.5 s) for as long as it raises, and
    /// never drops: not after a lapse, not on `stop`, `quiesce` or `dispose`
    /// (which wait for it). The item keeps its worker and its renewals go
    /// on while they land. Counted once settled: `performed` for `Ok`,
    /// `failed` for an error; `claimLost` when the fence refused it. A claim
    /// heard too late to perform is handed back with [`Job::release`].
    const SETTLES: bool = false;

    /// Writes the outcome `perform` reached for `item` (see
    /// [`Job::SETTLES`]) with a fenced write. Answers whether it landed or
    /// the fence refused it (another claimant holds the item now, or it is
    /// gone); `Err` means the store could not answer, and the runner tries
    /// again. Called only when [`Job::SETTLES`] is true, possibly many times
    /// for one outcome: it must be safe to repeat (a fenced write is).
    fn settle(&self, item: Self::Item, outcome: Result<(), JobError>) -> impl Future<Output = Result<Settled, BoxError>> + Send {
        let _ = (item, outcome);
        async { Ok(Settled::Landed) }
    }

    /// Hands a claimed `item` back unperformed with a fenced write, so it
    /// can be claimed again at once (its attempt not counted): the runner
    /// calls it for a claim heard after its write tolerance was spent, which
    /// it does not perform. `Err`: logged `<name> release failed`; the item
    /// comes back once its lease is stale. Called only when
    /// [`Job::SETTLES`] is true.
    fn release(&self, item: Self::Item) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = item;
        async { Ok(()) }
    }
}

/// How a [`Job::settle`] write ended when the store answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The outcome is written.
    Landed,
    /// The fence refused it: nothing was written, the attempt is lost.
    FenceRefused,
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

/// As its display string, as JS shows a thrown error's text.
impl serde::Serialize for JobError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Debug for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
