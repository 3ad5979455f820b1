//! The workers' event log: each worker process records each job's
//! settlement (`job-done`, `job-retrying`, `job-dead-lettered`, `job-lost`,
//! with the job id and attempt) and its runner's trace events (passes,
//! claims, renewals, by position in the pass) through the pump into its own
//! log file, and `leasehold events` merges them: the job events and the
//! runner's failures as lines, everything with `--json`.
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
use leasehold::pump::{DEFAULT_TRACE_JOURNAL_CAPACITY, EventDraft, EventSource, Pump, PumpOptions, TraceJournal};
use leasehold::store::ClaimedJob;
use leasehold::worker::Settlement;
use serde_json::{Value, json};
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

/// A worker's recording: the journal its runner feeds and the pump that logs it.
pub struct Recorder {
    pub journal: Arc<TraceJournal>,
    pump: Pump,
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
    /// runner named `runner`.
    pub async fn open(folder: &Path, runner: &str) -> Result<Recorder, CliError> {
        std::fs::create_dir_all(folder)
            .map_err(|e| CliError::input(format!("cannot create the event log folder {}: {e}", folder.display())))?;
        let (slot, path) = take_slot(folder)?;
        let mut builder = Pump::builder(PumpOptions::new(&path));
        let journal = Arc::new(TraceJournal::new(runner, Some(builder.kicker()), DEFAULT_TRACE_JOURNAL_CAPACITY));
        builder.source(journal.source_name(), Arc::clone(&journal) as Arc<dyn EventSource>);
        let pump = builder
            .open()
            .await
            .map_err(|e| CliError::input(format!("cannot open the event log {}: {e}", path.display())))?;
        Ok(Recorder { journal, pump, _slot: slot })
    }

    /// Logs what is left and closes the log. A failure is reported, not
    /// fatal: the jobs themselves are settled in the database.
    pub async fn close(self) {
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

/// `leasehold events`: prints every logged event in time order; with
/// `follow`, keeps polling the folder for new events.
pub async fn show(folder: &Path, follow: bool, json: bool) -> Result<(), CliError> {
    if !folder.is_dir() && !follow {
        return Err(CliError::input(format!("no event log at {} (a worker writes it)", folder.display())));
    }
    let mut cursors: BTreeMap<PathBuf, Cursor> = BTreeMap::new();
    loop {
        let mut fresh = read_new(folder, &mut cursors)?;
        fresh.sort_by_key(|e| e.event.at);
        let text: String = fresh.iter().filter_map(|logged| line(&logged.event, json)).map(|l| l + "\n").collect();
        if !crate::fail::print(&text) {
            return Ok(()); // the reader went away
        }
        if !follow {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
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
        eprintln!(
            "leasehold: {text}: {what} (its writer replaces the log when it next opens it and keeps the damaged \
             file beside it)"
        );
        cursor.damage = Some(text);
    }
}

/// The logged event for one attempt's settlement: type `job-done`,
/// `job-retrying`, `job-dead-lettered` or `job-lost`; body `{"job": id,
/// "attempt": n, "reclaimed": bool}` plus `error` (failures), `retryAt` (ms
/// since the Unix epoch, retries) and `lapsed` (lost claims); stamped now,
/// so it sorts with the runner's events.
pub fn settlement_draft(job: &ClaimedJob, settlement: &Settlement) -> EventDraft {
    let mut body = json!({ "job": job.id.0, "attempt": job.attempt, "reclaimed": job.reclaimed });
    let kind = match settlement {
        Settlement::Completed => "job-done",
        Settlement::Retrying { at, error } => {
            body["error"] = json!(error);
            body["retryAt"] = json!(at.0);
            "job-retrying"
        }
        Settlement::DeadLettered { error } => {
            body["error"] = json!(error);
            "job-dead-lettered"
        }
        Settlement::Lost { lapsed } => {
            body["lapsed"] = json!(lapsed);
            "job-lost"
        }
    };
    EventDraft::new(kind).at(leasehold::pump::unix_now_ms()).body(body)
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
    let runner = event.identity.get("runner").and_then(|r| r.as_str()).unwrap_or(&event.source);
    // A worker runs one runner per slot (see `pool`): `leasehold.QUEUE#2`.
    let runner = match event.identity.get("slot").and_then(|s| s.as_u64()) {
        Some(slot) => format!("{runner}#{slot}"),
        None => runner.to_owned(),
    };
    Some(format!("{at}  {runner}  {:<17} {}", event.kind, details(&event.kind, &event.body)))
}

/// The body of an event in words: `job 17 attempt 2 (reclaimed): exit code
/// 1, retry at TIME` for job events, the JSON body for the rest.
fn details(kind: &str, body: &Value) -> String {
    let Some(job) = body.get("job").and_then(Value::as_u64).filter(|_| kind.starts_with("job-")) else {
        return if body.is_null() { String::new() } else { body.to_string() };
    };
    let mut text = format!("job {job}");
    if let Some(attempt) = body.get("attempt").and_then(Value::as_u64) {
        text += &format!(" attempt {attempt}");
    }
    if body.get("reclaimed").and_then(Value::as_bool) == Some(true) {
        text += " (reclaimed from a lost worker)";
    }
    if let Some(error) = body.get("error").and_then(Value::as_str) {
        text += &format!(": {error}");
    }
    if let Some(at) = body.get("retryAt").and_then(Value::as_u64) {
        text += &format!(", retry at {}", humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(at)));
    }
    match body.get("lapsed").and_then(Value::as_bool) {
        Some(true) => text += ": the lease lapsed (renewals stopped confirming); command stopped, nothing recorded",
        Some(false) => text += ": the claim was lost (another worker holds the job); command stopped, nothing recorded",
        None => {}
    }
    text
}
