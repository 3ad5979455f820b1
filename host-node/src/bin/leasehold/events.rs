//! `leasehold events`: the job events and the workers' runner trace.
//!
//! Job events (`job-done`, `job-retrying`, `job-dead-lettered`, `job-lost`,
//! `job-released`, with the job id and attempt) come from the store's
//! settlements journal, which each settle statement appends to in its own
//! transaction ([`Store::settlements`]): a settlement committed just before
//! its worker was killed is there, a deleted job's too, until `purge`
//! removes it. `--follow` follows the journal with a watermark that skips no
//! late commit and repeats nothing ([`JournalCursor`]).
//!
//! The runner trace (passes, claims, renewals by position in the pass,
//! claim failures, lost claims) is each worker process's own: its runners
//! record it through the pump into its log file, and `events` merges the
//! logs with the journal by time: the job events and the runner's failures
//! as lines, everything with `--json`. Each worker's log also derives its
//! queue's settlements from the journal, with the log's watermark
//! ([`SettlementSource`]), so the log file alone holds every job event, a
//! settlement committed just before a worker was killed included (the next
//! worker's log derives it); `events` leaves the logs' job events out, as
//! the journal holds them.
//!
//! One file per worker slot, in one folder: an event log has a single writer,
//! and several workers share one database. A process takes the first slot
//! whose lock file (`worker-N.lock`, an exclusive `flock` the kernel drops
//! when the process dies, even by SIGKILL) is free, and appends to
//! `worker-N.log`; so logs are reused run after run instead of piling up. The
//! folder is `FILE.events` next to a SQLite file, `./leasehold.events` for
//! PostgreSQL, or `--events PATH`.

