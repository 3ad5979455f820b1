//! Owned work raced against its lease.

use super::{Clock, HeartbeatLoopOptions, LeaseEnded, LeaseStore, heartbeat_loop};
use leasehold_core::lease::{LeasePolicy, OwnerId, PolicyError};
use std::future::Future;

/// Which side of [`run_supervised`] ended first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Supervised<T> {
    /// The work completed with this output while the lease held; heartbeats
    /// stopped with it.
    Finished(T),
    /// The lease was lost or lapsed first; the work was dropped where it
    /// stood (at its last `.await`).
    Ended(LeaseEnded),
}

/// Runs `work` under `run_id`'s lease for `owner`: the [`heartbeat_loop`]
/// keeps the lease while `work` runs; whichever ends first ends both.
///
/// The lease ending drops `work` at once — after `options.on_lapse` on a
/// lapse, before anything else on a lost fence — and answers
/// [`Supervised::Ended`]. The work completing drops the loop (abandoning any
/// call in flight) and answers [`Supervised::Finished`]. When both are ready
/// in the same poll the work wins: it has already done everything, and
/// whatever it settles next goes through the store's fence anyway, so
/// keeping its output loses nothing and risks nothing.
///
/// Work that must clean up when dropped should do so in `Drop`; work that
/// must not be cut at an arbitrary `.await` should race [`heartbeat_loop`]
/// itself with its own cancellation.
///
/// # Errors
///
/// An unsafe `policy`, as [`heartbeat_loop`] refuses it; `work` is then
/// dropped unpolled.
///
/// # Examples
///
/// A run kept by a store that stamps its heartbeat (here one that always
/// lands; a real one writes under the run's fence, as the SQL stores do):
///
/// ```
/// use leasehold::core::lease::{FenceOutcome, LeasePolicy, OwnerId};
/// use leasehold::core::Millis;
/// use leasehold::lease::{run_supervised, HeartbeatLoopOptions, LeaseStore, Supervised};
/// use leasehold::liveness::current_owner;
/// use leasehold::runner::TokioClock;
///
/// struct Runs;
///
/// impl LeaseStore for Runs {
///     type Error = std::io::Error;
///     async fn heartbeat(&self, _run: &str, _owner: &OwnerId, _at: Millis) -> std::io::Result<FenceOutcome> {
///         Ok(FenceOutcome::Updated)
///     }
///     async fn reconfirm(&self, _run: &str, _owner: &OwnerId, _at: Millis) -> std::io::Result<FenceOutcome> {
///         Ok(FenceOutcome::Updated)
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let work = async { 6 * 7 };
/// let policy = LeasePolicy::DEFAULT;
/// let outcome = run_supervised(work, &Runs, "nightly-report", &current_owner(), policy, TokioClock::new(), HeartbeatLoopOptions::default())
///     .await
///     .expect("the default policy is safe");
/// assert!(matches!(outcome, Supervised::Finished(42)));
/// # }
/// ```
pub async fn run_supervised<W: Future, S: LeaseStore, C: Clock>(
    work: W,
    store: &S,
    run_id: &str,
    owner: &OwnerId,
    policy: LeasePolicy,
    clock: C,
    options: HeartbeatLoopOptions,
) -> Result<Supervised<W::Output>, PolicyError> {
    let lease = heartbeat_loop(store, run_id, owner, policy, clock, options)?;
    Ok(tokio::select! {
        biased;
        output = work => Supervised::Finished(output),
        ended = lease => Supervised::Ended(ended),
    })
}
