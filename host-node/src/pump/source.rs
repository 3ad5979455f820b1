//! What the pump derives from: durable journals the caller owns
//! (workflow journals, a ledger, a job store's settlements), read from the
//! watermark on.

use serde_json::{Map, Value};

use crate::eventlog::EventRecord;
use crate::eventlog::record::{EventRecordRef, Identity};

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

    /// The record logged for this draft of `source`, borrowed: as
    /// [`EventDraft::into_record`] without copying the draft (the identity is
    /// copied only when both the draft and the source have some).
    pub(crate) fn as_record<'a>(
        &'a self,
        source: &'a str,
        identity: &'a Map<String, Value>,
        now_ms: u64,
    ) -> EventRecordRef<'a> {
        let identity = if identity.is_empty() {
            Identity::Borrowed(&self.identity)
        } else if self.identity.is_empty() {
            Identity::Borrowed(identity)
        } else {
            Identity::Merged(fill_identity(self.identity.clone(), identity))
        };
        EventRecordRef { source, at: self.at.unwrap_or(now_ms), kind: &self.kind, identity, body: &self.body }
    }

    /// The record logged for this draft of `source`: the source's identity
    /// fills the keys the draft has none for, `now_ms` the time.
    pub(crate) fn into_record(self, source: &str, identity: &Map<String, Value>, now_ms: u64) -> EventRecord {
        EventRecord {
            source: source.to_owned(),
            at: self.at.unwrap_or(now_ms),
            kind: self.kind,
            identity: fill_identity(self.identity, identity),
            body: self.body,
        }
    }
}

/// A draft's `own` identity with the keys it lacks taken from its source's.
fn fill_identity(mut own: Map<String, Value>, source: &Map<String, Value>) -> Map<String, Value> {
    for (key, value) in source {
        if !own.contains_key(key) {
            own.insert(key.clone(), value.clone());
        }
    }
    own
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
    /// How many entries are committed (durable) now. It never goes back: a
    /// length below the source's watermark (its journal replaced or cut
    /// back) derives nothing until it passes the watermark again, and is
    /// said once (stderr and `tracing`); remove the source and add it again
    /// to derive it from its first entry.
    fn committed_len(&self) -> u64;

    /// Appends the drafts derived from committed entry `index` to `out` (none
    /// is fine). Must answer the same drafts every time it is asked: after a
    /// crash or a failed append the pump derives an entry again (at least
    /// once).
    ///
    /// A panic here is caught: the pass fails with
    /// [`PumpError::SourcePanicked`](super::PumpError::SourcePanicked) naming
    /// the source and the entry, the source's watermark stops before that
    /// entry and it is asked again at the retry; the other sources go on.
    fn derive(&self, index: u64, out: &mut Vec<EventDraft>);

    /// Identity fields every event of this source carries unless its draft
    /// has its own. Asked once per
    /// pass and per emit.
    fn identity(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Retention: whether this source's events may go once older than the
    /// retention window (quiet: the work is final and nothing is
    /// open). Asked at most once per compaction, from a blocking thread. A
    /// source that is not registered any more is treated as quiet.
    fn quiet(&self) -> bool {
        false
    }

    /// The log now durably holds every event of the entries before
    /// `position`: a journal that keeps entries only for the pump may let
    /// them go. Also called when the pump opens, with the watermark the log
    /// holds for this source (when above 0), before the source's length is
    /// first read.
    fn logged(&self, position: u64) {
        let _ = position;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::eventlog::EncodedEvents;

    fn map(pairs: &[(&str, Value)]) -> Map<String, Value> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }

    /// The pump serialises drafts borrowed (`as_record`); readers parse
    /// records (`into_record`'s shape): both must give the same bytes, also
    /// when the draft's identity and the source's are merged.
    #[test]
    fn a_borrowed_record_serialises_as_the_record_it_stands_for() {
        let source_identity = map(&[("request", json!("r-1")), ("tenant", json!("acme"))]);
        let drafts = [
            EventDraft::new("plain"),
            EventDraft::new("timed").at(7).body(json!({ "n": 1 })),
            EventDraft::new("own").identity("request", json!("r-2")),
            EventDraft::new("both").identity("request", json!("r-2")).identity("zone", json!(3)),
        ];
        for identity in [Map::new(), source_identity] {
            for draft in &drafts {
                let (mut borrowed, mut owned) = (EncodedEvents::default(), EncodedEvents::default());
                borrowed.push_ref(&draft.as_record("jobs", &identity, 99)).unwrap();
                owned.push(&draft.clone().into_record("jobs", &identity, 99)).unwrap();
                assert_eq!(borrowed, owned, "{draft:?} with source identity {identity:?}");
            }
        }
        let source = map(&[("request", json!("r-1")), ("tenant", json!("t"))]);
        let merged = drafts[3].clone().into_record("jobs", &source, 0);
        assert_eq!(merged.identity, map(&[("request", json!("r-2")), ("tenant", json!("t")), ("zone", json!(3))]));
    }
}
