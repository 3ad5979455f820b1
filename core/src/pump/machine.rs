//! The event pump as a sans-IO state machine: the order of every pump
//! operation (open, a timer's pass, flush, emit, compaction, removing a
//! source, close), so a native host and the Node.js host run the same one.
//! It never calls a source or the log: it asks the host to, through
//! [`Output`]s, and hears back through `handle_*` inputs.
//!
//! # The run loop a host writes
//!
//! ```text
//! start one operation at a time (the next after the previous one's Resolve):
//!     machine.handle_opened/handle_flush/handle_emit/handle_compact/
//!             handle_remove/handle_close(now, ..), or
//!     machine.handle_timeout(now) once machine.poll_timeout() has passed
//! then, until Output::Resolve:
//!     match machine.poll_output() {
//!         Read { source }         -> machine.handle_length(now, source's committed length)
//!         Derive { index }        -> hold the drafts of that entry of the source read last;
//!                                    machine.handle_derived(now, Ok(count) or Err(e))
//!         Append { drafts, marks } -> start appending the next `drafts` held drafts with
//!                                    `marks` (do not wait for it)
//!         Settle                  -> wait for the append in flight;
//!                                    machine.handle_appended(now, result)
//!         Logged { completes }    -> tell each source the position it was logged up to
//!         Compact { marks }       -> compact by retention recording `marks`;
//!                                    machine.handle_compacted(now, dropped or error)
//!         Verify                  -> check the log's file is what was written;
//!                                    machine.handle_verified(now, result)
//!         Forget { source }       -> drop the source
//!         CloseLog                -> close the log file, drop the sources
//!         Report(text)            -> say it once (stderr, a logger)
//!         Resolve { op, result }  -> answer the caller of `op`; the operation is over
//!     }
//! at any time: machine.handle_kick(now, source) when a source appended.
//! ```
//!
//! `now` is monotonic [`Millis`] the host reads at each input. Drafts stay in
//! the host: the machine counts them. Errors `E` are the host's, opaque but
//! for their text (reported once per failure episode) and whether the log
//! had to be created anew ([`LogFailure::replaced_log`]: every source is then
//! derived again from its first entry).

use alloc::boxed::Box;
use alloc::collections::{BTreeSet, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Display;

use super::pass::{PassRun, Standing, Step};
use super::state::{ConfigError, Phase, PumpConfig, PumpState};
use crate::Millis;

/// A host's error, as the machine needs to know it.
pub trait LogFailure: Display {
    /// Whether the log was found broken and created anew (a new epoch): the
    /// watermarks it recorded are gone.
    fn replaced_log(&self) -> bool;
}

/// The operation a [`Output::Resolve`] ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The open's compaction and first pass ([`PumpMachine::handle_opened`]).
    Open,
    /// A pass the timer started: a kick's, or the retry of a failed pass.
    Timer,
    /// [`PumpMachine::handle_flush`].
    Flush,
    /// [`PumpMachine::handle_emit`].
    Emit,
    /// [`PumpMachine::handle_compact`]: the result is the records dropped.
    Compact,
    /// [`PumpMachine::handle_remove`].
    Remove,
    /// [`PumpMachine::handle_close`].
    Close,
}

/// Why an operation did not succeed.
#[derive(Debug, PartialEq, Eq)]
pub enum OpError<E> {
    /// The pump is not open: not yet, or closed (the phase says which).
    NotOpen(Phase),
    /// Another operation is running: the host starts one at a time.
    Busy,
    /// The host's error: a failed append, compaction or check, or a source
    /// that failed on an entry.
    Failed(E),
}

