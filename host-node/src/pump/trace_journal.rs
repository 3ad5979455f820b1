//! The runner's trace events as a pump source, so the command-line tool can
//! show job history: an `onEvent`-style sink appends each event to an
//! in-memory journal, the pump derives one logged event from each.

use std::collections::VecDeque;
use std::fmt::Display;
use std::sync::{Mutex, MutexGuard, PoisonError};

use leasehold_core::event::Event;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{EventDraft, EventSource, Kicker};
use crate::runner::{JobError, Observer};

/// Entries a journal holds before the pump logged them when none is given.
pub const DEFAULT_TRACE_JOURNAL_CAPACITY: usize = 65_536;

struct Entries {
    /// Position of `drafts[0]`.
    base: u64,
    drafts: VecDeque<EventDraft>,
    /// Events dropped unlogged because the journal was full.
    dropped: u64,
}

/// An in-memory journal of one runner's trace events, for the pump.
///
/// The journal lives as long as the process, so its source name carries a
/// boot id (`trace/<runner>@<boot ms>-<pid>`): a restarted process starts a
/// new source instead of inheriting a watermark its empty journal never
/// reached. Entries the log holds durably are let go ([`EventSource::logged`]);
/// at most `capacity` unlogged entries are held (a log that keeps failing
/// drops the oldest, counted in [`TraceJournal::dropped`]).
///
/// Each event becomes one record: `type` is the event's type
/// (`pass-start`, `performed`, …), `at` the event's time, `identity`
/// `{"runner": name}`, and `body` the event's other fields in their serde
/// form (camelCase: `item`, `durationMs`, `report`, `nextDelayMs`, `error`,
/// `lapsed`, `unconfirmedMs` of a lapsed claim; `null` for `pass-start`).
///
/// Hand it to the runner as an [`Observer`]
/// ([`crate::runner::JobRunnerBuilder::observe`]).
pub struct TraceJournal {
    runner: String,
    source: String,
    capacity: usize,
    kicker: Option<Kicker>,
    entries: Mutex<Entries>,
}

impl std::fmt::Debug for TraceJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceJournal").field("source", &self.source).finish_non_exhaustive()
    }
}

impl TraceJournal {
    /// A journal for runner `runner` that kicks the pump through `kicker`
    /// after each event (`None`: the caller kicks or flushes), holding at most
    /// `capacity` unlogged events (at least 1).
    pub fn new(runner: &str, kicker: Option<Kicker>, capacity: usize) -> Self {
        let boot = super::unix_now_ms();
        TraceJournal {
            runner: runner.to_owned(),
            source: format!("trace/{runner}@{boot}-{}", std::process::id()),
            capacity: capacity.max(1),
            kicker,
            entries: Mutex::new(Entries { base: 0, drafts: VecDeque::new(), dropped: 0 }),
        }
    }

    /// The source name to register it under.
    pub fn source_name(&self) -> &str {
        &self.source
    }

    /// Events dropped unlogged because the journal was full.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        // A panic elsewhere while holding the lock leaves the entries whole.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends a core `event` (errors shown through `Display`) and kicks the
    /// pump.
    pub fn record<E: Display>(&self, event: &Event<E>) {
        self.note(draft_of(event));
    }

    /// Appends an event of the caller's own beside the runner's (the
    /// command-line tool notes each job's settlement: `job-done`, …) and
    /// kicks the pump. The draft's identity fields join the journal's
    /// `{"runner": name}`; without an `at` it is stamped when logged.
    pub fn note(&self, draft: EventDraft) {
        {
            let mut entries = self.lock();
            if entries.drafts.len() >= self.capacity {
                entries.drafts.pop_front();
                entries.base += 1;
                entries.dropped += 1;
            }
            entries.drafts.push_back(draft);
        }
        if let Some(kicker) = &self.kicker {
            kicker.kick(&self.source);
        }
    }
}

impl Observer for TraceJournal {
    fn observe(&self, _runner: &str, event: &Event<JobError>) {
        self.record(event);
    }
}

/// An error payload in its serde form: its display string.
struct Text<'a, E>(&'a E);

impl<E: Display> Serialize for Text<'_, E> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self.0)
    }
}

/// One record's draft for a trace event: its serde form, with `type` and
/// `at` taken out as the record's own.
fn draft_of<E: Display>(event: &Event<E>) -> EventDraft {
    // Plain data with string keys: serialisation can not fail.
    let body = match serde_json::to_value(event.map_error(Text)) {
        Ok(Value::Object(mut fields)) => {
            fields.remove("type");
            fields.remove("at");
            if fields.is_empty() { Value::Null } else { Value::Object(fields) }
        }
        _ => Value::Null,
    };
    EventDraft::new(event.type_name()).at(event.at().0).body(body)
}

impl EventSource for TraceJournal {
    fn committed_len(&self) -> u64 {
        let entries = self.lock();
        entries.base + entries.drafts.len() as u64
    }

    fn derive(&self, index: u64, out: &mut Vec<EventDraft>) {
        let entries = self.lock();
        // An entry dropped while the log was failing derives nothing.
        if let Some(draft) = index.checked_sub(entries.base).and_then(|i| entries.drafts.get(i as usize)) {
            out.push(draft.clone());
        }
    }

    fn identity(&self) -> Map<String, Value> {
        let mut identity = Map::new();
        identity.insert("runner".to_owned(), Value::String(self.runner.clone()));
        identity
    }

    /// Trace history is never work in progress: old events may go.
    fn quiet(&self) -> bool {
        true
    }

    fn logged(&self, position: u64) {
        let mut entries = self.lock();
        while entries.base < position && entries.drafts.pop_front().is_some() {
            entries.base += 1;
        }
    }
}
