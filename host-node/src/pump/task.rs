//! The pump's single task: it owns the log and the core state and runs one
//! command at a time, so passes, emits, compaction and close never
//! interleave.

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use leasehold_core::Millis;
use leasehold_core::pump::{PassPlan, Phase, PumpState, Retention};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

use super::{EventDraft, EventSource, PumpError, PumpOptions, PumpStatus, WallClock};
use crate::eventlog::{EncodedEvents, EventLog, EventRecord, LogError, LogOptions, LogRead};

type Reply<T> = oneshot::Sender<Result<T, PumpError>>;

/// A log operation running on the blocking pool; it hands the log back.
type LogOp<T> = tokio::task::JoinHandle<(Option<EventLog>, Result<T, LogError>)>;

/// A pass's append in flight and the watermarks it completes.
struct InFlight {
    op: LogOp<()>,
    completes: Vec<(String, u64)>,
}

/// What a handle asks the task.
pub(super) enum Command {
    Kick(String),
    Emit { source: String, drafts: Vec<EventDraft>, reply: Reply<()> },
    Flush(Reply<()>),
    AddSource { name: String, source: Arc<dyn EventSource>, reply: Reply<()> },
    RemoveSource { name: String, reply: Reply<()> },
    Compact(Reply<u64>),
    Read { from: u64, reply: Reply<LogRead> },
    Status(oneshot::Sender<PumpStatus>),
    Close(Reply<()>),
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Command::Kick(_) => "Kick",
            Command::Emit { .. } => "Emit",
            Command::Flush(_) => "Flush",
            Command::AddSource { .. } => "AddSource",
            Command::RemoveSource { .. } => "RemoveSource",
            Command::Compact(_) => "Compact",
            Command::Read { .. } => "Read",
            Command::Status(_) => "Status",
            Command::Close(_) => "Close",
        })
    }
}

/// Says something once on `tracing` and stderr (the reference implementation's `console.error`).
fn report(text: &str) {
    tracing::warn!(target: "leasehold::pump", "{text}");
    eprintln!("leasehold: {text}");
}

pub(super) struct PumpTask {
    state: PumpState,
    sources: BTreeMap<String, Arc<dyn EventSource>>,
    /// `None` before open, after close, or while lost (a blocking operation
    /// panicked): the next use opens it again.
    log: Option<EventLog>,
    path: PathBuf,
    log_options: LogOptions,
    retention_ms: u64,
    wall_clock: WallClock,
    start: Instant,
}

impl PumpTask {
    pub(super) fn new(
        options: &PumpOptions,
        sources: BTreeMap<String, Arc<dyn EventSource>>,
    ) -> Result<Self, PumpError> {
        let mut state = PumpState::new(options.config())?;
        for name in sources.keys() {
            state.register(name);
        }
        Ok(PumpTask {
            state,
            sources,
            log: None,
            path: options.path.clone(),
            log_options: LogOptions { storage: Arc::clone(&options.storage), max_batch: options.chunk_size },
            retention_ms: u64::try_from(options.retention.as_millis()).unwrap_or(u64::MAX),
            wall_clock: Arc::clone(&options.wall_clock),
            start: Instant::now(),
        })
    }

