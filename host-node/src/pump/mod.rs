//! The event pump's tokio driver, deriving events from
//! any durable journal (an [`EventSource`]).
//!
//! The pump derives events from durable sources after their appends and
//! appends them to the [event log](crate::eventlog) with the watermarks of the
//! sources they complete (same fsync), so a restart derives again only past
//! them: every derived event is logged at least once. It is also the sink
//! other producers [`emit`](Pump::emit) through.
//!
//! One task owns the log and runs every command in order: passes, emits,
//! compaction and close never interleave. File I/O runs
//! on tokio's blocking pool, one operation at a time. The order of each
//! operation and the decisions (dirty set, watermarks, chunks, failure
//! handling, compaction schedule, retention) are [`leasehold_core::pump`]'s:
//! the task drives its [`PumpMachine`](leasehold_core::pump::PumpMachine),
//! as the Node.js pump does.
//!
//! - [`Pump::kick`]: a source appended; its pass runs after `kick_delay`
//!   (50 ms), so a burst makes one pass. The timer never keeps anything alive:
//!   the task ends when every [`Pump`] handle is dropped.
//! - A pass appends in chunks of at most `chunk_size` drafts, each with the
//!   watermarks it completes. The next chunk is derived while the last one is
//!   written and synced, each draft serialised as soon as it is derived (a
//!   chunk is held as its JSON bytes), so a pass holds at most two chunks.
//!   A failing append keeps the sources dirty, reports the error once (not
//!   per retry), retries after `retry_after` (1 s), and the pass answers the
//!   failure.
//! - [`Pump::flush`] derives and logs everything appended so far and fails
//!   when that could not be logged: never drop a source whose events are not
//!   durable.
//! - [`Pump::close`] derives what is left, records moved watermarks, closes
//!   the log.
//! - Compaction runs at open and at most every `compact_every` (1 h), with
//!   the `retention` window and each source's [`EventSource::quiet`].
//! - A log found broken (a failure after a compaction's rename, a failed
//!   append) is reopened by the next pass or emit; if it had to be created
//!   anew, every source is derived again (backfill) and the operation fails.

mod drive;
mod error;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod settlements;
mod source;
mod task;
mod trace_journal;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leasehold_core::pump::{
    COMPACT_EVERY_MS, DEFAULT_CHUNK_SIZE, DEFAULT_KICK_DELAY_MS, DEFAULT_RETENTION_MS, PumpConfig, RETRY_AFTER_MS,
};
use tokio::sync::{mpsc, oneshot};

pub use error::PumpError;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use settlements::{Following, SETTLEMENTS_SOURCE, SettlementSource, settlement_event};
pub use source::{EventDraft, EventSource};
pub use trace_journal::{DEFAULT_TRACE_JOURNAL_CAPACITY, TraceJournal};

use crate::eventlog::{LogHead, LogRead, LogStorage, StdStorage};
use task::{Command, PumpTask};

/// The wall clock: milliseconds since the Unix epoch. Stamps drafts without a
/// time and sets the retention cutoff.
pub type WallClock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The system clock now: milliseconds since the Unix epoch (0 before it).
pub fn unix_now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The system clock as a [`WallClock`].
pub fn system_clock() -> WallClock {
    Arc::new(unix_now_ms)
}

/// The pump's options. [`PumpOptions::new`] gives the defaults, in parentheses below.
#[derive(Clone)]
pub struct PumpOptions {
    /// The event log file.
    pub path: PathBuf,
    /// Delay from a kick to its pass (50 ms).
    pub kick_delay: Duration,
    /// At most this many drafts per append (1024); also the log's batch limit.
    pub chunk_size: usize,
    /// Delay before a failed pass is retried (1 s).
    pub retry_after: Duration,
    /// Least time between compactions (1 h).
    pub compact_every: Duration,
    /// Records of quiet (or gone) sources older than this may go (7 days).
    pub retention: Duration,
    /// The wall clock ([`system_clock`]).
    pub wall_clock: WallClock,
    /// The log's file operations ([`StdStorage`]).
    pub storage: Arc<dyn LogStorage>,
}

