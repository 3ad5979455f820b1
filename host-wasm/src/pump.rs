//! The event pump for Node.js (`EventPump` of `leasehold/eventlog`):
//! [`PumpCore`] is the core's [`PumpMachine`], the order of every pump
//! operation, so the JS glue (`pkg/src/eventlog-pump.js`) runs the same
//! order as the native pump: it starts one operation at a time, then does
//! what [`PumpCore::poll_output`] asks (calling the sources, the log and the
//! timer) and answers through the `handle*` methods until the operation
//! resolves (see `leasehold_core::pump::machine` for the run loop).
//!
//! Times: `now` arguments are monotonic milliseconds the glue reads
//! (`performance.now()`); the wall clock (for retention) is milliseconds
//! since the Unix epoch. Watermarks cross as `[[source, position], …]`
//! arrays; positions are JS numbers. Errors the glue hands in (a failed
//! append, a source that threw) come back unchanged in the `resolve` output.

use core::fmt;

use js_sys::{Array, Object, Reflect};
use leasehold_core::Millis;
use leasehold_core::pump::{LogFailure, Op, OpError, Output, Phase, PumpConfig, PumpMachine, Retention};
use wasm_bindgen::prelude::*;

use crate::mark_pairs;

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

fn ms(n: f64) -> u64 {
    if n.is_finite() && n > 0.0 { n as u64 } else { 0 }
}

fn at(now: f64) -> Millis {
    Millis(ms(now))
}

/// A JS error the glue handed in: its text, and whether it says the log was
/// created anew (`code` `EVENTLOG_REPLACED`).
struct JsFailure {
    value: JsValue,
    message: String,
    replaced: bool,
}

impl JsFailure {
    fn new(value: JsValue) -> Self {
        let field = |key: &str| Reflect::get(&value, &JsValue::from_str(key)).ok().and_then(|v| v.as_string());
        let message = field("message").or_else(|| value.as_string()).unwrap_or_else(|| String::from("unknown error"));
        let replaced = field("code").as_deref() == Some("EVENTLOG_REPLACED");
        JsFailure { value, message, replaced }
    }
}

impl fmt::Display for JsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl LogFailure for JsFailure {
    fn replaced_log(&self) -> bool {
        self.replaced
    }
}

/// `undefined`: success; anything else: the error.
fn outcome(error: JsValue) -> Result<(), JsFailure> {
    if error.is_undefined() { Ok(()) } else { Err(JsFailure::new(error)) }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Opening => "opening",
        Phase::Open => "open",
        Phase::Closed => "closed",
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Open => "open",
        Op::Timer => "timer",
        Op::Flush => "flush",
        Op::Emit => "emit",
        Op::Compact => "compact",
        Op::Remove => "remove",
        Op::Close => "close",
    }
}

