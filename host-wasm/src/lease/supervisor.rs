//! [`LeaseSupervisor`]: the core's heartbeat supervision
//! ([`leasehold_core::supervision::Supervisor`]) shaped as
//! `heartbeatLoop` uses it — pulses one interval after the previous one
//! completed ([`Cadence::AfterPulse`]), a separate `reconfirm` store call at
//! the deadline ([`Reconfirm::Separate`]) — driven by the JS glue with time
//! passed in.
//!
//! Each input answers the steps it produced as a `Float64Array` of records
//! in the codec every wasm machine speaks ([`crate::record`]: [`STRIDE`]
//! numbers each, `[code, fields…]`):
//!
//! | code | kind | fields |
//! |---|---|---|
//! | 20 | `renew` | `call, at`: call `store.heartbeat(runId, owner, at)` |
//! | 21 | `reconfirm` | `call, at`: call `store.reconfirm(runId, owner, at)` |
//! | 22 | `confirmed` | `call, at`: the call sent at `at` renewed the lease |
//! | 23 | `failed` | `call, at, first`: it raised; `first` is 1 for the first failure of an outage (warn then) |
//! | 24 | `reconfirmed` | `unconfirmedMs, budgetMs`: run `onReconfirm(unconfirmedMs)` bounded by `budgetMs` |
//! | 25 | `lost` | `at`: the call sent at `at` answered a lost fence; supervision ended |
//! | 26 | `lapsed` | `unconfirmedMs`: run `onLapse`, then end; supervision ended |
//!
//! Few steps per input and one input per store answer or timer: a copied
//! array costs less than the glue would spend keeping a view of wasm memory.
//! The codes and field offsets reach the glue through [`supervisor_protocol`].
//!
//! Times are the glue's `now()` readings in ms: fractions truncated, NaN and
//! negatives 0. Call ids are the ones a renew/reconfirm record gave; an
//! answer for an unknown or abandoned call is ignored by the core.

use js_sys::{Array, Float64Array, Object, Reflect};
use leasehold_core::supervision::{Answer, Cadence, Reconfirm, Step, SupervisionPolicy, Supervisor, MAX_STEPS_PER_INPUT};
use leasehold_core::lease::{LeasePolicy, Notice};
use leasehold_core::Millis;
use wasm_bindgen::prelude::*;

use crate::record::STRIDE;
use crate::record::{self, Kind};

/// Step codes (see the module docs for their fields).
pub(crate) mod op {
    /// Send a renewal (`store.heartbeat`).
    pub(crate) const RENEW: u8 = 20;
    /// Send the reconfirmation (`store.reconfirm`).
    pub(crate) const RECONFIRM: u8 = 21;
    /// A call confirmed.
    pub(crate) const CONFIRMED: u8 = 22;
    /// A call raised.
    pub(crate) const FAILED: u8 = 23;
    /// A reconfirmation renewed the lease after a gap.
    pub(crate) const RECONFIRMED: u8 = 24;
    /// The fence was lost.
    pub(crate) const LOST: u8 = 25;
    /// The lease lapsed.
    pub(crate) const LAPSED: u8 = 26;
}

const RENEW: Kind = Kind { name: "renew", code: op::RENEW, fields: &["call", "at"] };
const RECONFIRM: Kind = Kind { name: "reconfirm", code: op::RECONFIRM, fields: &["call", "at"] };
const CONFIRMED: Kind = Kind { name: "confirmed", code: op::CONFIRMED, fields: &["call", "at"] };
const FAILED: Kind = Kind { name: "failed", code: op::FAILED, fields: &["call", "at", "first"] };
const RECONFIRMED: Kind = Kind { name: "reconfirmed", code: op::RECONFIRMED, fields: &["unconfirmedMs", "budgetMs"] };
const LOST: Kind = Kind { name: "lost", code: op::LOST, fields: &["at"] };
const LAPSED: Kind = Kind { name: "lapsed", code: op::LAPSED, fields: &["unconfirmedMs"] };

