//! The pump's single task: it owns the log and the core's [`PumpMachine`]
//! and runs one command at a time, so passes, emits, compaction and close
//! never interleave. The order of each operation is the machine's; this task
//! starts operations and does what the machine's outputs ask
//! ([`super::drive`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use leasehold_core::Millis;
use leasehold_core::pump::{LogFailure, OpError, Phase, PumpMachine, Retention};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

use super::{EventDraft, EventSource, PumpError, PumpOptions, PumpStatus, WallClock};
use crate::eventlog::{EventLog, LogError, LogOptions, LogRead};

type Reply<T> = oneshot::Sender<Result<T, PumpError>>;

/// A log operation running on the blocking pool; it hands the log back.
pub(super) type LogOp<T> = tokio::task::JoinHandle<(Option<EventLog>, Result<T, LogError>)>;

impl LogFailure for PumpError {
    fn replaced_log(&self) -> bool {
        matches!(self, PumpError::Log(LogError::Replaced { .. }))
    }
}

/// The machine's refusal or the host's error, as the pump's callers hear it.
pub(super) fn op_error(error: OpError<PumpError>) -> PumpError {
    match error {
        OpError::Failed(e) => e,
        // One command runs at a time, so the machine is never busy here.
        OpError::NotOpen(_) | OpError::Busy => PumpError::Closed,
    }
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

/// Says something once, as a `tracing` warning and on stderr.
pub(super) fn report(text: &str) {
    tracing::warn!(target: "leasehold::pump", "{text}");
    // Not `eprintln!`, which panics when stderr is a pipe whose reader went away.
    let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("leasehold: {text}\n"));
}

pub(super) struct PumpTask {
    pub(super) machine: PumpMachine<PumpError>,
    pub(super) sources: BTreeMap<String, Arc<dyn EventSource>>,
    /// `None` before open, after close, or while lost (a blocking operation
    /// panicked): the next use opens it again.
    pub(super) log: Option<EventLog>,
    path: PathBuf,
    log_options: LogOptions,
    retention_ms: u64,
    pub(super) wall_clock: WallClock,
    start: Instant,
}

