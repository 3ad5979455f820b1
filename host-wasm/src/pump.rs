//! The event pump's state for Node.js (`EventPump` of `leasehold/eventlog`):
//! [`PumpCore`] holds the core's [`PumpState`] (dirty set, watermarks, the
//! one timer, failure reporting, compaction schedule) and the pass's
//! [`Chunker`], so the JS glue (`pkg/src/eventlog-pump.js`) only calls the
//! sources, the log and the timer.
//!
//! Times: `now` arguments are monotonic milliseconds the glue reads
//! (`performance.now()`); the wall clock (for retention) is milliseconds
//! since the Unix epoch. Watermarks cross as `[[source, position], …]`
//! arrays; positions are JS numbers.

use js_sys::{Array, Object, Reflect};
use leasehold_core::Millis;
use leasehold_core::pump::{Chunker, PassPlan, Phase, PumpConfig, PumpState, Retention};
use wasm_bindgen::prelude::*;

use crate::mark_pairs;

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

fn ms(n: f64) -> u64 {
    if n.is_finite() && n > 0.0 { n as u64 } else { 0 }
}

/// `[[source, position], …]` from JS (what [`mark_pairs`] made, handed back).
fn from_pairs(marks: &Array) -> Vec<(String, u64)> {
    marks
        .iter()
        .filter_map(|pair| {
            let pair = Array::from(&pair);
            Some((pair.get(0).as_string()?, ms(pair.get(1).as_f64()?)))
        })
        .collect()
}

/// The pump's state and the running pass's chunker (`PumpCore` in JS).
#[wasm_bindgen(js_name = PumpCore)]
pub struct PumpCore {
    state: PumpState,
    chunker: Chunker<()>,
    plan: Option<PassPlan>,
    retention: Option<Retention>,
}

#[wasm_bindgen(js_class = PumpCore)]
impl PumpCore {
    /// A pump not open yet: `kick_delay_ms`, `chunk_size` (drafts, 1 to the
    /// log's maximum), `retry_after_ms` (at least 1), `compact_every_ms`.
    ///
    /// # Errors
    /// A value that can not work, named.
    #[wasm_bindgen(constructor)]
    pub fn new(kick_delay_ms: f64, chunk_size: f64, retry_after_ms: f64, compact_every_ms: f64) -> Result<PumpCore, JsError> {
        let config = PumpConfig {
            kick_delay_ms: ms(kick_delay_ms),
            chunk_size: ms(chunk_size) as usize,
            retry_after_ms: ms(retry_after_ms),
            compact_every_ms: ms(compact_every_ms),
        };
        let state = PumpState::new(config).map_err(|e| JsError::new(&e.to_string()))?;
        Ok(PumpCore { chunker: state.chunker(), state, plan: None, retention: None })
    }

    /// A source joins (dirty: derived past its watermark by the next pass).
    pub fn register(&mut self, source: &str) {
        self.state.register(source);
    }

    /// The source is gone: its watermark goes.
    pub fn forget(&mut self, source: &str) {
        self.state.forget(source);
    }

    /// Whether `source` is registered.
    #[wasm_bindgen(js_name = isRegistered)]
    pub fn is_registered(&self, source: &str) -> bool {
        self.state.is_registered(source)
    }

    /// The log opened with `marks` recorded; `created` when it is new.
    pub fn opened(&mut self, marks: &Array, created: bool) {
        self.state.opened(from_pairs(marks), created);
    }

    /// `source` appended (`undefined`: a pass is wanted) at `now`.
    pub fn kick(&mut self, source: Option<String>, now: f64) {
        self.state.kick(source.as_deref(), Millis(ms(now)));
    }

