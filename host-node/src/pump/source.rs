//! What the pump derives from: durable journals the caller owns (seed 004:
//! the workflow journals and the orchestrator ledger, read through their
//! `committed()` arrays from the watermark on).

use serde_json::{Map, Value};

use crate::eventlog::EventRecord;

/// An event before the pump logs it: what a source's `derive` answers and what
/// a producer hands to `emit`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventDraft {
    /// What happened (the record's `type`).
    pub kind: String,
    /// When, in milliseconds since the Unix epoch; `None` is "when logged"
    /// (the pump's wall clock at derivation or emit).
    pub at: Option<u64>,
    /// Identity fields of the draft's own; the source's identity fills the
    /// keys the draft does not have.
    pub identity: Map<String, Value>,
    /// Free-form details (`null` for none).
    pub body: Value,
}

impl EventDraft {
    /// A draft of kind `kind`, no time, no identity, no body.
    pub fn new(kind: impl Into<String>) -> Self {
        EventDraft { kind: kind.into(), ..EventDraft::default() }
    }

    /// Sets when it happened (ms since the Unix epoch).
    #[must_use]
    pub fn at(mut self, ms: u64) -> Self {
        self.at = Some(ms);
        self
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: Value) -> Self {
        self.body = body;
        self
    }

    /// Sets one identity field.
    #[must_use]
    pub fn identity(mut self, key: impl Into<String>, value: Value) -> Self {
        self.identity.insert(key.into(), value);
        self
    }

    /// The record logged for this draft of `source`: the source's identity
    /// fills the keys the draft has none for (seed: "echoing the workflow's
    /// request id and labels when the draft has none"), `now_ms` the time.
    pub(crate) fn into_record(mut self, source: &str, identity: &Map<String, Value>, now_ms: u64) -> EventRecord {
        for (key, value) in identity {
            if !self.identity.contains_key(key) {
                self.identity.insert(key.clone(), value.clone());
            }
        }
        EventRecord {
            source: source.to_owned(),
            at: self.at.unwrap_or(now_ms),
            kind: self.kind,
            identity: self.identity,
            body: self.body,
        }
    }
}

/// A durable journal the pump derives events from.
///
/// Positions are indices into the journal's committed entries (0-based); the
/// pump keeps one watermark per source and derives only entries at or past
/// it, so a committed entry must never change or move. Call
/// [`Pump::kick`](super::Pump::kick) (or a [`Kicker`](super::Kicker)) after
/// appending so the pump derives soon.
///
/// The pump calls these from its own task: keep them quick and never block
/// on the pump (an `await` on it from inside would deadlock the chain).
pub trait EventSource: Send + Sync + 'static {
    /// How many entries are committed (durable) now.
    fn committed_len(&self) -> u64;

    /// Appends the drafts derived from committed entry `index` to `out` (none
    /// is fine). Must answer the same drafts every time it is asked: after a
    /// crash or a failed append the pump derives an entry again (at least
    /// once).
    fn derive(&self, index: u64, out: &mut Vec<EventDraft>);

    /// Identity fields every event of this source carries unless its draft
    /// has its own (seed: the run request's id and labels). Asked once per
    /// pass and per emit.
    fn identity(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Retention: whether this source's events may go once older than the
    /// retention window (seed `quiet`: the work is final and nothing is
    /// open). Asked at most once per compaction, from a blocking thread. A
    /// source that is not registered any more is treated as quiet.
    fn quiet(&self) -> bool {
        false
    }

    /// The log now durably holds every event of the entries before
    /// `position`: a journal that keeps entries only for the pump may let
    /// them go.
    fn logged(&self, position: u64) {
        let _ = position;
    }
}
