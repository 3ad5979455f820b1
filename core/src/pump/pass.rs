//! One derivation pass as the [`PumpMachine`](super::machine::PumpMachine)
//! runs it: the sources of the dirty set in name order, each read to its
//! committed length and derived entry by entry, cut into chunks, each chunk
//! appended with the watermarks it completes. At most one append is in
//! flight: the next chunk is derived while it is written and synced, and is
//! appended only once that append is durable (its watermarks then move).
//! A failed append stops the pass; a source that fails on an entry stops
//! only that source (its watermark stops before the entry).

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use super::chunk::{Chunk, Chunker};
use super::state::{PassPlan, PumpState};

/// What the pass asks next.
pub(super) enum Step {
    /// Read `source`'s committed length.
    Read(String),
    /// Derive entry `index` of the source read last.
    Derive(u64),
    /// Append the next `drafts` drafts with `marks`.
    Append { drafts: usize, marks: Vec<(String, u64)> },
    /// Wait for the append in flight.
    Settle,
    /// Waiting for the host's answer.
    Wait,
    /// The pass is over: every append settled.
    Ended,
}

/// The source being derived.
struct Current {
    next: u64,
    len: u64,
}

/// What the pass waits for.
/// A source's committed length against its watermark, as a pass read it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Standing {
    /// At or past its watermark.
    Level(String),
    /// Fewer committed entries (`len`) than its watermark (`mark`).
    Behind { source: String, len: u64, mark: u64 },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Nothing,
    Length,
    Derived,
    Appended,
}

pub(super) struct PassRun<E> {
    pub(super) plan: PassPlan,
    next_source: usize,
    reading: Option<String>,
    current: Option<Current>,
    chunker: Chunker<()>,
    /// Chunks cut and not appended yet, oldest first.
    cut: VecDeque<Chunk<()>>,
    /// The watermarks the append in flight completes.
    in_flight: Option<Vec<(String, u64)>>,
    waiting: Waiting,
    finished: bool,
    /// The failure that stopped the pass (a failed append).
    stopped: Option<E>,
    /// The first source that failed on an entry.
    source_failed: Option<E>,
}

impl<E> PassRun<E> {
    pub(super) fn new(state: &mut PumpState) -> Self {
        PassRun {
            plan: state.begin_pass(),
            next_source: 0,
            reading: None,
            current: None,
            chunker: state.chunker(),
            cut: VecDeque::new(),
            in_flight: None,
            waiting: Waiting::Nothing,
            finished: false,
            stopped: None,
            source_failed: None,
        }
    }

    /// The next thing to do.
    pub(super) fn step(&mut self, state: &mut PumpState) -> Step {
        loop {
            if self.waiting != Waiting::Nothing {
                return Step::Wait;
            }
            if self.stopped.is_none() {
                if !self.cut.is_empty() {
                    if self.in_flight.is_some() {
                        self.waiting = Waiting::Appended;
                        return Step::Settle;
                    }
                    let Some(chunk) = self.cut.pop_front() else { continue };
                    if chunk.drafts.is_empty() {
                        state.chunk_without_events(&chunk.completes);
                        continue;
                    }
                    let marks = state.to_write(&chunk.completes).into_iter().map(|(s, p)| (String::from(s), p)).collect();
                    self.in_flight = Some(chunk.completes);
                    return Step::Append { drafts: chunk.drafts.len(), marks };
                }
                if let Some(current) = self.current.as_mut() {
                    if current.next < current.len {
                        self.waiting = Waiting::Derived;
                        return Step::Derive(current.next);
                    }
                    self.chunker.end_source(current.len);
                    self.current = None;
                    continue;
                }
                if let Some(source) = self.plan.sources.get(self.next_source) {
                    self.next_source += 1;
                    self.reading = Some(source.clone());
                    self.waiting = Waiting::Length;
                    return Step::Read(source.clone());
                }
                if !self.finished {
                    self.finished = true;
                    self.cut.extend(self.chunker.finish());
                    continue;
                }
            }
            if self.in_flight.is_some() {
                self.waiting = Waiting::Appended;
                return Step::Settle;
            }
            return Step::Ended;
        }
    }

    /// Whether the pass waits for `answer`, which then ends the wait: an
    /// answer the pass did not ask for (a stop came first) is ignored.
    fn answers(&mut self, answer: Waiting) -> bool {
        if self.waiting != answer {
            return false;
        }
        self.waiting = Waiting::Nothing;
        true
    }

    /// The committed length of the source read (or why it could not be read).
    ///
    /// Answers how the length stood against the source's watermark, for the
    /// machine to say a source that went behind it (its journal replaced or
    /// cut back: the entries below the watermark are never derived again).
    pub(super) fn length(&mut self, state: &PumpState, len: Result<u64, E>) -> Option<Standing> {
        if !self.answers(Waiting::Length) {
            return None;
        }
        let name = self.reading.take()?;
        match len {
            Ok(len) => {
                let from = state.mark(&name);
                if len > from {
                    self.chunker.begin_source(&name, from);
                    self.current = Some(Current { next: from, len });
                }
                Some(if len < from { Standing::Behind { source: name, len, mark: from } } else { Standing::Level(name) })
            }
            Err(e) => {
                self.source_failed.get_or_insert(e);
                None
            }
        }
    }

    /// Entry `current.next` gave `drafts` drafts (or failed: the source stops
    /// before it).
    pub(super) fn derived(&mut self, drafts: Result<usize, E>) {
        if !self.answers(Waiting::Derived) {
            return;
        }
        let Some(current) = self.current.as_mut() else { return };
        match drafts {
            Ok(n) => {
                for _ in 0..n {
                    self.cut.extend(self.chunker.push(current.next, ()));
                }
                current.next += 1;
            }
            Err(e) => {
                self.chunker.end_source(current.next);
                self.current = None;
                self.source_failed.get_or_insert(e);
            }
        }
    }

    /// The host could not go on (a draft it could not serialise): the pass
    /// stops once the append in flight settles.
    pub(super) fn stop(&mut self, error: E) {
        self.stopped.get_or_insert(error);
        self.cut.clear();
        if matches!(self.waiting, Waiting::Length | Waiting::Derived) {
            self.waiting = Waiting::Nothing;
        }
    }

    /// The append in flight settled: answers the watermarks it completed
    /// when it is durable.
    pub(super) fn appended(&mut self, state: &mut PumpState, result: Result<(), E>) -> Option<Vec<(String, u64)>> {
        self.answers(Waiting::Appended);
        let completes = self.in_flight.take()?;
        match result {
            Ok(()) => {
                state.chunk_logged(&completes);
                Some(completes)
            }
            Err(e) => {
                self.stop(e);
                None
            }
        }
    }

    /// The pass's outcome once [`Step::Ended`]: a failed append first, then
    /// the first source that failed.
    pub(super) fn outcome(&mut self) -> Result<(), E> {
        match self.stopped.take().or_else(|| self.source_failed.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