    /// Monotonic time since the task started, for the core.
    fn now(&self) -> Millis {
        Millis(u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    fn instant(&self, at: Millis) -> Instant {
        self.start + std::time::Duration::from_millis(at.0)
    }

    pub(super) async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>, ready: Reply<()>) {
        match self.open().await {
            Ok(()) => {
                let _ = ready.send(Ok(()));
            }
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        }
        loop {
            let deadline = self.state.poll_timeout();
            let wake = self.instant(deadline.unwrap_or(Millis::ZERO));
            tokio::select! {
                // The timer first: a pass that is due runs before commands
                // queued behind it, as the seed's chain would order them.
                biased;
                () = sleep_until(wake), if deadline.is_some() => {
                    if self.state.handle_timeout(self.now()) {
                        // Failures are reported once and retried by the state.
                        let _ = self.pass().await;
                    }
                }
                command = rx.recv() => match command {
                    Some(command) => self.handle(command).await,
                    // Every handle is gone: nothing keeps the task alive.
                    None => break,
                },
            }
        }
    }

    /// Open: the log, its watermarks, a compaction, the first pass.
    async fn open(&mut self) -> Result<(), PumpError> {
        let path = self.path.clone();
        let options = self.log_options.clone();
        let opened = tokio::task::spawn_blocking(move || EventLog::open(path, options))
            .await
            .map_err(|_| PumpError::Gone)??;
        let marks: Vec<(String, u64)> = opened.log.marks().iter().map(|(k, v)| (k.clone(), *v)).collect();
        self.log = Some(opened.log);
        self.state.opened(marks, opened.created);
        let _ = self.compact().await;
        // Logged and retried in the background when it fails.
        let _ = self.pass().await;
        Ok(())
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Kick(source) => {
                let now = self.now();
                self.state.kick(Some(&source), now);
            }
            Command::Emit { source, drafts, reply } => {
                let _ = reply.send(self.emit(&source, drafts).await);
            }
            Command::Flush(reply) => {
                let result = if self.state.phase() == Phase::Closed {
                    Err(PumpError::Closed)
                } else {
                    self.state.flush();
                    match self.pass().await {
                        // What was appended must still be in the file the
                        // log's path names when the caller hears it is.
                        Ok(()) => self.with_log(EventLog::verify).await,
                        failed => failed,
                    }
                };
                let _ = reply.send(result);
            }
            Command::AddSource { name, source, reply } => {
                let result = if self.state.phase() == Phase::Closed {
                    Err(PumpError::Closed)
                } else {
                    self.sources.insert(name.clone(), source);
                    self.state.register(&name);
                    let now = self.now();
                    self.state.kick(None, now);
                    Ok(())
                };
                let _ = reply.send(result);
            }
            Command::RemoveSource { name, reply } => {
                let _ = reply.send(self.remove_source(&name).await);
            }
            Command::Compact(reply) => {
                let result =
                    if self.state.phase() == Phase::Closed { Err(PumpError::Closed) } else { self.compact().await };
                let _ = reply.send(result);
            }
            Command::Read { from, reply } => {
                let result = if self.state.phase() == Phase::Closed {
                    Err(PumpError::Closed)
                } else {
                    self.with_log(move |log| log.read_from(from)).await
                };
                let _ = reply.send(result);
            }
            Command::Status(reply) => {
                let _ = reply.send(self.status());
            }
            Command::Close(reply) => {
                let _ = reply.send(self.close().await);
            }
        }
    }

    fn status(&self) -> PumpStatus {
        PumpStatus {
            head: self.log.as_ref().filter(|_| self.state.phase() != Phase::Closed).map(EventLog::head),
            backfilled: self.state.backfilled(),
            failing: self.state.failing().map(str::to_owned),
            dirty: self.state.dirty().map(str::to_owned).collect(),
            marks: self.state.marks().iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        }
    }

