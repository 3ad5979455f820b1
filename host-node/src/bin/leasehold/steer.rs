//! `leasehold cancel`, `retry`, `pause`, `resume`: steering a queue while it
//! runs (see `leasehold::store::Store::cancel` and its neighbours).

use crate::fail::CliError;
use clap::Args;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{JobId, JobState, Retried, Store};
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

/// `leasehold cancel`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("which").required(true).multiple(false).args(["ids", "queue"]))]
pub struct CancelArgs {
    /// The job ids (all are cancelled, or none is).
    #[arg(value_name = "JOB_ID", value_parser = crate::args::parse_job_id)]
    pub ids: Vec<i64>,
    /// Why, shown by `show` beside who cancelled and when.
    #[arg(long)]
    pub reason: Option<String>,
    /// Every job of this queue in --state (asks first; --yes does not).
    #[arg(long, requires = "state")]
    pub queue: Option<String>,
    /// With --queue: queued (which includes the scheduled ones) or running.
    #[arg(long, requires = "queue", value_parser = parse_open_state)]
    pub state: Option<JobState>,
    /// Do not ask before cancelling a whole queue's jobs.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `leasehold retry`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("which").required(true).multiple(false).args(["ids", "dead"]))]
pub struct RetryArgs {
    /// The job ids, each dead-lettered or cancelled (all are queued again, or none is).
    #[arg(value_name = "JOB_ID", value_parser = crate::args::parse_job_id)]
    pub ids: Vec<i64>,
    /// Every dead-lettered job (of --queue, or of every queue).
    #[arg(long)]
    pub dead: bool,
    /// With --dead: only this queue's.
    #[arg(long, requires = "dead")]
    pub queue: Option<String>,
}

/// `leasehold pause` and `resume`.
#[derive(Debug, Args)]
pub struct QueueArg {
    /// The queue.
    pub queue: String,
}

fn parse_open_state(text: &str) -> Result<JobState, String> {
    match JobState::parse(text) {
        Some(state @ (JobState::Queued | JobState::Running)) => Ok(state),
        _ if text == "scheduled" => Ok(JobState::Queued),
        _ => Err(format!("{text:?} cannot be cancelled: give queued (scheduled ones included) or running")),
    }
}

/// Who steers, as recorded: `NAME@host`, NAME as [`user_name`] finds it.
pub fn who() -> String {
    let user = user_name(std::env::var("USER").ok(), || whoami::username().ok(), rustix::process::geteuid().as_raw());
    format!("{user}@{}", leasehold::liveness::current_owner().host_id)
}

/// `$USER`; where it is unset or empty (a service, cron, a container), the
/// name of the user this process runs as in the system's user database;
/// where that has none either, `uid N`.
fn user_name(env: Option<String>, account: impl FnOnce() -> Option<String>, uid: u32) -> String {
    let named = |name: &String| !name.trim().is_empty();
    env.filter(named).or_else(|| account().filter(named)).unwrap_or_else(|| format!("uid {uid}"))
}

fn ids(ids: &[i64]) -> Vec<JobId> {
    ids.iter().copied().map(JobId).collect()
}

fn listed(ids: &[JobId]) -> String {
    ids.iter().map(JobId::to_string).collect::<Vec<_>>().join(" ")
}

/// `leasehold cancel`.
pub async fn cancel(store: &Store, args: &CancelArgs) -> Result<(), CliError> {
    let now = TokioClock::new().now();
    let reason = args.reason.as_deref();
    let (Some(queue), Some(state)) = (&args.queue, args.state) else {
        let done = store.cancel(&ids(&args.ids), reason, &who(), now).await.map_err(crate::fail::in_flags)?;
        outln!("cancelled {}", listed(&done));
        return Ok(());
    };
    let count = store.counts(now).await?.into_iter().find(|c| &c.queue == queue).map_or(0, |c| match state {
        JobState::Running => c.running,
        _ => c.waiting(),
    });
    if count > 0 && !args.yes {
        confirm(&format!("cancel the {count} {} job(s) of queue {queue}?", state.as_str()))?;
    }
    let done = store.cancel_queue(queue, state, reason, &who(), now).await.map_err(crate::fail::in_flags)?;
    match done.as_slice() {
        [] => outln!("no {} job on queue {queue}: nothing cancelled", state.as_str()),
        _ => outln!("cancelled {} job(s): {}", done.len(), listed(&done)),
    }
    Ok(())
}

/// Asks `question` on stderr and reads the answer from a terminal: only
/// `y` or `yes` goes on.
fn confirm(question: &str) -> Result<(), CliError> {
    if !std::io::stdin().is_terminal() {
        return Err(CliError::input(format!("{question} Not asked (standard input is not a terminal): give --yes; nothing was cancelled")));
    }
    let _ = write!(std::io::stderr(), "{question} [y/N] ").and_then(|()| std::io::stderr().flush());
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(CliError::input("not confirmed: nothing was cancelled")),
    }
}

