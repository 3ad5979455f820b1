//! When the log is compacted and which records go.
//!
//! Compaction runs when the log opens and then at most hourly (checked after
//! each pass). It drops records older than the caller's retention window whose
//! source the caller's predicate calls quiet, or which is gone (no longer
//! registered). Records of a source that is not quiet stay however old they
//! are: a reader may still need the history of work in progress.

use alloc::collections::BTreeMap;
use alloc::string::String;

use crate::Millis;

/// The least time between two compactions.
pub const COMPACT_EVERY_MS: u64 = 3_600_000;

/// The retention window when the caller gives none: 7 days.
pub const DEFAULT_RETENTION_MS: u64 = 7 * 24 * 3_600_000;

/// Whether a compaction is due: at open (never compacted) and at most every
/// `every_ms` after the last one started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CompactionSchedule {
    every_ms: u64,
    last: Option<Millis>,
}

impl CompactionSchedule {
    /// Due at once, then every `every_ms` (monotonic milliseconds).
    pub fn new(every_ms: u64) -> Self {
        CompactionSchedule { every_ms, last: None }
    }

    /// Whether a compaction should run at `now`.
    pub fn due(&self, now: Millis) -> bool {
        self.last.is_none_or(|last| now.since(last) >= self.every_ms)
    }

    /// A compaction started at `now`. Counted even when it then fails, so a
    /// failing compaction is not retried after every pass.
    pub fn started(&mut self, now: Millis) {
        self.last = Some(now);
    }
}

/// One compaction's retention decisions: a cutoff on the wall clock and the
/// quiet verdict of each source, asked once per source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retention {
    cutoff: Millis,
    verdicts: BTreeMap<String, bool>,
}

impl Retention {
    /// Records older than `window_ms` before `wall_now` (the wall clock, in
    /// the same unit and epoch as the records' `at`) may go.
    pub fn new(wall_now: Millis, window_ms: u64) -> Self {
        Retention { cutoff: Millis(wall_now.0.saturating_sub(window_ms)), verdicts: BTreeMap::new() }
    }

    /// Records strictly before this instant are old enough to go.
    pub fn cutoff(&self) -> Millis {
        self.cutoff
    }

    /// Whether the record of `source` at `at` goes. `droppable` answers for a
    /// source: quiet, or gone; it is asked at most once per source and only
    /// for records old enough.
    pub fn drops(&mut self, source: &str, at: Millis, droppable: impl FnOnce(&str) -> bool) -> bool {
        if at >= self.cutoff {
            return false;
        }
        if let Some(verdict) = self.verdicts.get(source) {
            return *verdict;
        }
        let verdict = droppable(source);
        self.verdicts.insert(String::from(source), verdict);
        verdict
    }
}