    /// Runs `op` on the log on the blocking pool (see [`PumpTask::start`]
    /// and [`PumpTask::finish`]).
    async fn with_log<T: Send + 'static>(
        &mut self,
        op: impl FnOnce(&mut EventLog) -> Result<T, LogError> + Send + 'static,
    ) -> Result<T, PumpError> {
        let running = self.start(op)?;
        self.finish(running).await
    }

    /// Starts `op` on the log on the blocking pool; the log is away until
    /// [`PumpTask::finish`] takes the result. A lost log (a panic in an earlier
    /// operation) is opened again first.
    fn start<T: Send + 'static>(
        &mut self,
        op: impl FnOnce(&mut EventLog) -> Result<T, LogError> + Send + 'static,
    ) -> Result<LogOp<T>, PumpError> {
        if self.state.phase() != Phase::Open {
            return Err(PumpError::Closed);
        }
        let log = self.log.take();
        let path = self.path.clone();
        let options = self.log_options.clone();
        Ok(tokio::task::spawn_blocking(move || {
            let mut log = match log {
                Some(log) => log,
                None => match EventLog::open(path, options) {
                    Ok(opened) if opened.created => {
                        let epoch = opened.log.head().epoch;
                        return (Some(opened.log), Err(LogError::Replaced { epoch }));
                    }
                    Ok(opened) => opened.log,
                    Err(e) => return (None, Err(e)),
                },
            };
            let result = op(&mut log);
            (Some(log), result)
        }))
    }

    /// Takes back the log from a started operation and answers its result. A
    /// log replaced by a new one makes every source dirty from its first
    /// entry (backfill).
    async fn finish<T>(&mut self, running: LogOp<T>) -> Result<T, PumpError> {
        let result = match running.await {
            Ok((log, result)) => {
                self.log = log;
                result
            }
            Err(panic) => Err(LogError::Panicked(panic.to_string())),
        };
        if let Err(LogError::Replaced { .. }) = &result {
            let now = self.now();
            self.state.replaced(now);
        }
        result.map_err(PumpError::from)
    }

    /// One derivation pass over the dirty sources.
    async fn pass(&mut self) -> Result<(), PumpError> {
        if self.state.phase() != Phase::Open {
            return Ok(());
        }
        let plan = self.state.begin_pass();
        if let Err(e) = self.derive(&plan).await {
            let now = self.now();
            let decision = self.state.pass_failed(plan, &e.to_string(), now);
            if decision.report {
                report(&format!("event log append failed (retrying in the background): {e}"));
            }
            return Err(e);
        }
        self.state.pass_succeeded();
        let now = self.now();
        if self.state.compaction_due(now) {
            let _ = self.compact().await;
        }
        Ok(())
    }

    /// Derives the plan's sources past their watermarks, appending chunk by
    /// chunk. Two stages overlap: while one chunk is written and synced on
    /// the blocking pool, the next is derived here, each draft serialised as
    /// soon as it is derived and dropped at once (a chunk is held as its
    /// bytes; a draft's allocations are reused by the next). At most two
    /// chunks are held at a time. Whatever happens, the append in flight is
    /// settled before this returns.
    async fn derive(&mut self, plan: &PassPlan) -> Result<(), PumpError> {
        let mut in_flight = None;
        let next_seq = self.log.as_ref().map(|log| log.head().next_seq);
        let derived = self.derive_chunks(plan, next_seq, &mut in_flight).await;
        let settled = self.settle(&mut in_flight).await;
        derived.and(settled)
    }

    /// `next_seq` is the log's next sequence number when the pass began
    /// (`None` when the log is not open yet): each chunk is numbered from it
    /// ahead of its append (see [`EncodedEvents::number_from`]).
    async fn derive_chunks(
        &mut self,
        plan: &PassPlan,
        mut next_seq: Option<u64>,
        in_flight: &mut Option<InFlight>,
    ) -> Result<(), PumpError> {
        // The chunker counts drafts and cuts watermarks; the drafts
        // themselves go straight into `events`.
        let mut chunker = self.state.chunker::<()>();
        let mut events = EncodedEvents::default();
        let mut drafts = Vec::new();
        let now_ms = (self.wall_clock)();
        let mut panicked = None;
        'sources: for name in &plan.sources {
            let Some(source) = self.sources.get(name).cloned() else { continue };
            let from = self.state.mark(name);
            let len = source.committed_len();
            if len <= from {
                continue;
            }
            chunker.begin_source(name, from);
            let identity = source.identity();
            for index in from..len {
                // A source that panics must not stop the others: its
                // watermark stops before the entry, and the pass fails.
                let derived = panic::catch_unwind(AssertUnwindSafe(|| source.derive(index, &mut drafts)));
                if let Err(payload) = derived {
                    drafts.clear();
                    chunker.end_source(index);
                    panicked.get_or_insert(PumpError::SourcePanicked {
                        source_name: name.clone(),
                        index,
                        message: panic_message(payload.as_ref()),
                    });
                    continue 'sources;
                }
                for draft in drafts.drain(..) {
                    if let Some(chunk) = chunker.push(index, ()) {
                        // The next chunk is sized as this one.
                        let next = EncodedEvents::with_capacity(events.len(), events.byte_len());
                        let chunk_events = std::mem::replace(&mut events, next);
                        self.commit(chunk_events, chunk.completes, &mut next_seq, in_flight).await?;
                    }
                    events.push_ref(&draft.as_record(name, &identity, now_ms))?;
                }
            }
            chunker.end_source(len);
        }
        if let Some(chunk) = chunker.finish() {
            self.commit(events, chunk.completes, &mut next_seq, in_flight).await?;
        }
        panicked.map_or(Ok(()), Err)
    }

    /// Numbers a chunk's `events` from `next_seq` while the append before
    /// it is still in flight, waits for that append, then starts the append
    /// of the chunk with the watermarks it completes (and the unsaved ones).
    /// A chunk without events moves its watermarks in memory only, once the
    /// appends before it are durable.
    async fn commit(
        &mut self,
        mut events: EncodedEvents,
        completes: Vec<(String, u64)>,
        next_seq: &mut Option<u64>,
        in_flight: &mut Option<InFlight>,
    ) -> Result<(), PumpError> {
        if let Some(next) = next_seq.as_mut().filter(|_| !events.is_empty()) {
            events.number_from(*next);
            *next += events.len() as u64;
        }
        self.settle(in_flight).await?;
        if events.is_empty() {
            self.state.chunk_without_events(&completes);
            return Ok(());
        }
        let marks = owned(self.state.to_write(&completes));
        let op = self.start(move |log| log.append_encoded(events, marks).map(|_| ()))?;
        *in_flight = Some(InFlight { op, completes });
        Ok(())
    }

    /// Waits for the append in flight; when it is durable, its watermarks
    /// move and its sources hear they were logged.
    async fn settle(&mut self, in_flight: &mut Option<InFlight>) -> Result<(), PumpError> {
        let Some(InFlight { op, completes }) = in_flight.take() else { return Ok(()) };
        self.finish(op).await?;
        self.state.chunk_logged(&completes);
        for (name, position) in &completes {
            if let Some(source) = self.sources.get(name) {
                source.logged(*position);
            }
        }
        Ok(())
    }

    async fn emit(&mut self, source: &str, drafts: Vec<EventDraft>) -> Result<(), PumpError> {
        if self.state.phase() != Phase::Open {
            return Err(PumpError::Closed);
        }
        let identity = self.sources.get(source).map(|s| s.identity()).unwrap_or_default();
        let now = (self.wall_clock)();
        let mut records: Vec<EventRecord> = drafts.into_iter().map(|d| d.into_record(source, &identity, now)).collect();
        let max = self.state.config().chunk_size;
        while !records.is_empty() {
            let rest = records.split_off(records.len().min(max));
            let part = std::mem::replace(&mut records, rest);
            let marks = owned(self.state.unsaved_marks());
            self.with_log(move |log| log.append(&part, marks).map(|_| ())).await?;
            self.state.unsaved_written();
        }
        Ok(())
    }

    /// Retention: drop records older than the
    /// window whose source is quiet or gone. Failures are reported, not
    /// retried before the next scheduled compaction.
    async fn compact(&mut self) -> Result<u64, PumpError> {
        let now = self.now();
        self.state.compaction_started(now);
        let mut retention = Retention::new(Millis((self.wall_clock)()), self.retention_ms);
        let sources = self.sources.clone();
        // The watermarks in memory are true of the log: durable ones plus
        // those moved since by chunks without events.
        let marks = owned(self.state.marks().iter().collect());
        let result = self
            .with_log(move |log| {
                log.compact(
                    |source, at| retention.drops(source, at, |s| sources.get(s).is_none_or(|src| src.quiet())),
                    marks,
                )
            })
            .await;
        match &result {
            Ok(dropped) if *dropped > 0 => self.state.unsaved_written(),
            Ok(_) => {}
            Err(e) => report(&format!("event log compaction failed: {e}")),
        }
        result
    }

    async fn remove_source(&mut self, name: &str) -> Result<(), PumpError> {
        if self.state.phase() != Phase::Open {
            return Err(PumpError::Closed);
        }
        // Seed: prune flushes before the journal goes.
        self.state.flush();
        self.pass().await?;
        self.state.forget(name);
        self.sources.remove(name);
        Ok(())
    }

    /// Derive what is left, record the watermarks,
    /// close the log — the log closes even when the pass failed.
    async fn close(&mut self) -> Result<(), PumpError> {
        if self.state.phase() != Phase::Open {
            self.state.closed();
            return Ok(());
        }
        self.state.flush();
        let mut result = self.pass().await;
        if result.is_ok() && self.state.marks().has_unsaved() {
            let marks = owned(self.state.unsaved_marks());
            result = self.with_log(move |log| log.append(&[], marks).map(|_| ())).await;
            if result.is_ok() {
                self.state.unsaved_written();
            }
        }
        if result.is_ok() {
            result = self.with_log(EventLog::verify).await;
        }
        self.state.closed();
        if let Some(mut log) = self.log.take() {
            log.close();
        }
        self.sources.clear();
        if let Err(e) = &result {
            report(&format!("event log close failed: {e}"));
        }
        result
    }
}

/// A panic payload's message (`&str` or `String`), or a placeholder.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

fn owned(marks: Vec<(&str, u64)>) -> Vec<(String, u64)> {
    marks.into_iter().map(|(s, p)| (s.to_owned(), p)).collect()
}
