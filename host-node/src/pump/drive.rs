//! The task's side of the core's run loop: what each [`Output`] of the
//! [`PumpMachine`](leasehold_core::pump::PumpMachine) asks, done with the
//! sources and the log, until the operation resolves.
//!
//! A pass's drafts are serialised as soon as they are derived and dropped
//! at once (a chunk is held as its bytes), and the next chunk is derived
//! while the one before is written and synced on the blocking pool: the
//! machine asks to settle that append only when the next chunk is cut. At
//! most two chunks are held at a time.

use std::collections::VecDeque;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use leasehold_core::pump::Output;
use serde_json::{Map, Value};

use super::task::{LogOp, PumpTask, op_error, report};
use super::{EventDraft, EventSource, PumpError};
use crate::eventlog::{EncodedEvents, EventRecord};

/// The source a pass reads and derives.
struct Reading {
    name: String,
    source: Option<Arc<dyn EventSource>>,
    identity: Map<String, Value>,
}

/// The append in flight: running, or refused before it started.
enum InFlight {
    Running {
        op: LogOp<Range<u64>>,
        /// The sequence number after its events, when known: the next
        /// chunk is numbered from it ahead of its append.
        end: Option<u64>,
    },
    Refused(PumpError),
}

/// What one operation holds between outputs.
struct Held {
    /// Emitted records not appended yet.
    emitted: VecDeque<EventRecord>,
    reading: Option<Reading>,
    /// Derived drafts of the current entry, not serialised yet.
    drafts: VecDeque<EventDraft>,
    /// The chunk being filled, serialised.
    events: EncodedEvents,
    /// A draft that could not be serialised.
    unencodable: Option<PumpError>,
    in_flight: Option<InFlight>,
    /// The wall clock when the operation started: the time of drafts without one.
    wall_ms: u64,
}

impl Held {
    /// Serialises held drafts until the chunk holds `upto` (all: `None`).
    fn encode(&mut self, upto: Option<usize>) {
        let Some(reading) = self.reading.as_ref() else { return };
        while upto.is_none_or(|n| self.events.len() < n) {
            let Some(draft) = self.drafts.pop_front() else { break };
            if let Err(e) = self.events.push_ref(&draft.as_record(&reading.name, &reading.identity, self.wall_ms)) {
                self.unencodable.get_or_insert(e.into());
            }
        }
    }
}

impl PumpTask {
    /// Does what the machine asks until the running operation resolves
    /// (at once when none runs); `emitted` are the records of an emit.
    pub(super) async fn drive(&mut self, emitted: Vec<EventRecord>) -> Result<u64, PumpError> {
        let mut held = Held {
            emitted: emitted.into(),
            reading: None,
            drafts: VecDeque::new(),
            events: EncodedEvents::default(),
            unencodable: None,
            in_flight: None,
            wall_ms: (self.wall_clock)(),
        };
        let mut scratch = Vec::new();
        while let Some(output) = self.machine.poll_output() {
            match output {
                Output::Read { source } => {
                    held.encode(None);
                    let source_ref = self.sources.get(&source).cloned();
                    let len = source_ref.as_ref().map_or(0, |s| s.committed_len());
                    let identity = source_ref.as_ref().map(|s| s.identity()).unwrap_or_default();
                    held.reading = Some(Reading { name: source, source: source_ref, identity });
                    let now = self.now();
                    self.machine.handle_length(now, Ok(len));
                }
                Output::Derive { index } => {
                    held.encode(None);
                    if let Some(e) = held.unencodable.take() {
                        let now = self.now();
                        self.machine.handle_abort(now, e);
                        continue;
                    }
                    let derived = derive(held.reading.as_ref(), index, &mut scratch);
                    let derived = derived.map(|()| {
                        let n = scratch.len();
                        held.drafts.extend(scratch.drain(..));
                        n
                    });
                    let now = self.now();
                    self.machine.handle_derived(now, derived);
                }
                Output::Append { drafts, marks } => self.append(&mut held, drafts, marks),
                Output::Settle => {
                    // Not serialising the held drafts: the chunk cut before
                    // some of them is appended next.
                    let result = match held.in_flight.take() {
                        Some(InFlight::Running { op, end }) => {
                            // Numbered while the append before is synced.
                            if let Some(end) = end.filter(|_| !held.events.is_empty()) {
                                held.events.number_from(end);
                            }
                            self.finish(op).await.map(|_| ())
                        }
                        Some(InFlight::Refused(e)) => Err(e),
                        None => Ok(()),
                    };
                    let now = self.now();
                    self.machine.handle_appended(now, result);
                }
                Output::Logged { completes } => {
                    for (name, position) in &completes {
                        if let Some(source) = self.sources.get(name) {
                            source.logged(*position);
                        }
                    }
                }
                Output::Compact { marks } => {
                    let result = self.compact(marks).await;
                    let now = self.now();
                    self.machine.handle_compacted(now, result);
                }
                Output::Verify => {
                    let result = self.with_log(crate::eventlog::EventLog::verify).await;
                    let now = self.now();
                    self.machine.handle_verified(now, result);
                }
                Output::Forget { source } => {
                    self.sources.remove(&source);
                }
                Output::CloseLog => {
                    if let Some(mut log) = self.log.take() {
                        log.close();
                    }
                    self.sources.clear();
                }
                Output::Report(text) => report(&text),
                Output::Resolve { result, .. } => return result.map_err(op_error),
            }
        }
        Ok(0)
    }

    /// Starts the append of the next `drafts` held drafts (emitted records,
    /// or the pass's chunk; none: only `marks`).
    fn append(&mut self, held: &mut Held, drafts: usize, marks: Vec<(String, u64)>) {
        let started = if drafts == 0 {
            self.start(move |log| log.append::<String>(&[], marks))
        } else if !held.emitted.is_empty() {
            let part: Vec<EventRecord> = held.emitted.drain(..drafts.min(held.emitted.len())).collect();
            self.start(move |log| log.append(&part, marks))
        } else {
            held.encode(Some(drafts));
            if let Some(e) = held.unencodable.take() {
                held.in_flight = Some(InFlight::Refused(e));
                return;
            }
            // The next chunk is sized as this one.
            let next = EncodedEvents::with_capacity(held.events.len(), held.events.byte_len());
            let events = std::mem::replace(&mut held.events, next);
            let end = self.log.as_ref().map(|log| log.head().next_seq + events.len() as u64);
            return held.in_flight = Some(match self.start(move |log| log.append_encoded(events, marks)) {
                Ok(op) => InFlight::Running { op, end },
                Err(e) => InFlight::Refused(e),
            });
        };
        held.in_flight = Some(match started {
            Ok(op) => InFlight::Running { op, end: None },
            Err(e) => InFlight::Refused(e),
        });
    }
}

/// Derives entry `index` of the source read into `drafts`. A source that
/// panics must not stop the others: its watermark stops before the entry,
/// and the pass fails.
fn derive(reading: Option<&Reading>, index: u64, drafts: &mut Vec<EventDraft>) -> Result<(), PumpError> {
    let Some(Reading { name, source: Some(source), .. }) = reading else { return Ok(()) };
    panic::catch_unwind(AssertUnwindSafe(|| source.derive(index, drafts))).map_err(|payload| {
        drafts.clear();
        PumpError::SourcePanicked {
            source_name: name.clone(),
            index,
            message: panic_message(payload.as_ref()),
        }
    })
}

/// A panic payload's message (`&str` or `String`), or a placeholder.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}