/// What the machine asks of the host; see the run loop at the top.
#[derive(Debug, PartialEq, Eq)]
pub enum Output<E> {
    /// Read `source`'s committed length: answer [`PumpMachine::handle_length`].
    Read {
        /// The source's name.
        source: String,
    },
    /// Derive entry `index` (0-based) of the source read last: answer
    /// [`PumpMachine::handle_derived`].
    Derive {
        /// The entry.
        index: u64,
    },
    /// Start appending the next `drafts` drafts held (0: only the
    /// watermarks) with `marks` (source, position); answer at [`Output::Settle`].
    Append {
        /// How many of the held drafts, oldest first.
        drafts: usize,
        /// The watermarks the append records.
        marks: Vec<(String, u64)>,
    },
    /// Wait for the append in flight: answer [`PumpMachine::handle_appended`].
    Settle,
    /// These sources' events are durable up to these positions (source,
    /// position).
    Logged {
        /// The watermarks that moved.
        completes: Vec<(String, u64)>,
    },
    /// Compact the log by retention, recording `marks`: answer
    /// [`PumpMachine::handle_compacted`].
    Compact {
        /// Every watermark, true of the log.
        marks: Vec<(String, u64)>,
    },
    /// Check that the log's file still holds what was appended: answer
    /// [`PumpMachine::handle_verified`].
    Verify,
    /// Drop the source: its events are logged, its watermark is gone.
    Forget {
        /// The source's name.
        source: String,
    },
    /// Close the log and drop the sources: the pump is closed.
    CloseLog,
    /// Say this once (it is not repeated while the same failure lasts).
    Report(String),
    /// `op` is over with `result` (records dropped for [`Op::Compact`], else 0).
    Resolve {
        /// The operation.
        op: Op,
        /// Its outcome.
        result: Result<u64, OpError<E>>,
    },
}

/// What the running operation does now.
enum Stage<E> {
    /// A compaction at open; the pass follows.
    OpenCompaction,
    /// A pass; what follows depends on the operation.
    Pass(Box<PassRun<E>>),
    /// The compaction a successful pass found due.
    PassCompaction,
    /// `left` emitted drafts still to append; `waiting` for the append sent.
    Emit { left: usize, waiting: bool },
    /// Close's append of the watermarks moved without one.
    CloseMarks { waiting: bool },
    /// Waiting for [`PumpMachine::handle_verified`].
    Verify,
    /// An asked-for compaction.
    Compaction,
}

/// The pump: [`PumpState`] plus the order of its operations.
pub struct PumpMachine<E> {
    state: PumpState,
    now: Millis,
    out: VecDeque<Output<E>>,
    running: Option<(Op, Stage<E>)>,
    /// The source [`PumpMachine::handle_remove`] drops.
    removing: Option<String>,
    /// Sources whose committed length was last read behind their watermark:
    /// said once when one goes behind, again only after it caught up.
    behind: BTreeSet<String>,
}

/// What is said of a source read with fewer committed entries (`len`) than
/// its watermark (`mark`).
fn behind_text(source: &str, len: u64, mark: u64) -> String {
    format!(
        "event source '{source}' holds {len} committed entries, fewer than its watermark {mark}: \
         its entries are derived again only from {mark} on (was its journal replaced or cut back? \
         remove the source and add it again to derive it from its first entry)"
    )
}

fn owned<'a>(marks: impl IntoIterator<Item = (&'a str, u64)>) -> Vec<(String, u64)> {
    marks.into_iter().map(|(s, p)| (String::from(s), p)).collect()
}

impl<E: LogFailure> PumpMachine<E> {
    /// A pump not open yet.
    ///
    /// # Errors
    /// [`ConfigError`] when `config` can not work.
    pub fn new(config: PumpConfig) -> Result<Self, ConfigError> {
        Ok(PumpMachine {
            state: PumpState::new(config)?,
            now: Millis::ZERO,
            out: VecDeque::new(),
            running: None,
            removing: None,
            behind: BTreeSet::new(),
        })
    }

    /// The state: phase, sources, dirty set, watermarks, failure.
    pub fn state(&self) -> &PumpState {
        &self.state
    }

    /// Whether an operation runs (until its [`Output::Resolve`]).
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// A source known before the open (derived past its recorded watermark
    /// by the open's pass).
    pub fn register(&mut self, source: &str) {
        self.state.register(source);
    }

    /// A source joins an open pump at `now`: derived from its first entry by
    /// a pass soon.
    ///
    /// # Errors
    /// [`OpError::NotOpen`] unless open (nothing changes).
    pub fn handle_add_source(&mut self, now: Millis, source: &str) -> Result<(), OpError<E>> {
        self.now = now;
        self.must_be_open()?;
        self.state.register(source);
        self.state.kick(None, now);
        Ok(())
    }

    /// `source` appended (`None`: a pass is wanted): a pass runs after the
    /// kick delay, one for a burst of kicks.
    pub fn handle_kick(&mut self, now: Millis, source: Option<&str>) {
        self.now = now;
        self.state.kick(source, now);
    }

