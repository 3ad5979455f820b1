//! The trace ring: a bounded ring of pass spans fed by a runner's trace
//! events.
//!
//! A pass that claimed something becomes a [`PassSpan`]: its start, end,
//! report and next delay, and one [`ItemSpan`] per claimed item (identified by
//! the `item` ordinal of the per-item events) with its duration and outcome.
//! A pass that claimed nothing emits no events, so it costs the ring nothing.
//! The ring keeps at most `capacity` finished spans and drops the oldest first.
//!
//! With the `serde` feature, [`SavedTrace`] (de)serialises to a stable JSON
//! shape with camelCase fields, so a host can save the ring and a restarted
//! process can [`TraceRing::resume`] it and keep its recent history:
//!
//! ```text
//! {"version":1,"capacity":100,"dropped":0,"spans":[{"name":"mailer","start":1000,"end":1040,
//!   "report":{"claimed":1,"performed":1,"failed":0,"claimLost":0},"nextDelayMs":5000,
//!   "claimError":null,"items":[{"item":0,"start":1001,"end":1039,"durationMs":38,
//!   "outcome":"performed","heartbeats":0,"heartbeatFailures":0,"lapsed":false,"error":null}]}]}
//! ```

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::Millis;
use crate::event::{Event, PassReport};

/// Spans a ring keeps when the caller names no capacity.
pub const DEFAULT_TRACE_CAPACITY: usize = 100;

/// The version [`TraceRing::save`] writes and [`TraceRing::resume`] accepts.
pub const TRACE_FORMAT_VERSION: u32 = 1;

/// Error texts are cut to this many bytes (at a character boundary), so a
/// huge error payload can not make one span huge.
pub const MAX_ERROR_TEXT: usize = 512;

/// How a claimed item ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum ItemOutcome {
    /// Its `perform` resolved.
    Performed,
    /// Its `perform` raised while the claim was held.
    Failed,
    /// Its claim was lost or lapsed.
    ClaimLost,
    /// The pass ended before the item reported an outcome (events were lost,
    /// or the pass was abandoned).
    Unsettled,
}

/// One claimed item inside a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemSpan {
    /// The item's ordinal in its pass (0-based, claim order).
    pub item: u32,
    /// When its claim answered.
    #[cfg_attr(feature = "serde", serde(with = "millis"))]
    pub start: Millis,
    /// When its outcome was reported (the pass end when unsettled).
    #[cfg_attr(feature = "serde", serde(with = "millis"))]
    pub end: Millis,
    /// How long it ran, in ms: the runner's own figure for a performed item,
    /// `end - start` otherwise.
    pub duration_ms: u64,
    /// How it ended.
    pub outcome: ItemOutcome,
    /// Renewals that answered `true`.
    pub heartbeats: u32,
    /// Renewals that raised.
    pub heartbeat_failures: u32,
    /// For a lost claim: whether it lapsed under supervision rather than a
    /// renewal answering `false`.
    pub lapsed: bool,
    /// The error text of a failed item.
    pub error: Option<String>,
}

/// One pass that claimed something.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PassSpan {
    /// The runner's name.
    pub name: String,
    /// The pass's `pass-start` time (read at the head of the pass).
    #[cfg_attr(feature = "serde", serde(with = "millis"))]
    pub start: Millis,
    /// The pass's `pass-end` time.
    #[cfg_attr(feature = "serde", serde(with = "millis"))]
    pub end: Millis,
    /// The pass's report (derived from the items when the pass was abandoned).
    pub report: PassReport,
    /// The delay scheduled after the pass, in ms (0 when abandoned).
    pub next_delay_ms: u64,
    /// The error text of a claim that raised during the pass.
    pub claim_error: Option<String>,
    /// One span per claimed item, in claim order.
    pub items: Vec<ItemSpan>,
}

/// A ring as saved: what [`TraceRing::save`] gives and
/// [`TraceRing::resume`] takes. Passes still open are not saved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SavedTrace {
    /// [`TRACE_FORMAT_VERSION`].
    pub version: u32,
    /// The ring's capacity in spans.
    pub capacity: usize,
    /// Spans dropped because the ring was full, over the ring's life.
    pub dropped: u64,
    /// The finished spans, oldest first.
    pub spans: Vec<PassSpan>,
}