/// The supervisor's record kinds.
pub(crate) const KINDS: [Kind; 7] = [RENEW, RECONFIRM, CONFIRMED, FAILED, RECONFIRMED, LOST, LAPSED];

fn at(now: f64) -> Millis {
    // `as` truncates fractions and saturates: NaN and negatives are 0.
    Millis(now as u64)
}

fn ms(value: u64) -> f64 {
    value as f64
}

/// One step as a record (exactly [`STRIDE`] numbers).
pub(crate) fn encode(step: Step) -> [f64; STRIDE] {
    let mut out = [0.0; STRIDE];
    let (kind, values): (&Kind, &[f64]) = match step {
        Step::Renew { call, at } => (&RENEW, &[f64::from(call), ms(at.0)]),
        Step::Reconfirm { call, at } => (&RECONFIRM, &[f64::from(call), ms(at.0)]),
        Step::Confirmed { call, at } => (&CONFIRMED, &[f64::from(call), ms(at.0)]),
        Step::Failed { call, at, first_in_outage } => {
            (&FAILED, &[f64::from(call), ms(at.0), if first_in_outage { 1.0 } else { 0.0 }])
        }
        Step::Reconfirmed { unconfirmed_ms, budget_ms } => (&RECONFIRMED, &[ms(unconfirmed_ms), ms(budget_ms)]),
        Step::Lost { at } => (&LOST, &[ms(at.0)]),
        Step::Lapsed { unconfirmed_ms } => (&LAPSED, &[ms(unconfirmed_ms)]),
    };
    record::put(&mut out, kind, values);
    out
}

/// Whether a store answered `Updated`: the string `'Updated'`, or
/// a tagged outcome object whose `_tag` is `'Updated'` (`{ _tag: 'Updated' }`).
/// Anything else is a lost fence; a `_tag` getter that
/// throws counts as anything else.
pub(crate) fn is_updated(outcome: &JsValue) -> bool {
    if let Some(tag) = outcome.as_string() {
        return tag == "Updated";
    }
    outcome.is_object()
        && Reflect::get(outcome, &JsValue::from_str("_tag")).is_ok_and(|tag| tag.as_string().as_deref() == Some("Updated"))
}

/// One run's lease under heartbeat supervision.
/// See the module docs for the records its inputs answer.
#[wasm_bindgen]
pub struct LeaseSupervisor {
    supervision: SupervisionPolicy,
    supervisor: Supervisor,
    warnings: Vec<String>,
}

