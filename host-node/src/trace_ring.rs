//! The trace sink: the
//! core's [`TraceRing`] behind a lock, fed by a runner's `onEvent`, saved and
//! resumed as JSON, optionally forwarding each finished span to `tracing`.

use std::fmt::Display;
use std::sync::{Mutex, MutexGuard, PoisonError};

use leasehold_core::event::Event;
pub use leasehold_core::trace_ring::{
    DEFAULT_TRACE_CAPACITY, ItemOutcome, ItemSpan, PassSpan, SavedTrace, TraceRing, TraceRingError,
};

use crate::runner::{JobError, Observer};

/// Restoring a saved trace failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceSinkError {
    /// The saved ring can not be used (version, capacity).
    #[error(transparent)]
    Ring(#[from] TraceRingError),
    /// The saved text is not a saved trace.
    #[error("saved trace is not valid JSON of a trace ring: {0}")]
    Json(#[from] serde_json::Error),
}

/// A runner trace sink: records every pass that claimed something as a span
/// in a bounded ring (the oldest goes first). Share it behind an `Arc` and
/// hand it to the runner as an [`Observer`]:
///
/// ```no_run
/// # use std::sync::Arc;
/// # use leasehold::trace_ring::{TraceSink, DEFAULT_TRACE_CAPACITY};
/// # use leasehold::runner::JobRunner;
/// let sink = Arc::new(TraceSink::new(DEFAULT_TRACE_CAPACITY).unwrap().forward_to_tracing(true));
/// let builder = JobRunner::builder("mailer").observe(sink.clone());
/// ```
#[derive(Debug)]
pub struct TraceSink {
    ring: Mutex<TraceRing>,
    forward: bool,
}

impl TraceSink {
    /// A sink keeping at most `capacity` spans ([`DEFAULT_TRACE_CAPACITY`] is
    /// the usual choice).
    ///
    /// # Errors
    /// [`TraceRingError::ZeroCapacity`] for 0.
    pub fn new(capacity: usize) -> Result<Self, TraceRingError> {
        Ok(TraceSink { ring: Mutex::new(TraceRing::new(capacity)?), forward: false })
    }

    /// A sink that goes on from a saved ring, with
    /// `capacity` when given, else the saved one.
    ///
    /// # Errors
    /// [`TraceRingError`] for another format version or capacity 0.
    pub fn resume(saved: SavedTrace, capacity: Option<usize>) -> Result<Self, TraceRingError> {
        Ok(TraceSink { ring: Mutex::new(TraceRing::resume(saved, capacity)?), forward: false })
    }

    /// [`TraceSink::resume`] from the JSON [`TraceSink::to_json`] wrote.
    ///
    /// # Errors
    /// [`TraceSinkError::Json`] for text that is not a saved trace,
    /// [`TraceSinkError::Ring`] as for `resume`.
    pub fn from_json(json: &str, capacity: Option<usize>) -> Result<Self, TraceSinkError> {
        Ok(Self::resume(serde_json::from_str(json)?, capacity)?)
    }

    /// Also forwards each finished span to `tracing` (target
    /// `leasehold::trace`): an `info` event per pass, a `debug` event per item.
    #[must_use]
    pub fn forward_to_tracing(mut self, forward: bool) -> Self {
        self.forward = forward;
        self
    }

    fn lock(&self) -> MutexGuard<'_, TraceRing> {
        // A panic while holding the lock leaves the ring whole: every update
        // is a single push or field write.
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one event of runner `runner` (errors shown through `Display`).
    pub fn record<E: Display>(&self, runner: &str, event: &Event<E>) {
        let mut ring = self.lock();
        if let Some(span) = ring.record(runner, event)
            && self.forward
        {
            forward(span);
        }
    }

    /// The finished spans, oldest first.
    pub fn spans(&self) -> Vec<PassSpan> {
        self.lock().spans().cloned().collect()
    }

    /// Spans dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped()
    }

    /// The ring as saved ([`SavedTrace`]).
    pub fn save(&self) -> SavedTrace {
        self.lock().save()
    }

    /// The ring as saved, in JSON (see [`leasehold_core::trace_ring`] for
    /// the shape).
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serialisation can not fail.
        serde_json::to_string(&self.save()).unwrap_or_default()
    }
}

impl Observer for TraceSink {
    fn observe(&self, runner: &str, event: &Event<JobError>) {
        self.record(runner, event);
    }
}

fn forward(span: &PassSpan) {
    tracing::info!(
        target: "leasehold::trace",
        runner = %span.name,
        start_ms = span.start.0,
        end_ms = span.end.0,
        claimed = span.report.claimed,
        performed = span.report.performed,
        failed = span.report.failed,
        claim_lost = span.report.claim_lost,
        next_delay_ms = span.next_delay_ms,
        claim_error = span.claim_error.as_deref(),
        "pass"
    );
    for item in &span.items {
        tracing::debug!(
            target: "leasehold::trace",
            runner = %span.name,
            item = item.item,
            start_ms = item.start.0,
            duration_ms = item.duration_ms,
            outcome = ?item.outcome,
            heartbeats = item.heartbeats,
            error = item.error.as_deref(),
            "item"
        );
    }
}