impl std::fmt::Debug for PumpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PumpOptions")
            .field("path", &self.path)
            .field("kick_delay", &self.kick_delay)
            .field("chunk_size", &self.chunk_size)
            .field("retry_after", &self.retry_after)
            .field("compact_every", &self.compact_every)
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl PumpOptions {
    /// The defaults for a log at `path`: a kick delay of 50 ms, at most 1024
    /// drafts per append, a retry after 1 s, compaction at most hourly,
    /// retention of 7 days, the system clock and [`StdStorage`].
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PumpOptions {
            path: path.into(),
            kick_delay: Duration::from_millis(DEFAULT_KICK_DELAY_MS),
            chunk_size: DEFAULT_CHUNK_SIZE,
            retry_after: Duration::from_millis(RETRY_AFTER_MS),
            compact_every: Duration::from_millis(COMPACT_EVERY_MS),
            retention: Duration::from_millis(DEFAULT_RETENTION_MS),
            wall_clock: system_clock(),
            storage: Arc::new(StdStorage),
        }
    }

    fn config(&self) -> PumpConfig {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        PumpConfig {
            kick_delay_ms: ms(self.kick_delay),
            chunk_size: self.chunk_size,
            retry_after_ms: ms(self.retry_after),
            compact_every_ms: ms(self.compact_every),
        }
    }
}

/// Where the pump stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PumpStatus {
    /// The log's head (`None` once closed).
    pub head: Option<LogHead>,
    /// The log was created at open or since (new, or replacing a corrupt
    /// one): every source was derived again.
    pub backfilled: bool,
    /// The failure reported for the pass, while passes keep failing.
    pub failing: Option<String>,
    /// Sources waiting for a pass.
    pub dirty: Vec<String>,
    /// The watermarks, by source.
    pub marks: BTreeMap<String, u64>,
}

/// A handle on the pump. Clones share the one task; the task ends when the
/// last handle is dropped (without deriving further: the next open derives
/// past the durable watermarks).
#[derive(Clone, Debug)]
pub struct Pump {
    tx: mpsc::UnboundedSender<Command>,
}

/// A kick-only handle that does not keep the pump alive: for a source's
/// append hook, which the pump itself owns (a strong handle there would keep
/// the task from ever ending).
#[derive(Clone, Debug)]
pub struct Kicker {
    tx: mpsc::WeakUnboundedSender<Command>,
}

impl Kicker {
    /// `source` appended: derive soon. Does nothing once the pump is gone.
    pub fn kick(&self, source: &str) {
        if let Some(tx) = self.tx.upgrade() {
            let _ = tx.send(Command::Kick(source.to_owned()));
        }
    }
}

/// Gathers the sources before the log opens: their watermarks are read at
/// open, and a source not registered then is taken as gone.
pub struct PumpBuilder {
    options: PumpOptions,
    sources: BTreeMap<String, Arc<dyn EventSource>>,
    tx: mpsc::UnboundedSender<Command>,
    rx: mpsc::UnboundedReceiver<Command>,
}

impl PumpBuilder {
    /// Registers `source` under `name` (replacing one of the same name).
    pub fn source(&mut self, name: impl Into<String>, source: Arc<dyn EventSource>) -> &mut Self {
        self.sources.insert(name.into(), source);
        self
    }

    /// A kicker for a source's append hook; kicks sent before the pump opens
    /// are handled after it did.
    pub fn kicker(&self) -> Kicker {
        Kicker { tx: self.tx.downgrade() }
    }

    /// Opens (or creates) the log, compacts it, derives every source past its
    /// watermark (on a new log: everything), and starts the pump's task on the
    /// current tokio runtime. A failing first pass does not fail the open: it
    /// is reported and retried in the background.
    ///
    /// # Errors
    /// [`PumpError::Config`] for options that can not work, [`PumpError::Log`]
    /// when the log can not be opened or created.
    pub async fn open(self) -> Result<Pump, PumpError> {
        let PumpBuilder { options, sources, tx, rx } = self;
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = PumpTask::new(&options, sources)?;
        tokio::spawn(task.run(rx, ready_tx));
        ready_rx.await.map_err(|_| PumpError::Gone)??;
        Ok(Pump { tx })
    }
}

