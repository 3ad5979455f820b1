//! `leasehold purge`: deleting finished jobs past a retention span.

use crate::args::PurgeArgs;
use crate::fail::CliError;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{JobState, Store};

/// Purges the succeeded jobs (and, with `--dead`, the dead-lettered ones)
/// that finished more than `--older-than` ago, of `--queue` or every queue,
/// the settlements `events` lists that are as old, and the records of
/// workers not seen for as long; prints how many of each.
pub async fn purge(store: &Store, args: &PurgeArgs) -> Result<(), CliError> {
    if i64::try_from(args.older_than.as_millis()).is_err() {
        return Err(CliError::input(format!(
            "--older-than {} is longer than any job can have been finished",
            humantime::format_duration(args.older_than)
        )));
    }
    let states: &[JobState] = if args.dead { &[JobState::Succeeded, JobState::Dead] } else { &[JobState::Succeeded] };
    let now = TokioClock::new().now();
    let purged = store.purge(args.queue.as_deref(), states, args.older_than, now).await?;
    let settlements = store.purge_settlements(args.queue.as_deref(), args.older_than, now).await?;
    let workers = store.purge_workers(args.queue.as_deref(), args.older_than, now).await?;
    let which = if args.dead { "succeeded or dead-lettered" } else { "succeeded" };
    let queue = args.queue.as_deref().map(|q| format!(" on queue {q}")).unwrap_or_default();
    outln!(
        "purged {purged} job{}{queue}: {which} more than {} ago",
        if purged == 1 { "" } else { "s" },
        humantime::format_duration(args.older_than)
    );
    outln!(
        "purged {settlements} settlement{} from the events journal: settled more than {} ago",
        if settlements == 1 { "" } else { "s" },
        humantime::format_duration(args.older_than)
    );
    outln!(
        "purged {workers} worker record{}: not seen for more than {}",
        if workers == 1 { "" } else { "s" },
        humantime::format_duration(args.older_than)
    );
    Ok(())
}
