//! The pump's state between commands: registered sources, the dirty set, the
//! watermarks, the one timer, failure reporting and the compaction schedule.
//!
//! A host owns one of these inside the single task that owns the log, so
//! passes, emits, compaction and close never interleave. Time is monotonic
//! [`Millis`] the host reads; the core never does.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::chunk::Chunker;
use super::compaction::{COMPACT_EVERY_MS, CompactionSchedule};
use super::failure::{FailureReport, RETRY_AFTER_MS};
use super::watermarks::Watermarks;
use crate::Millis;

/// The delay between a source's `kick` and the pass that derives it, so a burst of appends is derived in one pass.
pub const DEFAULT_KICK_DELAY_MS: u64 = 50;

/// The most drafts one append carries. It also bounds
/// what one crash can lose, which is what the log's start skip relies on.
pub const DEFAULT_CHUNK_SIZE: usize = 1024;

/// The most drafts a chunk (and records an event log append) may hold. The
/// log's start skip moves the next sequence number on by this much per open,
/// so a bound keeps the 64-bit sequence space out of reach. A count of drafts.
pub const MAX_CHUNK_SIZE: usize = 1 << 20;

/// The pump's tunables, all in milliseconds or counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PumpConfig {
    /// Delay from a kick to its pass ([`DEFAULT_KICK_DELAY_MS`]).
    pub kick_delay_ms: u64,
    /// At most this many drafts per append ([`DEFAULT_CHUNK_SIZE`]); 1 to
    /// [`MAX_CHUNK_SIZE`].
    pub chunk_size: usize,
    /// Delay before a failed pass is retried ([`RETRY_AFTER_MS`]); at least 1.
    pub retry_after_ms: u64,
    /// Least time between compactions ([`COMPACT_EVERY_MS`]).
    pub compact_every_ms: u64,
}

impl Default for PumpConfig {
    fn default() -> Self {
        PumpConfig {
            kick_delay_ms: DEFAULT_KICK_DELAY_MS,
            chunk_size: DEFAULT_CHUNK_SIZE,
            retry_after_ms: RETRY_AFTER_MS,
            compact_every_ms: COMPACT_EVERY_MS,
        }
    }
}

/// A [`PumpConfig`] value that can not work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `chunk_size` was 0: no chunk could hold a draft.
    ZeroChunkSize,
    /// `chunk_size` was over [`MAX_CHUNK_SIZE`].
    ChunkSizeTooLarge(usize),
    /// `retry_after_ms` was 0: a failing log would be retried in a busy loop.
    ZeroRetryDelay,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::ZeroChunkSize => write!(f, "chunk_size must be at least 1"),
            ConfigError::ChunkSizeTooLarge(n) => write!(f, "chunk_size must be at most {MAX_CHUNK_SIZE}, got {n}"),
            ConfigError::ZeroRetryDelay => write!(f, "retry_after_ms must be at least 1"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ConfigError {}

impl PumpConfig {
    /// Checks the values.
    ///
    /// # Errors
    /// [`ConfigError`] naming the value that can not work.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.chunk_size == 0 {
            return Err(ConfigError::ZeroChunkSize);
        }
        if self.chunk_size > MAX_CHUNK_SIZE {
            return Err(ConfigError::ChunkSizeTooLarge(self.chunk_size));
        }
        if self.retry_after_ms == 0 {
            return Err(ConfigError::ZeroRetryDelay);
        }
        Ok(())
    }
}

/// Where the pump is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Sources may register; the log is not open yet.
    Opening,
    /// The log is open: passes, emits and compactions run.
    Open,
    /// `close` ran: nothing more is derived or logged.
    Closed,
}

/// What a failed pass asks the host to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FailureDecision {
    /// Report the error now (it differs from the one reported last).
    pub(crate) report: bool,
    /// The background retry is due then (the timer was armed for it or for
    /// an earlier kick).
    pub(crate) retry_at: Option<Millis>,
}

/// The sources a pass derives, taken from the dirty set in name order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PassPlan {
    /// Registered sources to derive past their watermark.
    pub(crate) sources: Vec<String>,
}

