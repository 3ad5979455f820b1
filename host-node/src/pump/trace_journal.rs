//! The runner's trace events as a pump source, so the command-line tool can
//! show job history: an `onEvent`-style sink appends each event to an
//! in-memory journal, the pump derives one logged event from each.

use std::collections::VecDeque;
use std::fmt::Display;
use std::sync::{Mutex, MutexGuard, PoisonError};

use leasehold_core::event::Event;
use serde_json::{Map, Value, json};

use super::{EventDraft, EventSource, Kicker};
use crate::runner::JobEvent;
use crate::trace_ring::core_event;

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
/// Each event becomes one record: `type` is the reference implementation's event type
/// (`pass-start`, `performed`, …), `at` the event's time, `identity`
/// `{"runner": name}`, and `body` the event's fields in camelCase
/// (`item`, `durationMs`, `report`, `nextDelayMs`, `error`, `lapsed`,
/// `unconfirmedMs`).
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

    /// The runner's `on_event` sink: appends a [`JobEvent`] (feed one
    /// journal the events of one runner: its name is the journal's) and kicks
    /// the pump.
    pub fn on_job_event(&self, event: &JobEvent) {
        self.record(&core_event(event).1);
    }

    /// [`TraceJournal::on_job_event`] for one of several runners of the same
    /// name feeding this journal (the command-line tool runs one per slot):
    /// the event's identity gains `"slot": slot` (1-based), which tells their
    /// passes apart. Like `on_job_event`, a runner's event sink.
    pub fn on_job_event_of(&self, slot: u32, event: &JobEvent) {
        self.note(draft_of(&core_event(event).1).identity("slot", Value::from(slot)));
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

/// One record's draft for a trace event.
fn draft_of<E: Display>(event: &Event<E>) -> EventDraft {
    let body = match event {
        Event::PassStart { .. } => Value::Null,
        Event::PassEnd { report, next_delay_ms, .. } => json!({
            "report": {
                "claimed": report.claimed,
                "performed": report.performed,
                "failed": report.failed,
                "claimLost": report.claim_lost,
            },
            "nextDelayMs": next_delay_ms,
        }),
        Event::Claimed { item, .. } | Event::Heartbeat { item, .. } => json!({ "item": item }),
        Event::ClaimFailed { error, .. } => json!({ "error": error.to_string() }),
        Event::Performed { item, duration_ms, .. } => json!({ "item": item, "durationMs": duration_ms }),
        Event::ItemFailed { item, error, .. } | Event::HeartbeatFailed { item, error, .. } => {
            json!({ "item": item, "error": error.to_string() })
        }
        Event::ClaimLost { item, lapsed, unconfirmed_ms, .. } => {
            json!({ "item": item, "lapsed": lapsed, "unconfirmedMs": unconfirmed_ms })
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