/// A ring option or saved ring that can not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceRingError {
    /// Capacity 0: the ring could hold no span.
    ZeroCapacity,
    /// A saved ring of another format version.
    UnknownVersion {
        /// The version found.
        found: u32,
    },
}

impl fmt::Display for TraceRingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceRingError::ZeroCapacity => write!(f, "trace ring capacity must be at least 1"),
            TraceRingError::UnknownVersion { found } => write!(
                f,
                "saved trace has format version {found}; this build reads version {TRACE_FORMAT_VERSION}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TraceRingError {}

/// A bounded ring of [`PassSpan`]s, fed by [`TraceRing::record`].
///
/// One ring can serve several runners: passes are told apart by the runner
/// name given with each event, and each runner has at most one pass open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRing {
    capacity: usize,
    spans: VecDeque<PassSpan>,
    open: BTreeMap<String, PassSpan>,
    dropped: u64,
}

impl TraceRing {
    /// An empty ring keeping at most `capacity` spans.
    ///
    /// # Errors
    /// [`TraceRingError::ZeroCapacity`] when `capacity` is 0.
    pub fn new(capacity: usize) -> Result<Self, TraceRingError> {
        if capacity == 0 {
            return Err(TraceRingError::ZeroCapacity);
        }
        Ok(TraceRing { capacity, spans: VecDeque::new(), open: BTreeMap::new(), dropped: 0 })
    }

    /// A ring that goes on from `saved`, with
    /// `capacity` when given, else the saved one. When the saved spans exceed
    /// the capacity, the oldest go (and count as dropped).
    ///
    /// # Errors
    /// [`TraceRingError::UnknownVersion`] for another format version,
    /// [`TraceRingError::ZeroCapacity`] for a capacity of 0.
    pub fn resume(saved: SavedTrace, capacity: Option<usize>) -> Result<Self, TraceRingError> {
        if saved.version != TRACE_FORMAT_VERSION {
            return Err(TraceRingError::UnknownVersion { found: saved.version });
        }
        let mut ring = TraceRing::new(capacity.unwrap_or(saved.capacity))?;
        ring.dropped = saved.dropped;
        for mut span in saved.spans {
            // A saved ring is input: its error texts are held to the same
            // bound as recorded ones.
            span.claim_error = span.claim_error.map(cut);
            for item in &mut span.items {
                item.error = item.error.take().map(cut);
            }
            ring.push(span);
        }
        Ok(ring)
    }

    /// The finished spans and the ring's counters, to be saved. Passes still
    /// open are left out.
    pub fn save(&self) -> SavedTrace {
        SavedTrace {
            version: TRACE_FORMAT_VERSION,
            capacity: self.capacity,
            dropped: self.dropped,
            spans: self.spans.iter().cloned().collect(),
        }
    }

    /// The most spans the ring keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The finished spans, oldest first.
    pub fn spans(&self) -> impl DoubleEndedIterator<Item = &PassSpan> + ExactSizeIterator {
        self.spans.iter()
    }

    /// Finished spans held.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether no finished span is held.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Spans dropped because the ring was full, over the ring's life.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Passes that started and have not ended.
    pub fn open_passes(&self) -> usize {
        self.open.len()
    }

    /// Records one event of runner `name`, with error payloads shown through
    /// `Display`. Answers the span a `pass-end` finished.
    pub fn record<E: fmt::Display>(&mut self, name: &str, event: &Event<E>) -> Option<&PassSpan> {
        self.record_with(name, event, |e| e.to_string())
    }