/// The pump's state machine.
#[derive(Clone, Debug)]
pub struct PumpState {
    config: PumpConfig,
    phase: Phase,
    sources: BTreeSet<String>,
    dirty: BTreeSet<String>,
    marks: Watermarks,
    timer: Option<Millis>,
    failure: FailureReport,
    compaction: CompactionSchedule,
    backfilled: bool,
}

impl PumpState {
    /// A pump not open yet.
    ///
    /// # Errors
    /// [`ConfigError`] when `config` can not work.
    pub(crate) fn new(config: PumpConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(PumpState {
            config,
            phase: Phase::Opening,
            sources: BTreeSet::new(),
            dirty: BTreeSet::new(),
            marks: Watermarks::new(),
            timer: None,
            failure: FailureReport::new(),
            compaction: CompactionSchedule::new(config.compact_every_ms),
            backfilled: false,
        })
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &PumpConfig {
        &self.config
    }

    /// Where the pump is in its life.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether the log the pump opened was created (new, or replacing a
    /// corrupt one), so every source was derived again from its first entry.
    pub fn backfilled(&self) -> bool {
        self.backfilled
    }

    /// The watermarks.
    pub fn marks(&self) -> &Watermarks {
        &self.marks
    }

    /// Where `source` derives from next.
    pub fn mark(&self, source: &str) -> u64 {
        self.marks.get(source)
    }

    /// Whether `source` is registered.
    pub fn is_registered(&self, source: &str) -> bool {
        self.sources.contains(source)
    }

    /// Registered sources, by name.
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.sources.iter().map(String::as_str)
    }

    /// Sources waiting for a pass.
    pub fn dirty(&self) -> impl Iterator<Item = &str> {
        self.dirty.iter().map(String::as_str)
    }

    /// The failure being reported, while a failure episode lasts.
    pub fn failing(&self) -> Option<&str> {
        self.failure.current()
    }

    /// A source joins. It is dirty: the next pass derives it past its
    /// watermark (if the log recorded one at open).
    pub(crate) fn register(&mut self, source: &str) {
        self.sources.insert(String::from(source));
        self.dirty.insert(String::from(source));
    }

    /// The source is gone (its events were logged and its journal dropped):
    /// its watermark goes and its old records become droppable.
    pub(crate) fn forget(&mut self, source: &str) {
        self.sources.remove(source);
        self.dirty.remove(source);
        self.marks.forget(source);
    }

    /// The log opened with the watermarks it recorded; `created` when it is
    /// new (or replaced a corrupt one). Keeps the watermarks of registered
    /// sources only, and makes every registered source dirty.
    pub(crate) fn opened<S: AsRef<str>>(&mut self, recorded: impl IntoIterator<Item = (S, u64)>, created: bool) {
        if self.phase != Phase::Opening {
            return;
        }
        let sources = &self.sources;
        self.marks = Watermarks::load(recorded, |name| sources.contains(name));
        self.dirty.extend(self.sources.iter().cloned());
        self.backfilled = created;
        self.phase = Phase::Open;
    }

    /// A source appended (`Some`), or a pass is wanted (`None`): derive soon.
    /// Arms the timer at `now + kick_delay_ms` unless it is armed already, so
    /// a burst of kicks makes one pass. Ignored once closed.
    pub(crate) fn kick(&mut self, source: Option<&str>, now: Millis) {
        if self.phase == Phase::Closed {
            return;
        }
        if let Some(source) = source {
            if self.sources.contains(source) {
                self.dirty.insert(String::from(source));
            }
        }
        if self.timer.is_none() {
            self.timer = Some(now.after(self.config.kick_delay_ms));
        }
    }

    /// When the host should call [`PumpState::handle_timeout`].
    pub(crate) fn poll_timeout(&self) -> Option<Millis> {
        self.timer
    }

    /// The timer fired at `now`: answers whether a pass is due (the timer is
    /// disarmed then).
    pub(crate) fn handle_timeout(&mut self, now: Millis) -> bool {
        match self.timer {
            Some(at) if at <= now => {
                self.timer = None;
                self.phase == Phase::Open
            }
            _ => false,
        }
    }