    /// When the timer is due (monotonic ms), or -1 when it is not armed.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> f64 {
        self.state.poll_timeout().map_or(-1.0, |at| at.0 as f64)
    }

    /// The timer fired at `now`: whether a pass is due.
    #[wasm_bindgen(js_name = handleTimeout)]
    pub fn handle_timeout(&mut self, now: f64) -> bool {
        self.state.handle_timeout(Millis(ms(now)))
    }

    /// `flush`/`close`: every source is dirty, the timer goes.
    pub fn flush(&mut self) {
        self.state.flush();
    }

    /// Starts a pass: answers the sources to derive (name order), each with
    /// its watermark: `[[source, from], …]`.
    #[wasm_bindgen(js_name = beginPass)]
    pub fn begin_pass(&mut self) -> Array {
        let plan = self.state.begin_pass();
        let out = mark_pairs(plan.sources.iter().map(|s| (s.as_str(), self.state.mark(s))));
        self.chunker = self.state.chunker();
        self.plan = Some(plan);
        out
    }

    /// The pass derives `source` from `from`.
    #[wasm_bindgen(js_name = beginSource)]
    pub fn begin_source(&mut self, source: &str, from: f64) {
        self.chunker.begin_source(source, ms(from));
    }

    /// A draft of entry `index`: answers the watermarks the chunk cut before
    /// it completes (`[[source, position], …]`, possibly empty) when the
    /// chunk was full, else `undefined`: the glue appends the drafts it
    /// holds with those before adding this one.
    pub fn push(&mut self, index: f64) -> Option<Array> {
        self.chunker.push(ms(index), ()).map(|chunk| mark_pairs(chunk.completes.iter().map(|(s, p)| (s.as_str(), *p))))
    }

    /// The source was read up to `len` (its committed length).
    #[wasm_bindgen(js_name = endSource)]
    pub fn end_source(&mut self, len: f64) {
        self.chunker.end_source(ms(len));
    }

    /// The last chunk's completed watermarks, or `undefined` when the chunk
    /// would be empty.
    #[wasm_bindgen(js_name = finishChunk)]
    pub fn finish_chunk(&mut self) -> Option<Array> {
        self.chunker.finish().map(|chunk| mark_pairs(chunk.completes.iter().map(|(s, p)| (s.as_str(), *p))))
    }

    /// The watermarks an append of a chunk completing `completes` carries.
    #[wasm_bindgen(js_name = toWrite)]
    pub fn to_write(&self, completes: &Array) -> Array {
        let completes = from_pairs(completes);
        mark_pairs(self.state.to_write(&completes))
    }

    /// The append of a chunk completing `completes` is durable.
    #[wasm_bindgen(js_name = chunkLogged)]
    pub fn chunk_logged(&mut self, completes: &Array) {
        self.state.chunk_logged(&from_pairs(completes));
    }

    /// A chunk without drafts completed `completes` (moved in memory).
    #[wasm_bindgen(js_name = chunkWithoutEvents)]
    pub fn chunk_without_events(&mut self, completes: &Array) {
        self.state.chunk_without_events(&from_pairs(completes));
    }

    /// An append that carried the unsaved watermarks is durable.
    #[wasm_bindgen(js_name = unsavedWritten)]
    pub fn unsaved_written(&mut self) {
        self.state.unsaved_written();
    }

    /// The pass logged everything.
    #[wasm_bindgen(js_name = passSucceeded)]
    pub fn pass_succeeded(&mut self) {
        self.plan = None;
        self.state.pass_succeeded();
    }

    /// The pass failed with `message` at `now`: answers whether to report it
    /// (its sources stay dirty; a retry is armed).
    #[wasm_bindgen(js_name = passFailed)]
    pub fn pass_failed(&mut self, message: &str, now: f64) -> bool {
        let plan = self.plan.take().unwrap_or(PassPlan { sources: Vec::new() });
        self.state.pass_failed(plan, message, Millis(ms(now))).report
    }

    /// The log was created anew on reopening: backfill everything, soon.
    pub fn replaced(&mut self, now: f64) {
        self.state.replaced(Millis(ms(now)));
    }

    /// Whether a compaction is due at `now`.
    #[wasm_bindgen(js_name = compactionDue)]
    pub fn compaction_due(&self, now: f64) -> bool {
        self.state.compaction_due(Millis(ms(now)))
    }

    /// A compaction starts at `now`.
    #[wasm_bindgen(js_name = compactionStarted)]
    pub fn compaction_started(&mut self, now: f64) {
        self.state.compaction_started(Millis(ms(now)));
    }

    /// A compaction's retention starts: records older than `window_ms`
    /// before `wall_now` (ms since the Unix epoch) may go.
    #[wasm_bindgen(js_name = startRetention)]
    pub fn start_retention(&mut self, wall_now: f64, window_ms: f64) {
        self.retention = Some(Retention::new(Millis(ms(wall_now)), ms(window_ms)));
    }

    /// Whether the record of `source` at `at` (ms since the Unix epoch)
    /// goes: old enough, and `droppable(source)` (asked once per source,
    /// only for old records) answers true: the source is quiet or gone. A
    /// `droppable` that throws or answers anything else keeps the record.
    pub fn drops(&mut self, source: &str, at: f64, droppable: &js_sys::Function) -> bool {
        let Some(retention) = self.retention.as_mut() else { return false };
        retention.drops(source, Millis(ms(at)), |s| {
            droppable.call1(&JsValue::UNDEFINED, &JsValue::from_str(s)).is_ok_and(|v| v.as_bool() == Some(true))
        })
    }

    /// Every watermark (true of the log): `[[source, position], …]`.
    pub fn marks(&self) -> Array {
        mark_pairs(self.state.marks().iter())
    }

    /// The watermarks moved without an append.
    #[wasm_bindgen(js_name = unsavedMarks)]
    pub fn unsaved_marks(&self) -> Array {
        mark_pairs(self.state.unsaved_marks())
    }

    /// Whether a watermark moved that the log does not record yet.
    #[wasm_bindgen(js_name = hasUnsaved)]
    pub fn has_unsaved(&self) -> bool {
        self.state.marks().has_unsaved()
    }

    /// `"opening"`, `"open"` or `"closed"`.
    pub fn phase(&self) -> String {
        match self.state.phase() {
            Phase::Opening => "opening",
            Phase::Open => "open",
            Phase::Closed => "closed",
        }
        .into()
    }

    /// `{ backfilled, failing?, dirty: [source, …] }`.
    pub fn status(&self) -> Object {
        let out = Object::new();
        set(&out, "backfilled", self.state.backfilled());
        if let Some(failing) = self.state.failing() {
            set(&out, "failing", failing);
        }
        let dirty: Array = self.state.dirty().map(JsValue::from_str).collect();
        set(&out, "dirty", dirty);
        out
    }

    /// The pump closed.
    pub fn closed(&mut self) {
        self.state.closed();
    }
}
