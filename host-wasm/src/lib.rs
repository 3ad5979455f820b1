//! leasehold-wasm: the core job runner exposed to JavaScript, the
//! engine of the npm package `leasehold`.
//!
//! The shape is chosen for the cost of crossing between JS and wasm: the
//! exports are numeric, and nothing here calls back into JS.
//!
//! - [`Core`] (`new Core(options)`): one runner. Its methods are the core's
//!   inputs (`start`, `tick`, `wake`, `stop`, `quiesce`, `dispose`,
//!   `claimFound`, `claimEmpty`, `claimFailed`, `performed`, `failed`,
//!   `renewed`, `renewFailed`, `timeout`, `drain`); its outputs are records in
//!   an action buffer in wasm memory ([`protocol`](mod@protocol)).
//! - [`protocol()`]: the buffer layout and opcodes as a JS object, so the glue
//!   hard-codes none of them.
//! - [`job_backoff`] (`jobBackoff`), [`memory`] (`wasmMemory`).
//! - [`queue_defaults`], [`retry_delay_ms`], [`recovery_delay_ms`],
//!   [`claim_age_tolerance_ms`]: a job queue's defaults, backoffs and page
//!   hand-over rule, for the package's job stores (`leasehold/indexeddb`).
//! - [`trace`] (`TraceRing`): the core's trace ring behind
//!   `createJobTraceSink` / `resumeJobTrace`. With the features `runner` and
//!   `trace` (both by default) one crate builds two modules:
//!   `scripts/build-pkg.sh` builds the runner's (runner and leases) and the
//!   trace ring's apart, so the serde code of the latter weighs only on users
//!   of the trace sink.
//! - [`lease`]: run leases — `LeaseSupervisor` behind the glue's
//!   `heartbeatLoop` (`pkg/src/lease.js`), `leasePolicy`, lease-only liveness,
//!   `sameHostIncarnation`.
//!
//! The JS glue in `pkg/src/runner.js` owns the user's callbacks, the items,
//! abort controllers, the one timer and the promises, and calls [`Core`] once
//! per callback completion: two calls per item (`claimFound`, `performed`; a
//! pool without heartbeat or trace sink adds two questions, whether each
//! reads its time, cheaper than the clock reading they spare).
//! Every policy — passes, backoff, wakes, stop generations, lease
//! supervision — is `leasehold-core`'s; this crate adds none.
//!
//! - [`eventlog`] and [`pump`]: the event log's framing and open decisions,
//!   and the event pump's state, for the Node.js `leasehold/eventlog`
//!   (features `eventlog` and `pump`, a module each, loaded by their users).
//!
//! Liveness here is lease-only: a claim is held while renewals confirm.
//!
//! No panic is reachable from JS: inputs are numbers converted with saturating
//! casts, slots are bounds-checked by the core, options are checked before the
//! core sees them. The `wasm` profile aborts on panic regardless.

#[cfg(feature = "eventlog")]
pub mod eventlog;
#[cfg(feature = "runner")]
pub mod lease;
pub mod options;
#[cfg(feature = "runner")]
pub mod protocol;
#[cfg(feature = "runner")]
pub mod record;
#[cfg(feature = "pump")]
pub mod pump;
#[cfg(feature = "runner")]
mod runner;
#[cfg(feature = "trace")]
pub mod trace;

#[cfg(feature = "runner")]
pub use runner::Core;
#[cfg(feature = "trace")]
pub use trace::JsTraceRing;

#[cfg(feature = "runner")]
use js_sys::{Array, Object, Reflect};
#[cfg(feature = "runner")]
use leasehold_core::backoff::MAX_DELAY_MS;
#[cfg(feature = "runner")]
use leasehold_core::options::DEFAULT_JOB_BATCH_LIMIT;
use wasm_bindgen::prelude::*;

/// The module's `WebAssembly.Memory`, whose buffer holds every `Core`'s
/// action buffer (in the trace module: every trace ring).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn memory() -> JsValue {
    wasm_bindgen::memory()
}

