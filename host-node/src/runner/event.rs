//! Trace events as the native host hands them out: the core's [`Event`]
//! with the runner's name, serialised exactly like the JS events (the core's
//! serde form: a kebab-case `type` and camelCase fields, plus `name`).

use super::job::JobError;
pub use leasehold_core::event::PassReport;
use leasehold_core::event::Event;
use serde::Serialize;
use std::sync::Arc;

/// One trace event of runner `name`: `event.at()` is ms since the Unix
/// epoch, `item` fields the item's ordinal in its pass, `error` fields the
/// raised error (serialised as its display string). As JSON:
/// `{"name":"mailer","type":"performed","at":1700000000000,"item":0,"durationMs":38}`.
#[derive(Clone, Debug, Serialize)]
pub struct JobEvent {
    /// The runner's name.
    pub name: Arc<str>,
    /// What happened (see [`Event`] for each type's fields and units).
    #[serde(flatten)]
    pub event: Event<JobError>,
}

/// Sees a runner's events inside the process, as the core emits them,
/// without a [`JobEvent`] being built: the trace ring
/// ([`crate::trace_ring::TraceSink`]) and the event log's trace journal
/// ([`crate::pump::TraceJournal`]) are observers. Hand one to
/// [`super::JobRunnerBuilder::observe`]. An observer that panics costs the
/// pass nothing.
pub trait Observer: Send + Sync {
    /// One event of runner `runner`.
    fn observe(&self, runner: &str, event: &Event<JobError>);
}