impl Pump {
    /// A builder for a pump with `options`.
    pub fn builder(options: PumpOptions) -> PumpBuilder {
        let (tx, rx) = mpsc::unbounded_channel();
        PumpBuilder { options, sources: BTreeMap::new(), tx, rx }
    }

    /// `source` appended: derive it after the kick delay (batched with other
    /// kicks). Ignored after close.
    pub fn kick(&self, source: &str) {
        let _ = self.tx.send(Command::Kick(source.to_owned()));
    }

    /// A kick-only handle that does not keep the pump alive.
    pub fn kicker(&self) -> Kicker {
        Kicker { tx: self.tx.downgrade() }
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Command) -> Result<T, PumpError> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(make(reply)).map_err(|_| PumpError::Gone)?;
        answer.await.map_err(|_| PumpError::Gone)
    }

    /// Appends producer events for `source` through the pump's chain, in
    /// chunks of at most `chunk_size`; the source's identity fills the
    /// identity keys a draft has none for, the wall clock a missing time.
    ///
    /// # Errors
    /// [`PumpError::Log`] when an append failed (earlier chunks of the same
    /// call may be logged), [`PumpError::Closed`] after close.
    pub async fn emit(&self, source: &str, drafts: Vec<EventDraft>) -> Result<(), PumpError> {
        self.ask(|reply| Command::Emit { source: source.to_owned(), drafts, reply }).await?
    }

    /// Derives and logs everything the sources committed so far.
    ///
    /// # Errors
    /// [`PumpError::Log`] when it could not be logged (the pass retries in the
    /// background; the caller must not drop the sources), [`PumpError::Closed`]
    /// after close.
    pub async fn flush(&self) -> Result<(), PumpError> {
        self.ask(Command::Flush).await?
    }

    /// Registers a source after open; it derives from its first entry.
    ///
    /// # Errors
    /// [`PumpError::Closed`] after close.
    pub async fn add_source(&self, name: &str, source: Arc<dyn EventSource>) -> Result<(), PumpError> {
        self.ask(|reply| Command::AddSource { name: name.to_owned(), source, reply }).await?
    }

    /// Derives and logs what is left of `name`, then forgets it (its
    /// watermark goes; its old events become droppable by retention). Call it
    /// before dropping the source's journal.
    ///
    /// # Errors
    /// [`PumpError::Log`] when its events could not be logged: the source
    /// stays registered and its journal must be kept.
    pub async fn remove_source(&self, name: &str) -> Result<(), PumpError> {
        self.ask(|reply| Command::RemoveSource { name: name.to_owned(), reply }).await?
    }

    /// Compacts now (it also runs at open and at most every `compact_every`
    /// after a pass). Answers how many records went.
    ///
    /// # Errors
    /// [`PumpError::Log`] when compaction failed, [`PumpError::Closed`].
    pub async fn compact(&self) -> Result<u64, PumpError> {
        self.ask(Command::Compact).await?
    }

    /// Reads the log's records from sequence number `from` on, in the chain
    /// (so after everything sent before).
    ///
    /// # Errors
    /// [`PumpError::Log`] when the log can not be read, [`PumpError::Closed`].
    pub async fn read(&self, from: u64) -> Result<LogRead, PumpError> {
        self.ask(|reply| Command::Read { from, reply }).await?
    }

    /// Where the pump stands, in the chain.
    ///
    /// # Errors
    /// [`PumpError::Gone`] when the task ended.
    pub async fn status(&self) -> Result<PumpStatus, PumpError> {
        self.ask(Command::Status).await
    }

    /// Derives what is left, records moved watermarks and closes the log.
    /// Closing again does nothing.
    ///
    /// # Errors
    /// [`PumpError::Log`] when the last pass or the watermarks could not be
    /// logged (the log is closed all the same; the next open derives again).
    pub async fn close(&self) -> Result<(), PumpError> {
        self.ask(Command::Close).await?
    }
}
