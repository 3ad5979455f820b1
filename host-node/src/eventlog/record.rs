//! The event a log record holds, as JSON.
//!
//! ```json
//! {"source":"jobs.mailer","at":1717000000000,"type":"performed",
//!  "identity":{"request":"r-17"},"body":{"item":0,"durationMs":38}}
//! ```
//!
//! `identity` is left out when empty and `body` when null. Readers must ignore
//! fields they do not know: later versions may add some.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One logged event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// The source it was derived from or emitted for (a journal's name).
    pub source: String,
    /// When it happened: milliseconds since the Unix epoch.
    pub at: u64,
    /// What happened (`"type"` in JSON), e.g. `"performed"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Fields that identify the work across events of the source (a request
    /// id, labels): the draft's own, completed from the source's identity.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub identity: Map<String, Value>,
    /// Free-form details.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub body: Value,
}

/// An [`EventRecord`] borrowed from the parts it is made of, so the pump can
/// serialise a draft without copying it into a record first. Serialises to
/// the same JSON as the record it stands for.
#[derive(Serialize)]
pub(crate) struct EventRecordRef<'a> {
    pub(crate) source: &'a str,
    pub(crate) at: u64,
    #[serde(rename = "type")]
    pub(crate) kind: &'a str,
    #[serde(skip_serializing_if = "Identity::is_empty")]
    pub(crate) identity: Identity<'a>,
    #[serde(skip_serializing_if = "Value::is_null")]
    pub(crate) body: &'a Value,
}

/// A record's identity: one map as it is, or two merged into a new one.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Identity<'a> {
    Borrowed(&'a Map<String, Value>),
    Merged(Map<String, Value>),
}

impl Identity<'_> {
    pub(crate) fn values(&self) -> impl Iterator<Item = &Value> {
        match self {
            Identity::Borrowed(map) => map.values(),
            Identity::Merged(map) => map.values(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Identity::Borrowed(map) => map.is_empty(),
            Identity::Merged(map) => map.is_empty(),
        }
    }
}

/// The deepest nesting of arrays and objects a body or identity value may
/// have. Readers parse with serde_json's default limit (128 levels, the
/// record's own object included): an event nested deeper would append fine
/// and then make every read of the log fail, so appends refuse it. A count of
/// levels; applies to an event's free-form fields (`body`,
/// `identity`).
pub const MAX_VALUE_DEPTH: usize = 100;

/// Checks that `values` nest at most [`MAX_VALUE_DEPTH`] levels.
///
/// # Errors
/// A message naming the limit.
pub(crate) fn check_depth<'a>(mut values: impl Iterator<Item = &'a Value>) -> Result<(), String> {
    if values.any(|v| too_deep(v, 1)) {
        return Err(format!(
            "event value nested deeper than {MAX_VALUE_DEPTH} levels of arrays and objects \
             (readers could not read it back)"
        ));
    }
    Ok(())
}

/// Whether `value`, itself at nesting level `depth`, goes past the limit.
/// The recursion stops at the limit, so its own depth is bounded.
fn too_deep(value: &Value, depth: usize) -> bool {
    match value {
        Value::Array(items) => depth > MAX_VALUE_DEPTH || items.iter().any(|v| too_deep(v, depth + 1)),
        Value::Object(map) => depth > MAX_VALUE_DEPTH || map.values().any(|v| too_deep(v, depth + 1)),
        _ => false,
    }
}

/// The two fields retention looks at; the rest of a record is skipped
/// unparsed.
#[derive(Deserialize)]
pub(crate) struct RecordHead {
    pub(crate) source: String,
    pub(crate) at: u64,
}

/// A record as read back: the log's epoch, its sequence number, the event.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedEvent {
    /// The epoch of the log it was read from: a reader holding another epoch
    /// knows the log was replaced and starts again from the beginning.
    pub epoch: u64,
    /// Its sequence number; a reader resumes from the one after it.
    pub seq: u64,
    /// The event.
    pub event: EventRecord,
}