/// `[[source, position], …]`: watermarks as the event log's glue takes them
/// (positions as JS numbers).
#[cfg(any(feature = "eventlog", feature = "pump"))]
pub(crate) fn mark_pairs<'a>(marks: impl IntoIterator<Item = (&'a str, u64)>) -> js_sys::Array {
    marks
        .into_iter()
        .map(|(name, position)| {
            let pair = js_sys::Array::new();
            pair.push(&JsValue::from_str(name));
            pair.push(&JsValue::from_f64(position as f64));
            JsValue::from(pair)
        })
        .collect()
}

#[cfg(feature = "runner")]
fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Defining a data property on a fresh plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

/// `{ initialMs: interval, maxMs:
/// max(interval, min(60000, interval × 10)), multiplier: 2 }`, a plain object
/// (computed by [`leasehold_core::job_backoff`]).
#[cfg(feature = "runner")]
#[wasm_bindgen(js_name = jobBackoff)]
pub fn job_backoff(interval_ms: f64) -> Object {
    let backoff = leasehold_core::job_backoff(interval_ms);
    let object = Object::new();
    set(&object, "initialMs", backoff.initial_ms);
    set(&object, "maxMs", backoff.max_ms);
    set(&object, "multiplier", backoff.multiplier);
    object
}

/// A job queue's defaults and rules, from the core, as the npm package's stores read them:
/// `{ maxAttempts, retryBackoff: { initialMs, maxMs, multiplier }, maxQueueNameBytes,
/// queueNamePunctuation, maxIdempotencyKeyBytes, maxCancelTextBytes, reclaimEveryMs, migrations: { namespace,
/// idBlock, blockSize, lockKey } }` (ms; `lockKey` is the PostgreSQL advisory-lock key as a
/// decimal string, beyond what a JS number holds exactly).
#[cfg(feature = "runner")]
#[wasm_bindgen(js_name = queueDefaults)]
pub fn queue_defaults() -> Object {
    use leasehold_core::queue::{migrations, rules};
    let backoff = leasehold_core::backoff::RETRY_BACKOFF;
    let retry = Object::new();
    set(&retry, "initialMs", backoff.initial_ms);
    set(&retry, "maxMs", backoff.max_ms);
    set(&retry, "multiplier", backoff.multiplier);
    let migrating = Object::new();
    set(&migrating, "namespace", migrations::NAMESPACE);
    set(&migrating, "idBlock", migrations::ID_BLOCK as f64);
    set(&migrating, "blockSize", migrations::ID_BLOCK_SIZE as f64);
    set(&migrating, "lockKey", migrations::PG_MIGRATION_LOCK_KEY.to_string());
    let out = Object::new();
    set(&out, "maxAttempts", leasehold_core::backoff::DEFAULT_MAX_ATTEMPTS);
    set(&out, "retryBackoff", retry);
    set(&out, "maxQueueNameBytes", rules::MAX_QUEUE_NAME_LEN as f64);
    set(&out, "queueNamePunctuation", rules::QUEUE_NAME_PUNCTUATION);
    set(&out, "maxIdempotencyKeyBytes", rules::MAX_IDEMPOTENCY_KEY_LEN as f64);
    set(&out, "maxCancelTextBytes", rules::MAX_CANCEL_TEXT_LEN as f64);
    set(&out, "reclaimEveryMs", rules::RECLAIM_EVERY_MS as f64);
    set(&out, "migrations", migrating);
    out
}

/// How long a job whose attempt `attempt` (from 1; fractions truncated, below 1 counts as
/// 1) failed waits before it is due again, whole ms: the core's retry backoff
/// ([`leasehold_core::backoff::RETRY_BACKOFF`]).
#[cfg(feature = "runner")]
#[wasm_bindgen(js_name = retryDelayMs)]
pub fn retry_delay_ms(attempt: f64) -> f64 {
    // `as` saturates: NaN and negatives are 0, which delay_after counts as the first.
    leasehold_core::backoff::RETRY_BACKOFF.delay_after(attempt as u32) as f64
}

