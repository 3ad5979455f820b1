//! `status`, `jobs`, `show`: reading the queue; and how they (and `events`)
//! connect: read-only.

use crate::fail::CliError;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use leasehold::core::Millis;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::dashboard::ShownState;
use leasehold::store::{AttemptRecord, JobId, JobRecord, JobState, Store, StoreConfig, StoreError};
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, UNIX_EPOCH};

/// Connects to `database` for reading only: a SQLite file is opened
/// read-only (never created, never migrated; see `StoreConfig::read_only`),
/// so `status`, `jobs`, `show` and `events` work on a file or folder this
/// user may not write.
pub async fn connect_read_only(database: &str) -> Result<Store, CliError> {
    Ok(Store::connect_with(database, StoreConfig::default().with_read_only(true)).await?)
}

/// A table with `header`, in the style of every listing.
pub fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(header.to_vec());
    table
}

/// The last instant RFC 3339 can write: 9999-12-31T23:59:59.999Z, in ms
/// since the Unix epoch.
pub const LAST_RFC3339_MS: u64 = 253_402_300_799_999;

/// A time as RFC 3339 UTC with milliseconds; past year 9999 (which RFC 3339
/// cannot write, and the library would panic on), as ms since the epoch.
pub fn time(at: Millis) -> String {
    if at.0 > LAST_RFC3339_MS {
        return format!("{} ms after the Unix epoch (past year 9999)", at.0);
    }
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(at.0)).to_string()
}

/// A job's command line (its payload's `command`, else the payload).
pub fn command(job: &JobRecord) -> String {
    payload_command(&job.payload)
}

/// A payload's command line (its `command`, else the payload as JSON).
pub fn payload_command(payload: &Value) -> String {
    match payload.get("command").and_then(Value::as_str) {
        Some(line) => line.to_owned(),
        None => payload.to_string(),
    }
}

/// Most characters of a command or error a listing's cell shows (`show`
/// prints the whole of it).
const CELL_CHARS: usize = 120;

/// `text` as one cell of a listing: cut at [`CELL_CHARS`] characters with `…`,
/// so that one long command (up to 128 KiB) does not widen every row of the
/// table to its length.
pub fn cell(text: &str) -> String {
    match text.char_indices().nth(CELL_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// `leasehold status`.
pub async fn status(store: &Store) -> Result<(), CliError> {
    let overview = store.overview(TokioClock::new().now()).await?;
    if overview.queues.is_empty() {
        outln!("no jobs");
        return Ok(());
    }
    // The dashboard's states: queued is due and never tried, scheduled not
    // due yet, retrying due again after a failure.
    let mut t = table(&["queue", "queued", "scheduled", "retrying", "running", "succeeded", "dead", "cancelled", "paused"]);
    let about = if overview.succeeded_estimated { "≈" } else { "" };
    for q in overview.queues {
        let c = q.counts;
        let since = q.paused_at_ms.map(|at| format!("since {} by {}", time(Millis(at)), q.paused_by.unwrap_or_default()));
        t.add_row(vec![
            q.queue,
            c.queued.to_string(),
            c.scheduled.to_string(),
            c.retrying.to_string(),
            c.running.to_string(),
            format!("{about}{}", c.succeeded),
            c.dead.to_string(),
            c.cancelled.to_string(),
            since.unwrap_or_default(),
        ]);
    }
    let mut text = format!("{t}\n");
    if overview.succeeded_estimated {
        text.push_str(&format!(
            "≈ succeeded jobs estimated from {} of the {} job ids (`leasehold jobs --state succeeded` lists them)\n",
            overview.sampled_ids, overview.id_span
        ));
    }
    crate::fail::print(&text);
    Ok(())
}

/// `leasehold jobs`.
pub async fn jobs(store: &Store, queue: Option<&str>, state: Option<JobState>, limit: u32) -> Result<(), CliError> {
    // One more than asked for tells whether there are more than shown.
    let mut jobs = store.list_jobs(queue, state, limit.saturating_add(1)).await?;
    if jobs.is_empty() {
        outln!("no jobs");
        return Ok(());
    }
    let more = jobs.len() > limit as usize;
    jobs.truncate(limit as usize);
    let mut t = table(&["id", "queue", "state", "attempts", "created", "command", "last error"]);
    // A queued job is named as `status` counts it: queued, scheduled or retrying.
    let now = TokioClock::new().now();
    for job in jobs {
        t.add_row(vec![
            job.id.to_string(),
            job.queue.clone(),
            ShownState::of(&job, now).as_str().to_owned(),
            format!("{}/{}", job.attempts, job.max_attempts),
            time(job.created_at),
            cell(&command(&job)),
            cell(job.last_error.as_deref().unwrap_or_default()),
        ]);
    }
    let note = if more { format!("(the newest {limit} shown; more with --limit)\n") } else { String::new() };
    crate::fail::print(&format!("{t}\n{note}"));
    Ok(())
}

/// `writeln!` into a `String`, which cannot fail.
macro_rules! say {
    ($o:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($arg)*);
    }};
}