impl PumpTask {
    pub(super) fn new(
        options: &PumpOptions,
        sources: BTreeMap<String, Arc<dyn EventSource>>,
    ) -> Result<Self, PumpError> {
        let mut machine = PumpMachine::new(options.config())?;
        for name in sources.keys() {
            machine.register(name);
        }
        Ok(PumpTask {
            machine,
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
    pub(super) fn now(&self) -> Millis {
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
            let deadline = self.machine.poll_timeout();
            let wake = self.instant(deadline.unwrap_or(Millis::ZERO));
            tokio::select! {
                // The timer first: a pass that is due runs before commands
                // queued behind it, as the seed's chain would order them.
                biased;
                () = sleep_until(wake), if deadline.is_some() => {
                    let now = self.now();
                    self.machine.handle_timeout(now);
                    // Failures are reported once and retried by the machine.
                    let _ = self.drive(Vec::new()).await;
                }
                command = rx.recv() => match command {
                    Some(command) => self.handle(command).await,
                    // Every handle is gone: nothing keeps the task alive.
                    None => break,
                },
            }
        }
    }

    /// Open: the log, then the machine's compaction and first pass.
    async fn open(&mut self) -> Result<(), PumpError> {
        let path = self.path.clone();
        let options = self.log_options.clone();
        let opened = tokio::task::spawn_blocking(move || EventLog::open(path, options))
            .await
            .map_err(|_| PumpError::Gone)??;
        let marks: Vec<(String, u64)> = opened.log.marks().iter().map(|(k, v)| (k.clone(), *v)).collect();
        self.log = Some(opened.log);
        // Each source hears how far the log holds it before the first pass
        // reads its length: one that learns its length from elsewhere (the
        // settlements journal, read by a task of its own) starts there, not
        // below its watermark, which that pass would report as a journal cut
        // back.
        for (name, mark) in &marks {
            if let Some(source) = self.sources.get(name).filter(|_| *mark > 0) {
                source.logged(*mark);
            }
        }
        let now = self.now();
        self.machine.handle_opened(now, marks, opened.created);
        // A failing pass is reported and retried in the background.
        let _ = self.drive(Vec::new()).await;
        Ok(())
    }

    async fn handle(&mut self, command: Command) {
        let now = self.now();
        match command {
            Command::Kick(source) => self.machine.handle_kick(now, Some(&source)),
            Command::Emit { source, drafts, reply } => {
                let identity = self.sources.get(&source).map(|s| s.identity()).unwrap_or_default();
                let wall = (self.wall_clock)();
                let records: Vec<_> = drafts.into_iter().map(|d| d.into_record(&source, &identity, wall)).collect();
                self.machine.handle_emit(now, records.len());
                let _ = reply.send(self.drive(records).await.map(|_| ()));
            }
            Command::Flush(reply) => {
                self.machine.handle_flush(now);
                let _ = reply.send(self.drive(Vec::new()).await.map(|_| ()));
            }
            Command::AddSource { name, source, reply } => {
                let result = self.machine.handle_add_source(now, &name).map_err(op_error);
                if result.is_ok() {
                    self.sources.insert(name, source);
                }
                let _ = reply.send(result);
            }
            Command::RemoveSource { name, reply } => {
                self.machine.handle_remove(now, &name);
                let _ = reply.send(self.drive(Vec::new()).await.map(|_| ()));
            }
            Command::Compact(reply) => {
                self.machine.handle_compact(now);
                let _ = reply.send(self.drive(Vec::new()).await);
            }
            Command::Read { from, reply } => {
                let result = self.with_log(move |log| log.read_from(from)).await;
                if result.as_ref().is_err_and(LogFailure::replaced_log) {
                    let now = self.now();
                    self.machine.handle_log_replaced(now);
                }
                let _ = reply.send(result);
            }
            Command::Status(reply) => {
                let _ = reply.send(self.status());
            }
            Command::Close(reply) => {
                self.machine.handle_close(now);
                let _ = reply.send(self.drive(Vec::new()).await.map(|_| ()));
            }
        }
    }

    fn status(&self) -> PumpStatus {
        let state = self.machine.state();
        PumpStatus {
            head: self.log.as_ref().filter(|_| state.phase() != Phase::Closed).map(EventLog::head),
            backfilled: state.backfilled(),
            failing: state.failing().map(str::to_owned),
            dirty: state.dirty().map(str::to_owned).collect(),
            marks: state.marks().iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        }
    }

    /// Runs `op` on the log on the blocking pool (see [`PumpTask::start`]
    /// and [`PumpTask::finish`]).
    pub(super) async fn with_log<T: Send + 'static>(
        &mut self,
        op: impl FnOnce(&mut EventLog) -> Result<T, LogError> + Send + 'static,
    ) -> Result<T, PumpError> {
        let running = self.start(op)?;
        self.finish(running).await
    }

    /// Starts `op` on the log on the blocking pool; the log is away until
    /// [`PumpTask::finish`] takes the result. A lost log (a panic in an earlier
    /// operation) is opened again first.
    pub(super) fn start<T: Send + 'static>(
        &mut self,
        op: impl FnOnce(&mut EventLog) -> Result<T, LogError> + Send + 'static,
    ) -> Result<LogOp<T>, PumpError> {
        if self.machine.state().phase() != Phase::Open {
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

    /// Takes back the log from a started operation and answers its result
    /// (a log replaced by a new one is the machine's to handle: see
    /// [`LogFailure`]).
    pub(super) async fn finish<T>(&mut self, running: LogOp<T>) -> Result<T, PumpError> {
        let result = match running.await {
            Ok((log, result)) => {
                self.log = log;
                result
            }
            Err(panic) => Err(LogError::Panicked(panic.to_string())),
        };
        result.map_err(PumpError::from)
    }

    /// Retention: drop records older than the window whose source is quiet
    /// or gone, recording `marks` (true of the log: durable ones plus those
    /// moved since by chunks without events).
    pub(super) async fn compact(&mut self, marks: Vec<(String, u64)>) -> Result<u64, PumpError> {
        let mut retention = Retention::new(Millis((self.wall_clock)()), self.retention_ms);
        let sources = self.sources.clone();
        self.with_log(move |log| {
            log.compact(|source, at| retention.drops(source, at, |s| sources.get(s).is_none_or(|src| src.quiet())), marks)
        })
        .await
    }
}