    /// When [`PumpMachine::handle_timeout`] is due; `None` while nothing is
    /// armed.
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.state.poll_timeout()
    }

    /// The timer passed: a pass runs ([`Op::Timer`]) when one is due and no
    /// operation runs (else the deadline stays and the host calls again
    /// after the operation).
    pub fn handle_timeout(&mut self, now: Millis) {
        self.now = now;
        if self.running.is_none() && self.state.handle_timeout(now) {
            self.start_pass(Op::Timer);
        }
    }

    /// The host opened the log, which recorded `marks`; `created` when it is
    /// new (or replaced a corrupt one). The open compacts, then derives every
    /// source ([`Op::Open`]; a failing pass is reported and retried, the open
    /// still succeeds).
    pub fn handle_opened<S: AsRef<str>>(&mut self, now: Millis, marks: impl IntoIterator<Item = (S, u64)>, created: bool) {
        self.now = now;
        if !self.can_start(Op::Open) {
            return;
        }
        if self.state.phase() != Phase::Opening {
            return self.resolve(Op::Open, Err(OpError::NotOpen(self.state.phase())));
        }
        self.state.opened(marks, created);
        self.start_compaction(Op::Open, Stage::OpenCompaction);
    }

    /// Everything the sources committed is derived and logged, then the
    /// file checked ([`Op::Flush`]).
    pub fn handle_flush(&mut self, now: Millis) {
        self.now = now;
        if self.start(Op::Flush) {
            self.state.flush();
            self.start_pass(Op::Flush);
        }
    }

    /// `count` drafts the host holds are appended in chunks, each with the
    /// watermarks moved without an append ([`Op::Emit`]).
    pub fn handle_emit(&mut self, now: Millis, count: usize) {
        self.now = now;
        if self.start(Op::Emit) {
            self.running = Some((Op::Emit, Stage::Emit { left: count, waiting: false }));
        }
    }

    /// A compaction now ([`Op::Compact`]).
    pub fn handle_compact(&mut self, now: Millis) {
        self.now = now;
        if self.start(Op::Compact) {
            self.start_compaction(Op::Compact, Stage::Compaction);
        }
    }

    /// `source`'s events are derived and logged, then it is dropped
    /// ([`Op::Remove`]; kept when that failed).
    pub fn handle_remove(&mut self, now: Millis, source: &str) {
        self.now = now;
        if self.start(Op::Remove) {
            self.removing = Some(String::from(source));
            self.state.flush();
            self.start_pass(Op::Remove);
        }
    }

    /// What is left is derived, the moved watermarks recorded, the file
    /// checked, and the log closed, also when one of those failed
    /// ([`Op::Close`]). Closing a pump that is not open just closes it.
    pub fn handle_close(&mut self, now: Millis) {
        self.now = now;
        if !self.can_start(Op::Close) {
            return;
        }
        if self.state.phase() != Phase::Open {
            self.state.closed();
            return self.resolve(Op::Close, Ok(0));
        }
        self.state.flush();
        self.start_pass(Op::Close);
    }

    /// The committed length of the source of the last [`Output::Read`], or
    /// why it could not be read (the source stops; the pass fails with it).
    /// A length below the source's watermark (its journal replaced or cut
    /// back) derives nothing until the source grows past the watermark; it
    /// is said once ([`Output::Report`]) until the source catches up.
    pub fn handle_length(&mut self, now: Millis, len: Result<u64, E>) {
        self.now = now;
        let Some((_, Stage::Pass(pass))) = self.running.as_mut() else { return };
        match pass.length(&self.state, len) {
            Some(Standing::Behind { source, len, mark }) if !self.behind.contains(&source) => {
                self.out.push_back(Output::Report(behind_text(&source, len, mark)));
                self.behind.insert(source);
            }
            Some(Standing::Level(source)) => {
                self.behind.remove(&source);
            }
            // Behind and already said so, or level as it was.
            Some(Standing::Behind { .. }) | None => {}
        }
    }

    /// The entry of the last [`Output::Derive`] gave `count` drafts, now held
    /// by the host; or it failed: its source stops before it (its watermark
    /// too) and the pass fails with the first such error once the others
    /// are logged.
    pub fn handle_derived(&mut self, now: Millis, count: Result<usize, E>) {
        self.now = now;
        if let Some((_, Stage::Pass(pass))) = self.running.as_mut() {
            pass.derived(count);
        }
    }

    /// The host can not go on with the pass (a draft it could not
    /// serialise): nothing more is derived or appended, and the pass fails
    /// with `error` once the append in flight settles.
    pub fn handle_abort(&mut self, now: Millis, error: E) {
        self.now = now;
        if let Some((_, Stage::Pass(pass))) = self.running.as_mut() {
            pass.stop(error);
        }
    }

    /// The append in flight settled.
    pub fn handle_appended(&mut self, now: Millis, result: Result<(), E>) {
        self.now = now;
        if let Err(e) = &result {
            if e.replaced_log() {
                self.state.replaced(now);
            }
        }
        let Some((op, stage)) = self.running.as_mut() else { return };
        let op = *op;
        match stage {
            Stage::Pass(pass) => {
                if let Some(completes) = pass.appended(&mut self.state, result) {
                    self.out.push_back(Output::Logged { completes });
                }
            }
            Stage::Emit { waiting: waiting @ true, .. } => {
                *waiting = false;
                if let Err(e) = result {
                    return self.resolve(op, Err(OpError::Failed(e)));
                }
                self.state.unsaved_written();
            }
            Stage::CloseMarks { waiting: true } => match result {
                Ok(()) => {
                    self.state.unsaved_written();
                    self.running = Some((op, Stage::Verify));
                    self.out.push_back(Output::Verify);
                }
                Err(e) => self.close_log(Err(OpError::Failed(e))),
            },
            _ => {}
        }
    }

    /// The compaction of the last [`Output::Compact`] dropped this many
    /// records, or failed (reported; an asked-for compaction answers it).
    pub fn handle_compacted(&mut self, now: Millis, dropped: Result<u64, E>) {
        self.now = now;
        let Some((op, stage)) = self.running.take() else { return };
        let dropped = match dropped {
            Ok(dropped) => {
                if dropped > 0 {
                    self.state.unsaved_written();
                }
                Ok(dropped)
            }
            Err(e) => {
                if e.replaced_log() {
                    self.state.replaced(now);
                }
                self.out.push_back(Output::Report(format!("event log compaction failed: {e}")));
                Err(OpError::Failed(e))
            }
        };
        match stage {
            Stage::OpenCompaction => self.start_pass(op),
            Stage::PassCompaction => self.after_pass(op, Ok(())),
            Stage::Compaction => self.resolve(op, dropped),
            other => self.running = Some((op, other)),
        }
    }

    /// The check of the last [`Output::Verify`].
    pub fn handle_verified(&mut self, now: Millis, result: Result<(), E>) {
        self.now = now;
        let Some((op, Stage::Verify)) = self.running.take() else { return };
        let result = result.map(|()| 0).map_err(|e| {
            if e.replaced_log() {
                self.state.replaced(now);
            }
            OpError::Failed(e)
        });
        if op == Op::Close { self.close_log(result) } else { self.resolve(op, result) }
    }

    /// A host operation outside the machine (a read) found the log broken
    /// and created it anew: every source is derived again from its first
    /// entry, soon.
    pub fn handle_log_replaced(&mut self, now: Millis) {
        self.now = now;
        self.state.replaced(now);
    }

    /// The next thing to do, `None` while the machine waits for an answer or
    /// for an operation to start.
    pub fn poll_output(&mut self) -> Option<Output<E>> {
        loop {
            if let Some(output) = self.out.pop_front() {
                return Some(output);
            }
            let (op, stage) = self.running.as_mut()?;
            let op = *op;
            match stage {
                Stage::Pass(pass) => match pass.step(&mut self.state) {
                    Step::Read(source) => return Some(Output::Read { source }),
                    Step::Derive(index) => return Some(Output::Derive { index }),
                    Step::Append { drafts, marks } => return Some(Output::Append { drafts, marks }),
                    Step::Settle => return Some(Output::Settle),
                    Step::Wait => return None,
                    Step::Ended => {
                        let result = pass.outcome();
                        let Some((_, Stage::Pass(pass))) = self.running.take() else { return None };
                        self.pass_ended(op, *pass, result);
                    }
                },
                Stage::Emit { left: 0, waiting: false } => self.resolve(op, Ok(0)),
                Stage::Emit { left, waiting: waiting @ false } => {
                    let drafts = (*left).min(self.state.config().chunk_size);
                    *left -= drafts;
                    *waiting = true;
                    return Some(Output::Append { drafts, marks: owned(self.state.unsaved_marks()) });
                }
                Stage::Emit { waiting: true, .. } | Stage::CloseMarks { waiting: true } => return Some(Output::Settle),
                Stage::CloseMarks { waiting: waiting @ false } => {
                    *waiting = true;
                    return Some(Output::Append { drafts: 0, marks: owned(self.state.unsaved_marks()) });
                }
                Stage::OpenCompaction | Stage::PassCompaction | Stage::Verify | Stage::Compaction => return None,
            }
        }
    }

    fn must_be_open(&self) -> Result<(), OpError<E>> {
        match self.state.phase() {
            Phase::Open => Ok(()),
            phase => Err(OpError::NotOpen(phase)),
        }
    }

    /// Whether `op` may start: else it resolves [`OpError::Busy`] at once.
    fn can_start(&mut self, op: Op) -> bool {
        if self.running.is_some() {
            self.out.push_back(Output::Resolve { op, result: Err(OpError::Busy) });
            return false;
        }
        true
    }

    /// [`PumpMachine::can_start`] of an operation that needs the pump open.
    fn start(&mut self, op: Op) -> bool {
        if !self.can_start(op) {
            return false;
        }
        match self.must_be_open() {
            Ok(()) => true,
            Err(e) => {
                self.resolve(op, Err(e));
                false
            }
        }
    }

    fn resolve(&mut self, op: Op, result: Result<u64, OpError<E>>) {
        self.running = None;
        self.out.push_back(Output::Resolve { op, result });
    }

    fn start_pass(&mut self, op: Op) {
        if self.state.phase() != Phase::Open {
            return self.after_pass(op, Ok(()));
        }
        self.running = Some((op, Stage::Pass(Box::new(PassRun::new(&mut self.state)))));
    }

    fn start_compaction(&mut self, op: Op, stage: Stage<E>) {
        self.state.compaction_started(self.now);
        self.out.push_back(Output::Compact { marks: owned(self.state.marks().iter()) });
        self.running = Some((op, stage));
    }

    /// A pass ended: a failure is reported once per episode and retried; a
    /// success may be followed by the compaction due.
    fn pass_ended(&mut self, op: Op, pass: PassRun<E>, result: Result<(), E>) {
        match result {
            Err(e) => {
                let decision = self.state.pass_failed(pass.plan, &format!("{e}"), self.now);
                if decision.report {
                    self.out.push_back(Output::Report(format!("event log append failed (retrying in the background): {e}")));
                }
                self.after_pass(op, Err(e));
            }
            Ok(()) => {
                self.state.pass_succeeded();
                if self.state.compaction_due(self.now) {
                    self.start_compaction(op, Stage::PassCompaction);
                } else {
                    self.after_pass(op, Ok(()));
                }
            }
        }
    }

    /// What follows a pass (and its compaction) in each operation.
    fn after_pass(&mut self, op: Op, result: Result<(), E>) {
        match (op, result) {
            // Failures were reported; the pass retries in the background.
            (Op::Open | Op::Timer, _) => self.resolve(op, Ok(0)),
            (Op::Flush, Ok(())) => {
                self.running = Some((op, Stage::Verify));
                self.out.push_back(Output::Verify);
            }
            (Op::Remove, Ok(())) => {
                if let Some(source) = self.removing.take() {
                    self.state.forget(&source);
                    self.behind.remove(&source);
                    self.out.push_back(Output::Forget { source });
                }
                self.resolve(op, Ok(0));
            }
            (Op::Close, Ok(())) if self.state.marks().has_unsaved() => {
                self.running = Some((op, Stage::CloseMarks { waiting: false }));
            }
            (Op::Close, Ok(())) => {
                self.running = Some((op, Stage::Verify));
                self.out.push_back(Output::Verify);
            }
            (Op::Close, Err(e)) => self.close_log(Err(OpError::Failed(e))),
            (_, Err(e)) => {
                self.removing = None;
                self.resolve(op, Err(OpError::Failed(e)));
            }
            (_, Ok(())) => self.resolve(op, Ok(0)),
        }
    }

    /// Close's end: the log closes whatever happened before.
    fn close_log(&mut self, result: Result<u64, OpError<E>>) {
        self.state.closed();
        self.out.push_back(Output::CloseLog);
        if let Err(OpError::Failed(e)) = &result {
            self.out.push_back(Output::Report(format!("event log close failed: {e}")));
        }
        self.resolve(Op::Close, result);
    }
}