#[wasm_bindgen]
impl LeaseSupervisor {
    /// `new LeaseSupervisor(options)`: checks `heartbeatLoop`'s options and
    /// reads their policy ([`super::read_loop_options`]). Supervision starts
    /// with [`LeaseSupervisor::start`], once the glue may read its clock.
    ///
    /// # Errors
    /// A `TypeError` or `RangeError` naming the option or the broken relation.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &JsValue) -> Result<LeaseSupervisor, JsValue> {
        let (policy, warnings) = super::read_loop_options(options)?;
        Ok(LeaseSupervisor::with_policy(policy, warnings))
    }

    /// Starts (or restarts) supervising at `now`, the lease as it stands
    /// counting as confirmed then. The first pulse is due one `heartbeatIntervalMs` later;
    /// read [`LeaseSupervisor::deadline`].
    pub fn start(&mut self, now: f64) {
        self.supervisor = Supervisor::new(self.supervision, at(now), at(now));
    }

    /// The policy's warnings (a safe but wasteful set), as messages to log.
    pub fn warnings(&self) -> Array {
        self.warnings.iter().map(|w| JsValue::from_str(w)).collect()
    }

    /// When to call [`LeaseSupervisor::timeout`] next, ms; `-1` once
    /// supervision ended.
    pub fn deadline(&self) -> f64 {
        self.supervisor.poll_timeout().map_or(-1.0, |m| ms(m.0))
    }

    /// The timer set for [`LeaseSupervisor::deadline`] fired at `now`.
    pub fn timeout(&mut self, now: f64) -> Float64Array {
        self.run(|s| s.handle_timeout(at(now)))
    }

    /// Call `call` (a renewal or the reconfirmation) resolved with `outcome`:
    /// updated when `is_updated(outcome)` (the string `'Updated'` or a
    /// `{ _tag: 'Updated' }` object), else a lost fence.
    pub fn answered(&mut self, now: f64, call: u32, outcome: &JsValue) -> Float64Array {
        let answer = if is_updated(outcome) { Answer::Updated } else { Answer::Lost };
        self.run(|s| s.handle_answer(at(now), call, answer))
    }

    /// Call `call` threw or rejected: the lease is as it was.
    pub fn raised(&mut self, now: f64, call: u32) -> Float64Array {
        self.run(|s| s.handle_answer(at(now), call, Answer::Failed))
    }

    /// The `onReconfirm` receipt threw, rejected, or overran its budget: the
    /// lease lapses.
    #[wasm_bindgen(js_name = receiptFailed)]
    pub fn receipt_failed(&mut self, now: f64) -> Float64Array {
        self.run(|s| s.handle_receipt_failed(at(now)))
    }

    /// Whether supervision ended (lost or lapsed).
    pub fn ended(&self) -> bool {
        self.supervisor.ended()
    }
}

impl LeaseSupervisor {
    /// A supervisor for a checked `policy`, started at 0
    /// until [`LeaseSupervisor::start`]; `warnings` are what the glue logs.
    pub(crate) fn with_policy(policy: LeasePolicy, warnings: Vec<String>) -> LeaseSupervisor {
        let supervision = policy.supervision(Cadence::AfterPulse, Reconfirm::Separate);
        LeaseSupervisor { supervision, supervisor: Supervisor::new(supervision, Millis::ZERO, Millis::ZERO), warnings }
    }

    /// Feeds one input and collects its steps as records.
    fn run(&mut self, input: impl FnOnce(&mut Supervisor)) -> Float64Array {
        let mut records: Vec<f64> = Vec::with_capacity(MAX_STEPS_PER_INPUT * STRIDE);
        input(&mut self.supervisor);
        while let Some(step) = self.supervisor.poll_output() {
            records.extend_from_slice(&encode(step));
        }
        Float64Array::from(&records[..])
    }

    /// The core supervisor, read-only (for tests).
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }
}

/// The step protocol, read once by the glue: `{ stride, maxDelayMs, ops: {
/// renew, reconfirm, confirmed, failed, reconfirmed, lost, lapsed }, kinds:
/// { renew: { code, call, at }, … } (codes and field offsets,
/// [`record::kinds_table`]), notices:
/// { renewalFailed, reconfirmFailed, receiptFailed, receiptOverran, lapsed,
/// lapseHookFailed, lost } }` (`maxDelayMs`: the longest `setTimeout` delay,
/// 2^31 − 1; `notices`: the core's log messages, [`Notice::text`]).
#[wasm_bindgen(js_name = supervisorProtocol)]
pub fn supervisor_protocol() -> Object {
    let ops = Object::new();
    for kind in &KINDS {
        crate::set(&ops, kind.name, kind.code);
    }
    let out = Object::new();
    crate::set(&out, "stride", STRIDE as u32);
    crate::set(&out, "maxDelayMs", leasehold_core::backoff::MAX_DELAY_MS as f64);
    crate::set(&out, "ops", ops);
    crate::set(&out, "kinds", record::kinds_table(&KINDS));
    let notices = Object::new();
    for notice in Notice::ALL {
        crate::set(&notices, notice.js_name(), notice.text());
    }
    crate::set(&out, "notices", notices);
    out
}