/// How long a worker waits before it tries again to write a finished outcome whose write
/// failed for the `failures`-th time in a row (from 1), whole ms: the core's settle retry
/// ([`leasehold_core::runner::SETTLE_RETRY`], 100 ms doubling to 1.5 s).
#[cfg(feature = "runner")]
#[wasm_bindgen(js_name = recoveryDelayMs)]
pub fn recovery_delay_ms(failures: f64) -> f64 {
    leasehold_core::runner::SETTLE_RETRY.delay_after(failures as u32) as f64
}

/// For a job queue's worker whose runner takes `stale_after_ms` and the
/// heartbeat cadence `heartbeat_every_ms` (`undefined`: the default cadence),
/// ms: how long before a slot's claim a page's job may have had its lease
/// stamped and still be handed over without a renewal, the runner's lease
/// policy's [`leasehold_core::lease::LeasePolicy::claim_age_tolerance_ms`]
/// (at most 100, at most half the skew allowance).
///
/// # Errors
/// The runner's own refusal of these spans (`staleAfterMs` and
/// `heartbeatEveryMs` named as the runner names them).
#[cfg(feature = "runner")]
#[wasm_bindgen(js_name = claimAgeToleranceMs)]
pub fn claim_age_tolerance_ms(stale_after_ms: f64, heartbeat_every_ms: Option<f64>) -> Result<f64, JsError> {
    let input = leasehold_core::options::OptionsInput {
        interval_ms: 1.0,
        stale_after_ms,
        heartbeat: true,
        heartbeat_every_ms,
        ..Default::default()
    };
    let config = input.validate().map_err(|e| JsError::new(&e.to_string()))?;
    Ok(config.lease.map_or(0, |lease| lease.claim_age_tolerance_ms()) as f64)
}

/// The action-buffer protocol and constants, read once by the glue:
/// `{ stride, header, capacity, end, deadline, claimTime, settleTime, ops: { claim, perform, renew,
/// abort, drop, log, passEnded, more, event }, kinds: { claim: { code, at },
/// perform: { code, slot, gen }, … } (every record kind's code and field
/// offsets, [`record::kinds_table`]), events: [type strings by opcode −
/// ops.event], eventKinds: [{ type, code, fields: [[name, offset, kind]] }]
/// ([`record::event_table`]), logMessages: [suffix by log code],
/// defaultBatchLimit, maxDelayMs }`.
#[cfg(feature = "runner")]
#[wasm_bindgen]
pub fn protocol() -> Object {
    // Every record kind by the name its table row has, and the first event code.
    let ops = Object::new();
    for kind in &protocol::KINDS {
        set(&ops, kind.name, kind.code);
    }
    set(&ops, "event", protocol::op::EVENT);
    let events: Array = leasehold_core::event::EVENT_KINDS.iter().map(|k| JsValue::from_str(k.type_name)).collect();
    let logs: Array = protocol::LOG_KINDS.iter().map(|k| JsValue::from_str(k.suffix())).collect();
    let out = Object::new();
    set(&out, "stride", protocol::STRIDE as u32);
    set(&out, "header", protocol::HEADER as u32);
    set(&out, "capacity", protocol::CAPACITY as u32);
    set(&out, "end", protocol::END as u32);
    set(&out, "deadline", protocol::DEADLINE as u32);
    set(&out, "claimTime", protocol::CLAIM_TIME as u32);
    set(&out, "settleTime", protocol::SETTLE_TIME as u32);
    set(&out, "ops", ops);
    set(&out, "events", events);
    set(&out, "kinds", record::kinds_table(&protocol::KINDS));
    set(&out, "eventKinds", record::event_table());
    set(&out, "logMessages", logs);
    set(&out, "defaultBatchLimit", DEFAULT_JOB_BATCH_LIMIT);
    set(&out, "maxDelayMs", MAX_DELAY_MS as f64);
    out
}