fn pairs(marks: &[(String, u64)]) -> Array {
    mark_pairs(marks.iter().map(|(s, p)| (s.as_str(), *p)))
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

/// The pump machine (`PumpCore` in JS).
#[wasm_bindgen(js_name = PumpCore)]
pub struct PumpCore {
    machine: PumpMachine<JsFailure>,
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
        let machine = PumpMachine::new(config).map_err(|e| JsError::new(&e.to_string()))?;
        Ok(PumpCore { machine, retention: None })
    }

    /// A source known before the open.
    pub fn register(&mut self, source: &str) {
        self.machine.register(source);
    }

    /// A source joins the open pump at `now`: answers false (nothing
    /// changes) unless the pump is open.
    #[wasm_bindgen(js_name = addSource)]
    pub fn add_source(&mut self, now: f64, source: &str) -> bool {
        self.machine.handle_add_source(at(now), source).is_ok()
    }

    /// `source` appended (`undefined`: a pass is wanted) at `now`.
    pub fn kick(&mut self, now: f64, source: Option<String>) {
        self.machine.handle_kick(at(now), source.as_deref());
    }

    /// When the timer is due (monotonic ms), or -1 when it is not armed.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> f64 {
        self.machine.poll_timeout().map_or(-1.0, |at| at.0 as f64)
    }

    /// The timer passed at `now`: a pass may start (drive it).
    #[wasm_bindgen(js_name = handleTimeout)]
    pub fn handle_timeout(&mut self, now: f64) {
        self.machine.handle_timeout(at(now));
    }

    /// The log opened with `marks` recorded; `created` when it is new.
    pub fn opened(&mut self, now: f64, marks: &Array, created: bool) {
        self.machine.handle_opened(at(now), from_pairs(marks), created);
    }

    /// Starts a flush.
    pub fn flush(&mut self, now: f64) {
        self.machine.handle_flush(at(now));
    }

    /// Starts the append of `count` drafts the glue holds.
    pub fn emit(&mut self, now: f64, count: f64) {
        self.machine.handle_emit(at(now), ms(count) as usize);
    }

    /// Starts a compaction.
    pub fn compact(&mut self, now: f64) {
        self.machine.handle_compact(at(now));
    }

    /// Starts removing `source`.
    pub fn remove(&mut self, now: f64, source: &str) {
        self.machine.handle_remove(at(now), source);
    }

    /// Starts the close.
    pub fn close(&mut self, now: f64) {
        self.machine.handle_close(at(now));
    }

    /// The committed length of the source read (a number), or the error
    /// that says why it is not one.
    #[wasm_bindgen(js_name = handleLength)]
    pub fn handle_length(&mut self, now: f64, len: f64, error: JsValue) {
        let len = outcome(error).map(|()| ms(len));
        self.machine.handle_length(at(now), len);
    }

    /// The entry derived gave `count` drafts (now held by the glue), or
    /// failed with `error`.
    #[wasm_bindgen(js_name = handleDerived)]
    pub fn handle_derived(&mut self, now: f64, count: f64, error: JsValue) {
        let count = outcome(error).map(|()| ms(count) as usize);
        self.machine.handle_derived(at(now), count);
    }

    /// The append in flight settled (`error` undefined: durable).
    #[wasm_bindgen(js_name = handleAppended)]
    pub fn handle_appended(&mut self, now: f64, error: JsValue) {
        self.machine.handle_appended(at(now), outcome(error));
    }

    /// The compaction dropped `dropped` records, or failed with `error`.
    #[wasm_bindgen(js_name = handleCompacted)]
    pub fn handle_compacted(&mut self, now: f64, dropped: f64, error: JsValue) {
        self.machine.handle_compacted(at(now), outcome(error).map(|()| ms(dropped)));
    }

    /// The log's check answered (`error` undefined: intact).
    #[wasm_bindgen(js_name = handleVerified)]
    pub fn handle_verified(&mut self, now: f64, error: JsValue) {
        self.machine.handle_verified(at(now), outcome(error));
    }

    /// What to do next, `undefined` when nothing: `{ kind: 'read', source }`,
    /// `{ kind: 'derive', index }`, `{ kind: 'append', drafts, marks }`,
    /// `{ kind: 'settle' }`, `{ kind: 'logged', completes }`,
    /// `{ kind: 'compact', marks }`, `{ kind: 'verify' }`,
    /// `{ kind: 'forget', source }`, `{ kind: 'closeLog' }`,
    /// `{ kind: 'report', text }`, or `{ kind: 'resolve', op, value }` /
    /// `{ kind: 'resolve', op, error }` with the error handed in, or
    /// `{ notOpen: phase }` / `{ busy: true }` for a refused operation.
    #[wasm_bindgen(js_name = pollOutput)]
    pub fn poll_output(&mut self) -> JsValue {
        let Some(output) = self.machine.poll_output() else { return JsValue::UNDEFINED };
        let out = Object::new();
        let kind = match output {
            Output::Read { source } => {
                set(&out, "source", source);
                "read"
            }
            Output::Derive { index } => {
                set(&out, "index", index as f64);
                "derive"
            }
            Output::Append { drafts, marks } => {
                set(&out, "drafts", drafts as f64);
                set(&out, "marks", pairs(&marks));
                "append"
            }
            Output::Settle => "settle",
            Output::Logged { completes } => {
                set(&out, "completes", pairs(&completes));
                "logged"
            }
            Output::Compact { marks } => {
                set(&out, "marks", pairs(&marks));
                "compact"
            }
            Output::Verify => "verify",
            Output::Forget { source } => {
                set(&out, "source", source);
                "forget"
            }
            Output::CloseLog => "closeLog",
            Output::Report(text) => {
                set(&out, "text", text);
                "report"
            }
            Output::Resolve { op, result } => {
                set(&out, "op", op_name(op));
                match result {
                    Ok(value) => set(&out, "value", value as f64),
                    Err(OpError::Failed(e)) => set(&out, "error", e.value),
                    Err(OpError::NotOpen(phase)) => {
                        let refused = Object::new();
                        set(&refused, "notOpen", phase_name(phase));
                        set(&out, "error", refused);
                    }
                    Err(OpError::Busy) => {
                        let refused = Object::new();
                        set(&refused, "busy", true);
                        set(&out, "error", refused);
                    }
                }
                "resolve"
            }
        };
        set(&out, "kind", kind);
        out.into()
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
        mark_pairs(self.machine.state().marks().iter())
    }

    /// `"opening"`, `"open"` or `"closed"`.
    pub fn phase(&self) -> String {
        phase_name(self.machine.state().phase()).into()
    }

    /// `{ backfilled, failing?, dirty: [source, …] }`.
    pub fn status(&self) -> Object {
        let state = self.machine.state();
        let out = Object::new();
        set(&out, "backfilled", state.backfilled());
        if let Some(failing) = state.failing() {
            set(&out, "failing", failing);
        }
        let dirty: Array = state.dirty().map(JsValue::from_str).collect();
        set(&out, "dirty", dirty);
        out
    }
}
