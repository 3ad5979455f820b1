//! The fenced store calls a heartbeat loop makes.

use leasehold_core::Millis;
use leasehold_core::lease::{FenceOutcome, OwnerId};
use std::future::Future;

/// The two fenced writes that keep a run's lease, as a store answers them.
///
/// Both stamp the run's persisted heartbeat with `at` (ms since the Unix
/// epoch, the loop's clock reading when it sent the call: peers judge
/// staleness from that stamp) when, and only when, `owner` still holds the
/// run's fence:
///
/// - `Ok(FenceOutcome::Updated)`: the stamp landed; the lease is renewed.
/// - `Ok(` any other outcome `)`: the fence is lost (another owner, or the
///   run is no longer running). Durable evidence: the loop ends at once.
/// - `Err(_)`: the store could not answer (connection, timeout, busy). The
///   lease is as it was; the loop tolerates it up to the write tolerance.
///
/// Calls may take arbitrarily long: the loop bounds the one that decides
/// (the reconfirmation) and keeps going while a renewal hangs. Dropping a
/// returned future abandons the call; its outcome is then ignored.
pub trait LeaseStore: Send + Sync {
    /// Why a call could not be answered. Logged with `Display`.
    type Error: std::error::Error + Send + 'static;

    /// One pulse's
    /// renewal of `run_id`'s lease for `owner`, stamped `at`.
    fn heartbeat(
        &self,
        run_id: &str,
        owner: &OwnerId,
        at: Millis,
    ) -> impl Future<Output = Result<FenceOutcome, Self::Error>> + Send;

    /// The one
    /// reconfirmation at the write-tolerance deadline. Like `heartbeat`, but
    /// it must also refuse (answer a lost fence) when a claim on the run is
    /// pending, so a peer that has started to take the run over wins. Made on
    /// its own connection or statement: it may run while a `heartbeat` write
    /// hangs.
    fn reconfirm(
        &self,
        run_id: &str,
        owner: &OwnerId,
        at: Millis,
    ) -> impl Future<Output = Result<FenceOutcome, Self::Error>> + Send;
}