use crate::fail::CliError;
use leasehold::eventlog::{EventRecord, LoggedEvent, ReadError, read_log, read_log_before_damage};
use leasehold::pump::{
    DEFAULT_TRACE_JOURNAL_CAPACITY, EventSource, Following, Pump, PumpOptions, SETTLEMENTS_SOURCE, SettlementSource,
    TraceJournal, settlement_event,
};
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{JournalCursor, SettlementRecord, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use rustix::fs::{FlockOperation, flock};
use std::fs::{File, OpenOptions};
use std::time::{Duration, UNIX_EPOCH};

/// The event folder for `database_url`, unless `--events` named one.
pub fn folder(database_url: &str, chosen: Option<&Path>) -> PathBuf {
    if let Some(path) = chosen {
        return path.to_path_buf();
    }
    match sqlite_file(database_url) {
        Some(file) => {
            let mut name = file.into_os_string();
            name.push(".events");
            PathBuf::from(name)
        }
        None => PathBuf::from("leasehold.events"),
    }
}

/// The file of a `sqlite://PATH` / `sqlite:PATH` URL (`None` for memory and
/// other backends).
pub fn sqlite_file(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// How often a worker's event log reads the store's settlements journal.
const SETTLEMENTS_EVERY: Duration = Duration::from_millis(500);

/// A worker's recording: the journal its runner feeds, the settlements the
/// store journals, and the pump that logs both.
pub struct Recorder {
    pub journal: Arc<TraceJournal>,
    pump: Pump,
    settlements: Following,
    /// Holds the slot's lock for as long as the log is written.
    _slot: File,
}

/// Most worker slots a folder offers at once.
const MAX_SLOTS: u32 = 1024;

/// Locks the first free slot of `folder`: its lock file and its log's path.
fn take_slot(folder: &Path) -> Result<(File, PathBuf), CliError> {
    for n in 0..MAX_SLOTS {
        let lock_path = folder.join(format!("worker-{n}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| CliError::input(format!("cannot open {}: {e}", lock_path.display())))?;
        if flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok() {
            return Ok((file, folder.join(format!("worker-{n}.log"))));
        }
    }
    Err(CliError::input(format!("all {MAX_SLOTS} event log slots in {} are taken", folder.display())))
}

impl Recorder {
    /// Opens this process's log in `folder` (created if missing) for the
    /// runner named `runner`, deriving `queue`'s settlements from `store`'s
    /// journal past the log's watermark.
    pub async fn open(folder: &Path, runner: &str, store: &Store, queue: &str) -> Result<Recorder, CliError> {
        if folder.exists() && !folder.is_dir() {
            // create_dir_all said only "File exists".
            return Err(CliError::input(format!(
                "the event log folder {} is a file, not a folder: give --events a folder (made if missing)",
                folder.display()
            )));
        }
        std::fs::create_dir_all(folder)
            .map_err(|e| CliError::input(format!("cannot create the event log folder {}: {e}", folder.display())))?;
        let (slot, path) = take_slot(folder)?;
        let mut builder = Pump::builder(PumpOptions::new(&path));
        let journal = Arc::new(TraceJournal::new(runner, Some(builder.kicker()), DEFAULT_TRACE_JOURNAL_CAPACITY));
        builder.source(journal.source_name(), Arc::clone(&journal) as Arc<dyn EventSource>);
        let source = Arc::new(SettlementSource::new(Some(queue)));
        builder.source(SETTLEMENTS_SOURCE, Arc::clone(&source) as Arc<dyn EventSource>);
        let failed = |e| CliError::input(format!("cannot open the event log {}: {e}", path.display()));
        let pump = builder.open().await.map_err(failed)?;
        let from = pump.status().await.map_err(failed)?.marks.get(SETTLEMENTS_SOURCE).copied().unwrap_or(0);
        let settlements = source.follow(store.clone(), from, pump.kicker(), SETTLEMENTS_EVERY);
        Ok(Recorder { journal, pump, settlements, _slot: slot })
    }

    /// Reads the settlements journal once more, logs what is left and closes
    /// the log. A failure is reported, not fatal: the jobs themselves are
    /// settled in the database, and the next worker's log derives them.
    pub async fn close(self) {
        self.settlements.finish().await;
        if let Err(e) = self.pump.close().await {
            tracing::warn!("event log not closed cleanly: {e}");
        }
    }
}

/// Where one log file was read up to.
#[derive(Default)]
struct Cursor {
    epoch: u64,
    next: u64,
    /// What was last said of its damage (said once, not every poll).
    damage: Option<String>,
}

/// `leasehold events`: prints every settlement in `store`'s journal and
/// every event logged in `folder`, in time order; with `follow`, keeps
/// polling both for new ones.
pub async fn show(store: &Store, folder: &Path, follow: bool, json: bool) -> Result<(), CliError> {
    // A mistyped --events (or one left out where the workers were given one) would
    // leave out every pass without a word: said once the database was read.
    let mut missing = (!folder.is_dir()).then(|| {
        let shown = if follow { "until it is made, only the settlements are shown" } else { "only the settlements are shown" };
        format!(
            "leasehold: no event log folder at {} (no worker has logged there yet, or the workers were given another \
             --events): the runners' passes come from there, so {shown}",
            folder.display()
        )
    });
    let mut cursors: BTreeMap<PathBuf, Cursor> = BTreeMap::new();
    let mut journal = JournalCursor::default();
    loop {
        let mut fresh: Vec<EventRecord> =
            settlements(store, &mut journal).await?.iter().map(settlement_event).collect();
        if let Some(note) = missing.take() {
            errln!("{note}");
        }
        fresh.extend(
            read_new(folder, &mut cursors)?.into_iter().map(|logged| logged.event).filter(|e| !e.kind.starts_with("job-")),
        );
        fresh.sort_by_key(|e| e.at);
        let text: String = fresh.iter().filter_map(|event| line(event, json)).map(|l| l + "\n").collect();
        if !crate::fail::print(&text) {
            return Ok(()); // the reader went away
        }
        if !follow {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The settlements since `journal`; a database whose schema predates the
/// journal is said to be one.
async fn settlements(store: &Store, journal: &mut JournalCursor) -> Result<Vec<SettlementRecord>, CliError> {
    match store.settlements(journal).await {
        Err(e) if crate::fail::missing_table(&e) == Some("leasehold_settlements") => {
            // No journal: no queue at all (said as such), or one an older leasehold made.
            if let Err(e) = store.counts(TokioClock::new().now()).await
                && crate::fail::missing_table(&e) == Some("leasehold_jobs")
            {
                return Err(e.into());
            }
            Err(CliError::input(
                "the database has no settlements journal yet (it was last used by an older leasehold): \
                 `leasehold work` or `enqueue` adds it"
                    .to_owned(),
            ))
        }
        other => Ok(other?),
    }
}

/// Events added to the folder's logs since the cursors.
fn read_new(folder: &Path, cursors: &mut BTreeMap<PathBuf, Cursor>) -> Result<Vec<LoggedEvent>, CliError> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Ok(Vec::new()) };
    let mut fresh = Vec::new();
    for path in entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "log")) {
        let cursor = cursors.entry(path.clone()).or_default();
        let read = match read_log(&path, cursor.next) {
            Ok(read) => {
                cursor.damage = None;
                read
            }
            // Gone (compacted away) or mid-creation: nothing to show yet.
            Err(ReadError::Missing(_)) => continue,
            // One damaged log must not hide the others' history, nor its own
            // whole frames before the damage.
            Err(_) => match read_log_before_damage(&path, cursor.next) {
                Ok((read, damage)) => {
                    if let Some(damage) = damage {
                        note_damage(cursor, &damage, "the events after it are not shown");
                    }
                    read
                }
                Err(ReadError::Missing(_)) => continue,
                Err(e) => {
                    note_damage(cursor, &e, "its events are not shown");
                    continue;
                }
            },
        };
        if read.epoch != cursor.epoch && cursor.next > 0 {
            // The log was replaced: read it again from its start.
            *cursor = Cursor { epoch: read.epoch, next: 0, damage: None };
            let (again, _) = read_log_before_damage(&path, 0).map_err(|e| CliError::input(e.to_string()))?;
            cursor.next = again.next;
            fresh.extend(again.records);
            continue;
        }
        cursor.epoch = read.epoch;
        cursor.next = read.next;
        fresh.extend(read.records);
    }
    Ok(fresh)
}

/// Says once per damage (not at every poll of `--follow`) that a log is
/// damaged and what of it is not shown.
fn note_damage(cursor: &mut Cursor, damage: &ReadError, what: &str) {
    let text = damage.to_string();
    if cursor.damage.as_deref() != Some(text.as_str()) {
        errln!(
            "leasehold: {text}: {what} (its writer replaces the log when it next opens it and keeps the damaged \
             file beside it)"
        );
        cursor.damage = Some(text);
    }
}

/// Runner trace events that name items by their position in a pass, not by
/// job: the job events say the same with the job id, so lines leave these
/// out (`--json` keeps them).
const ITEM_EVENTS: [&str; 5] = ["pass-start", "claimed", "performed", "item-failed", "heartbeat"];

/// One event as text (`TIME RUNNER TYPE DETAILS`) or as its JSON; `None` for
/// an event lines leave out.
fn line(event: &EventRecord, json: bool) -> Option<String> {
    if json {
        return serde_json::to_string(event).ok();
    }
    if ITEM_EVENTS.contains(&event.kind.as_str()) {
        return None;
    }
    let at = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(event.at));
    if event.source == SETTLEMENTS_SOURCE {
        let queue = event.identity.get("queue").and_then(Value::as_str).unwrap_or_default();
        let owner = match (event.identity.get("pid"), event.identity.get("host").and_then(Value::as_str)) {
            (Some(pid), Some(host)) => format!(" (pid {pid} on {host})"),
            _ => String::new(),
        };
        return Some(format!("{at}  leasehold.{queue}  {:<17} {}{owner}", event.kind, details(&event.kind, &event.body)));
    }
    let runner = event.identity.get("runner").and_then(|r| r.as_str()).unwrap_or(&event.source);
    // Logs from workers that ran one runner per slot name the slot: `leasehold.QUEUE#2`.
    let runner = match event.identity.get("slot").and_then(|s| s.as_u64()) {
        Some(slot) => format!("{runner}#{slot}"),
        None => runner.to_owned(),
    };
    Some(format!("{at}  {runner}  {:<17} {}", event.kind, details(&event.kind, &event.body)))
}

/// The body of an event in words: `job 17 attempt 2: exit code 1, retry at
/// TIME` for job events (the attempt numbered as `show` numbers it; none for
/// a settlement that ended no attempt), the JSON body for the rest.
fn details(kind: &str, body: &Value) -> String {
    let Some(job) = body.get("job").and_then(Value::as_u64).filter(|_| kind.starts_with("job-")) else {
        return if body.is_null() { String::new() } else { body.to_string() };
    };
    let mut text = format!("job {job}");
    if let Some(attempt) = body.get("attempt").and_then(Value::as_u64) {
        text += &format!(" attempt {attempt}");
    }
    if kind == "job-released" {
        text += " handed back unstarted (not counted as an attempt)";
    }
    if let Some(error) = body.get("error").and_then(Value::as_str) {
        text += &format!(": {error}");
    }
    if let Some(at) = body.get("retryAt").and_then(Value::as_u64) {
        text += &format!(", retry at {}", humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(at)));
    }
    text
}