/// `leasehold show ID`.
pub async fn show(store: &Store, id: i64) -> Result<(), CliError> {
    let job = match store.job(JobId(id)).await {
        // Said in the CLI's own terms: which commands delete a job, and
        // where its settlement is still to be read.
        Err(StoreError::UnknownJob(_)) => {
            return Err(CliError::input(format!(
                "unknown job id {id}: never queued, or deleted once finished (by `purge`, or by `work --delete-succeeded`; `leasehold events` still lists how it settled)"
            )));
        }
        found => found?,
    };
    let results: HashMap<u64, Value> = store.results(job.id).await?.into_iter().collect();
    // Written out whole at the end: a reader that goes away (`| head`) ends it
    // quietly, where `println!` would panic.
    let mut o = String::new();
    say!(o, "job {} on queue {}", job.id, job.queue);
    // A job queued by another kind of producer (a `leasehold/postgres` enqueue, a Rust
    // service) carries JSON of its own, not a command line.
    match job.payload.get("command").and_then(Value::as_str) {
        Some(line) => say!(o, "command:   {line}"),
        None => say!(o, "payload:   {}", job.payload),
    }
    say!(o, "state:     {}", ShownState::of(&job, TokioClock::new().now()).as_str());
    say!(o, "attempts:  {} of {}", job.attempts, job.max_attempts);
    say!(o, "created:   {}", time(job.created_at));
    if job.state == JobState::Queued {
        say!(o, "due:       {}", time(job.run_at));
    }
    // A pause is the queue's, not the job's: without this line a queued job
    // of a paused queue looks due and simply never runs.
    if matches!(job.state, JobState::Queued | JobState::Running)
        && let Some(pause) = store.paused_queues().await?.into_iter().find(|p| p.queue == job.queue)
    {
        let queue = &job.queue;
        let since = format!("queue {queue} is paused (since {} by {})", time(pause.paused_at), pause.paused_by);
        match job.state {
            JobState::Running => say!(
                o,
                "paused:    {since}: this job runs on, but should it be retried, the retry is not claimed until `leasehold resume {queue}`"
            ),
            _ => say!(o, "paused:    {since}, so this job is not claimed until `leasehold resume {queue}`"),
        }
    }
    if let Some(finished) = job.finished_at {
        say!(o, "finished:  {} ({} after it was queued)", time(finished), span(job.created_at, finished));
    }
    if let Some(timeout) = job.timeout {
        say!(o, "timeout:   {}", humantime::format_duration(timeout));
    }
    if let Some(key) = &job.idempotency_key {
        say!(o, "idempotency key: {key}");
    }
    if let Some(how) = &job.cancellation {
        let why = how.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
        say!(o, "cancelled: {} by {}{why}", time(how.at), how.by);
    }
    if let Some(error) = &job.last_error {
        say!(o, "last error: {error}");
    }
    for (n, attempt) in job.attempt_log.iter().enumerate() {
        o.push('\n');
        print_attempt(&mut o, n + 1, attempt, results.get(&attempt.token));
    }
    crate::fail::print(&o);
    Ok(())
}

fn span(from: Millis, to: Millis) -> String {
    humantime::format_duration(Duration::from_millis(to.since(from))).to_string()
}

fn print_attempt(o: &mut String, n: usize, attempt: &AttemptRecord, result: Option<&Value>) {
    say!(o, "attempt {n}: {} (fencing token {})", attempt.outcome.as_str(), attempt.token);
    say!(o, "  owner:   {} pid {} ({})", attempt.owner.host_id, attempt.owner.pid, attempt.owner.nonce);
    match attempt.ended_at {
        Some(ended) => say!(o, "  ran:     {} → {} ({})", time(attempt.started_at), time(ended), span(attempt.started_at, ended)),
        None => say!(o, "  ran:     {} → (running)", time(attempt.started_at)),
    }
    if let Some(error) = &attempt.error {
        say!(o, "  error:   {error}");
    }
    let Some(result) = result else { return };
    // What another kind of worker answered (a `leasehold/postgres` handler, a Rust
    // service's `Job`) has no exit code or output: its JSON is the result.
    if result.get("output").is_none() {
        say!(o, "  result:  {result}");
        return;
    }
    match result.get("exitCode").and_then(Value::as_i64) {
        Some(code) => say!(o, "  exit:    {code}"),
        None => say!(o, "  exit:    none"),
    }
    if let Some(error) = result.get("error").and_then(Value::as_str) {
        say!(o, "  result:  {error}");
    }
    let output = result.get("output").and_then(Value::as_str).unwrap_or_default();
    if output.is_empty() {
        say!(o, "  output:  (none)");
    } else {
        say!(o, "  output (last 64 KiB):");
        for line in output.lines() {
            say!(o, "    {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_past_year_9999_are_written_in_ms() {
        assert_eq!(time(Millis(LAST_RFC3339_MS)), "9999-12-31T23:59:59.999Z");
        assert_eq!(time(Millis(LAST_RFC3339_MS + 1)), "253402300800000 ms after the Unix epoch (past year 9999)");
    }
}
