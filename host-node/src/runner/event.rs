//! Trace events as the native host hands them to `on_event`, serialised exactly like the JS events: a `type` tag in
//! kebab-case and camelCase fields.

use super::job::JobError;
use leasehold_core::event::{Event, PassReport as CorePassReport};
use serde::{Serialize, Serializer};
use std::sync::Arc;

/// What one pass did: every claimed item counted
/// in exactly one of `performed`, `failed`, `claim_lost`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PassReport {
    /// Items claimed.
    pub claimed: u32,
    /// Items whose perform resolved.
    pub performed: u32,
    /// Items whose perform raised while the claim was held.
    pub failed: u32,
    /// Items whose claim was lost or lapsed and whose perform then raised or
    /// was dropped.
    pub claim_lost: u32,
}

impl From<CorePassReport> for PassReport {
    fn from(r: CorePassReport) -> Self {
        PassReport { claimed: r.claimed, performed: r.performed, failed: r.failed, claim_lost: r.claim_lost }
    }
}

fn display<S: Serializer>(error: &JobError, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(error)
}

/// One trace event. `name` is the runner's name, `at`
/// ms since the Unix epoch, `item` the item's ordinal in its pass, `error`
/// the raised error (serialised as its display string).
#[allow(missing_docs)] // each variant's doc names its fields and units
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum JobEvent {
    /// The pass found work; `at` is the head of the pass.
    PassStart { name: Arc<str>, at: u64 },
    /// The pass ended; `next_delay_ms` is the delay actually scheduled.
    PassEnd { name: Arc<str>, at: u64, report: PassReport, next_delay_ms: u64 },
    /// A claim answered an item.
    Claimed { name: Arc<str>, at: u64, item: u32 },
    /// A claim raised.
    ClaimFailed {
        name: Arc<str>,
        at: u64,
        #[serde(serialize_with = "display")]
        error: JobError,
    },
    /// An item's perform resolved after `duration_ms`.
    Performed { name: Arc<str>, at: u64, item: u32, duration_ms: u64 },
    /// An item's perform raised while its claim was held.
    ItemFailed {
        name: Arc<str>,
        at: u64,
        item: u32,
        #[serde(serialize_with = "display")]
        error: JobError,
    },
    /// A renewal sent at `at` landed.
    Heartbeat { name: Arc<str>, at: u64, item: u32 },
    /// A renewal sent at `at` raised.
    HeartbeatFailed {
        name: Arc<str>,
        at: u64,
        item: u32,
        #[serde(serialize_with = "display")]
        error: JobError,
    },
    /// The claim was lost (`lapsed: false`) or lapsed under supervision
    /// (`lapsed: true`, with `unconfirmed_ms`).
    ClaimLost { name: Arc<str>, at: u64, item: u32, lapsed: bool, unconfirmed_ms: u64 },
}

impl JobEvent {
    /// The `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            JobEvent::PassStart { .. } => "pass-start",
            JobEvent::PassEnd { .. } => "pass-end",
            JobEvent::Claimed { .. } => "claimed",
            JobEvent::ClaimFailed { .. } => "claim-failed",
            JobEvent::Performed { .. } => "performed",
            JobEvent::ItemFailed { .. } => "item-failed",
            JobEvent::Heartbeat { .. } => "heartbeat",
            JobEvent::HeartbeatFailed { .. } => "heartbeat-failed",
            JobEvent::ClaimLost { .. } => "claim-lost",
        }
    }

    pub(crate) fn from_core(name: &Arc<str>, event: Event<JobError>) -> Option<JobEvent> {
        let name = name.clone();
        Some(match event {
            Event::PassStart { at } => JobEvent::PassStart { name, at: at.0 },
            Event::PassEnd { at, report, next_delay_ms } => {
                JobEvent::PassEnd { name, at: at.0, report: report.into(), next_delay_ms }
            }
            Event::Claimed { at, item } => JobEvent::Claimed { name, at: at.0, item },
            Event::ClaimFailed { at, error } => JobEvent::ClaimFailed { name, at: at.0, error },
            Event::Performed { at, item, duration_ms } => JobEvent::Performed { name, at: at.0, item, duration_ms },
            Event::ItemFailed { at, item, error } => JobEvent::ItemFailed { name, at: at.0, item, error },
            Event::Heartbeat { at, item } => JobEvent::Heartbeat { name, at: at.0, item },
            Event::HeartbeatFailed { at, item, error } => JobEvent::HeartbeatFailed { name, at: at.0, item, error },
            Event::ClaimLost { at, item, lapsed, unconfirmed_ms } => {
                JobEvent::ClaimLost { name, at: at.0, item, lapsed, unconfirmed_ms }
            }
            _ => return None,
        })
    }
}