/// `leasehold retry`.
pub async fn retry(store: &Store, args: &RetryArgs) -> Result<(), CliError> {
    let now = TokioClock::new().now();
    if args.dead {
        let done = store.retry_dead(args.queue.as_deref(), now).await?;
        let queue = args.queue.as_deref().map(|q| format!(" on queue {q}")).unwrap_or_default();
        match done.as_slice() {
            [] => outln!("no dead-lettered job{queue}: nothing queued again"),
            _ => outln!("queued again {} job(s){queue}: {}", done.len(), listed_retried(&done)),
        }
        say_waits(&done);
        return Ok(());
    }
    let done = store.retry(&ids(&args.ids), now).await?;
    match done.as_slice() {
        [one] => outln!("queued again {}{}", one.id, retry_wait(one).map(|wait| format!(", {wait}")).unwrap_or_default()),
        _ => {
            outln!("queued again {}", listed_retried(&done));
            say_waits(&done);
        }
    }
    Ok(())
}

fn listed_retried(done: &[Retried]) -> String {
    listed(&done.iter().map(|r| r.id).collect::<Vec<_>>())
}

/// A line for each job of `done` that is not claimed at once, saying when.
fn say_waits(done: &[Retried]) {
    for job in done {
        if let Some(wait) = retry_wait(job) {
            outln!("job {}: {wait}", job.id);
        }
    }
}

/// When a retried job may be claimed, in words, as the store answered the
/// retry; `None` for one due at once. Only a job cancelled while it ran
/// waits: for its attempt's lease to end, since that attempt's worker may
/// not have heard of the cancel and stops its command only by then; and on
/// SQLite until a worker has watched that lease for its window itself.
pub fn retry_wait(job: &Retried) -> Option<String> {
    let due_in = job.due_in();
    let due = (!due_in.is_zero())
        .then(|| format!("due in {} (when the lease of its cancelled attempt ends; that attempt's command is stopped by then)", span(due_in)));
    let Some(window) = job.watch else { return due };
    let watched = format!(
        "a worker claims it only once it has itself seen the lease of its cancelled attempt unrenewed for that lease's \
         window ({}), so not sooner than that from now",
        span(window)
    );
    Some(match due {
        Some(due) => format!("{due}; on SQLite, {watched}"),
        None => format!("due now, but on SQLite {watched}"),
    })
}

/// A span as the retry's messages say it: tenths of a second under a
/// minute, rounded up (never earlier than it is), whole seconds above.
fn span(d: Duration) -> String {
    let tenths = d.as_millis().div_ceil(100);
    match tenths {
        _ if tenths >= 600 => humantime::format_duration(Duration::from_secs(tenths.div_ceil(10) as u64)).to_string(),
        _ if tenths.is_multiple_of(10) => format!("{} s", tenths / 10),
        _ => format!("{}.{} s", tenths / 10, tenths % 10),
    }
}

/// `leasehold pause`.
pub async fn pause(store: &Store, args: &QueueArg) -> Result<(), CliError> {
    let now = TokioClock::new().now();
    if store.pause_queue(&args.queue, &who(), now).await? {
        outln!("paused queue {}: workers claim none of its jobs until `leasehold resume {}`", args.queue, args.queue);
    } else {
        outln!("queue {} was paused already", args.queue);
    }
    Ok(())
}

/// `leasehold resume`: exits 0 whether it resumed the queue or the queue
/// was not paused, as `pause` does for a queue paused already.
pub async fn resume(store: &Store, args: &QueueArg) -> Result<(), CliError> {
    let resumed = store.resume_queue(&args.queue).await?;
    outln!("{}", resume_message(&args.queue, resumed));
    Ok(())
}

/// What `resume` and the dashboard's resume say: whether `queue` was
/// `resumed` or was not paused.
pub fn resume_message(queue: &str, resumed: bool) -> String {
    if resumed {
        format!("resumed queue {queue}")
    } else {
        format!("queue {queue} was not paused: its jobs are claimed as usual (nothing to resume)")
    }
}

#[cfg(test)]
mod tests {
    use super::{span, user_name};
    use std::time::Duration;

    #[test]
    fn a_wait_is_said_in_tenths_of_a_second_rounded_up_and_in_whole_seconds_past_a_minute() {
        let said = |ms| span(Duration::from_millis(ms));
        assert_eq!(said(4_200), "4.2 s");
        assert_eq!(said(4_201), "4.3 s", "never sooner than it is");
        assert_eq!(said(1), "0.1 s");
        assert_eq!(said(30_000), "30 s");
        assert_eq!(said(59_999), "1m");
        assert_eq!(said(60_000), "1m");
        assert_eq!(said(125_500), "2m 6s");
    }

    #[test]
    fn a_steerer_is_named_by_user_else_by_the_user_database_else_by_uid() {
        let account = || Some("ada".to_owned());
        assert_eq!(user_name(Some("grace".into()), account, 1000), "grace");
        assert_eq!(user_name(None, account, 1000), "ada");
        assert_eq!(user_name(Some(String::new()), account, 1000), "ada");
        assert_eq!(user_name(None, || None, 1000), "uid 1000");
        assert_eq!(user_name(Some(" ".into()), || Some(String::new()), 0), "uid 0");
    }
}