    /// Records one event of runner `name`; `describe` turns an error payload
    /// into text (called only for `claim-failed` and `item-failed`). Answers
    /// the span a `pass-end` finished (or an abandoned pass a new `pass-start`
    /// closed). Events of a runner with no pass open are ignored: a pass that
    /// claimed nothing never opens one.
    pub fn record_with<E>(
        &mut self,
        name: &str,
        event: &Event<E>,
        describe: impl FnOnce(&E) -> String,
    ) -> Option<&PassSpan> {
        match event {
            Event::PassStart { at } => {
                let fresh = PassSpan {
                    name: String::from(name),
                    start: *at,
                    end: *at,
                    report: PassReport::IDLE,
                    next_delay_ms: 0,
                    claim_error: None,
                    items: Vec::new(),
                };
                // A pass that never ended (its pass-end was lost) is kept as an
                // abandoned span rather than dropped without a trace.
                let stale = self.open.insert(String::from(name), fresh)?;
                return self.finish(abandon(stale, *at));
            }
            Event::PassEnd { at, report, next_delay_ms } => {
                let mut span = self.open.remove(name)?;
                span.end = *at;
                span.report = *report;
                span.next_delay_ms = *next_delay_ms;
                for item in &mut span.items {
                    if item.outcome == ItemOutcome::Unsettled {
                        item.end = *at;
                        item.duration_ms = at.since(item.start);
                    }
                }
                return self.finish(span);
            }
            Event::Claimed { at, item } => {
                let span = self.open.get_mut(name)?;
                span.items.push(ItemSpan {
                    item: *item,
                    start: *at,
                    end: *at,
                    duration_ms: 0,
                    outcome: ItemOutcome::Unsettled,
                    heartbeats: 0,
                    heartbeat_failures: 0,
                    lapsed: false,
                    error: None,
                });
            }
            Event::ClaimFailed { error, .. } => {
                let span = self.open.get_mut(name)?;
                span.claim_error = Some(cut(describe(error)));
            }
            Event::Performed { at, item, duration_ms } => {
                let span = self.item(name, *item)?;
                span.outcome = ItemOutcome::Performed;
                span.end = *at;
                span.duration_ms = *duration_ms;
            }
            Event::ItemFailed { at, item, error } => {
                let span = self.item(name, *item)?;
                span.outcome = ItemOutcome::Failed;
                span.end = *at;
                span.duration_ms = at.since(span.start);
                span.error = Some(cut(describe(error)));
            }
            Event::Heartbeat { item, .. } => {
                let span = self.item(name, *item)?;
                span.heartbeats = span.heartbeats.saturating_add(1);
            }
            Event::HeartbeatFailed { item, .. } => {
                let span = self.item(name, *item)?;
                span.heartbeat_failures = span.heartbeat_failures.saturating_add(1);
            }
            Event::ClaimLost { at, item, lapsed, .. } => {
                let span = self.item(name, *item)?;
                // A perform that resolved or raised first keeps its outcome
                // (the seed's flag rule counts a finished item as performed).
                if span.outcome == ItemOutcome::Unsettled {
                    span.outcome = ItemOutcome::ClaimLost;
                    span.end = *at;
                    span.duration_ms = at.since(span.start);
                }
                span.lapsed = *lapsed;
            }
        }
        None
    }

    /// The open item span of runner `name` with ordinal `item` (the latest
    /// one, should a runner reuse an ordinal).
    fn item(&mut self, name: &str, item: u32) -> Option<&mut ItemSpan> {
        self.open.get_mut(name)?.items.iter_mut().rev().find(|s| s.item == item)
    }

    fn push(&mut self, span: PassSpan) {
        while self.spans.len() >= self.capacity {
            self.spans.pop_front();
            self.dropped += 1;
        }
        self.spans.push_back(span);
    }

    fn finish(&mut self, span: PassSpan) -> Option<&PassSpan> {
        self.push(span);
        self.spans.back()
    }
}

/// Closes a pass whose `pass-end` never came, at `at`: the report counts the
/// item outcomes seen, unsettled items count as failed.
fn abandon(mut span: PassSpan, at: Millis) -> PassSpan {
    span.end = at;
    let mut report = PassReport { claimed: span.items.len() as u32, ..PassReport::IDLE };
    for item in &mut span.items {
        match item.outcome {
            ItemOutcome::Performed => report.performed += 1,
            ItemOutcome::ClaimLost => report.claim_lost += 1,
            ItemOutcome::Failed => report.failed += 1,
            ItemOutcome::Unsettled => {
                item.end = at;
                item.duration_ms = at.since(item.start);
                report.failed += 1;
            }
        }
    }
    span.report = report;
    span
}

/// `text` cut to [`MAX_ERROR_TEXT`] bytes at a character boundary.
fn cut(mut text: String) -> String {
    if text.len() > MAX_ERROR_TEXT {
        let mut end = MAX_ERROR_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// `Millis` as a bare number of milliseconds.
#[cfg(feature = "serde")]
mod millis {
    use crate::Millis;

    pub fn serialize<S: serde::Serializer>(value: &Millis, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(value.0)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Millis, D::Error> {
        <u64 as serde::Deserialize>::deserialize(d).map(Millis)
    }
}