    /// `flush` or `close`: a pass over every registered source is due now,
    /// kicked or not (everything appended so far, even by a caller that
    /// forgot to kick), so the pending timer goes.
    pub(crate) fn flush(&mut self) {
        self.dirty.extend(self.sources.iter().cloned());
        self.timer = None;
    }

    /// Starts a pass: takes the dirty set (registered sources, in name order).
    /// Empty unless the log is open.
    pub(crate) fn begin_pass(&mut self) -> PassPlan {
        if self.phase != Phase::Open {
            return PassPlan { sources: Vec::new() };
        }
        let dirty = core::mem::take(&mut self.dirty);
        PassPlan { sources: dirty.into_iter().filter(|s| self.sources.contains(s)).collect() }
    }

    /// A chunker for the pass, cutting at `chunk_size`.
    pub(crate) fn chunker<D>(&self) -> Chunker<D> {
        Chunker::new(self.config.chunk_size)
    }

    /// The watermarks an append for a chunk completing `completes` carries.
    pub(crate) fn to_write<'a>(&'a self, completes: &'a [(String, u64)]) -> Vec<(&'a str, u64)> {
        self.marks.to_write(completes)
    }

    /// The append of a chunk completing `completes` (with
    /// [`PumpState::to_write`]) is durable.
    pub(crate) fn chunk_logged(&mut self, completes: &[(String, u64)]) {
        self.marks.logged(completes);
    }

    /// A chunk without drafts completed `completes`: moved in memory only.
    pub(crate) fn chunk_without_events(&mut self, completes: &[(String, u64)]) {
        self.marks.moved_unlogged(completes);
    }

    /// An append that carried the unsaved watermarks (an emit, a compaction)
    /// is durable.
    pub(crate) fn unsaved_written(&mut self) {
        self.marks.unsaved_logged();
    }

    /// The pass derived and logged everything it took.
    pub(crate) fn pass_succeeded(&mut self) {
        self.failure.recovered();
    }

    /// The pass failed with `message` at `now`: its sources stay dirty, the
    /// error is reported once per episode, and a retry is armed
    /// `retry_after_ms` on unless the timer is armed already (or closed).
    pub(crate) fn pass_failed(&mut self, plan: PassPlan, message: &str, now: Millis) -> FailureDecision {
        self.dirty.extend(plan.sources.into_iter().filter(|s| self.sources.contains(s)));
        let report = self.failure.failed(message);
        if self.phase != Phase::Closed && self.timer.is_none() {
            self.timer = Some(now.after(self.config.retry_after_ms));
        }
        FailureDecision { report, retry_at: self.timer }
    }

    /// The log had to be created anew when the host reopened it (a broken
    /// log found corrupt or gone): every watermark goes, every source is
    /// dirty and derived again from its first entry (backfill), soon.
    pub(crate) fn replaced(&mut self, now: Millis) {
        self.marks.clear();
        self.backfilled = true;
        self.dirty.extend(self.sources.iter().cloned());
        self.kick(None, now);
    }

    /// Whether a compaction is due at `now` (at open, then at most every
    /// `compact_every_ms`). False unless open.
    pub(crate) fn compaction_due(&self, now: Millis) -> bool {
        self.phase == Phase::Open && self.compaction.due(now)
    }

    /// A compaction starts at `now`.
    pub(crate) fn compaction_started(&mut self, now: Millis) {
        self.compaction.started(now);
    }

    /// `close` ran its last pass: the watermarks moved without an append (if
    /// any) are what the host writes before closing the log.
    pub(crate) fn unsaved_marks(&self) -> Vec<(&str, u64)> {
        self.marks.to_write(&[])
    }

    /// The pump closed: nothing more is derived, the timer is gone.
    pub(crate) fn closed(&mut self) {
        self.phase = Phase::Closed;
        self.timer = None;
    }
}

#[cfg(test)]
mod tests;
