//! `leasehold purge`: deleting finished jobs past a retention span.

use crate::args::PurgeArgs;
use crate::fail::CliError;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{JobState, Store};

/// Purges the succeeded jobs (and, with `--dead`, the dead-lettered ones)
/// that finished more than `--older-than` ago; prints how many.
pub async fn purge(store: &Store, args: &PurgeArgs) -> Result<(), CliError> {
    let states: &[JobState] = if args.dead { &[JobState::Succeeded, JobState::Dead] } else { &[JobState::Succeeded] };
    let now = TokioClock::new().now();
    let purged = store.purge(states, args.older_than, now).await?;
    let which = if args.dead { "succeeded or dead-lettered" } else { "succeeded" };
    println!(
        "purged {purged} job{}: {which} more than {} ago",
        if purged == 1 { "" } else { "s" },
        humantime::format_duration(args.older_than)
    );
    Ok(())
}
