//! The claimant's lease watch for JavaScript job stores: the core's
//! [`leasehold_core::lease::LeaseWatch`] behind a class, one crossing per
//! lease read.

use leasehold_core::lease::{LeaseVersion, LeaseWatch as CoreWatch};
use leasehold_core::Millis;
use wasm_bindgen::prelude::*;

/// A claimant's memory of the running leases it has read, to take one over
/// only after seeing it unrenewed for longer than its stale window on the
/// claimant's own monotonic clock (`performance.now()`), whatever the wall
/// clock did meanwhile. One per claimant and queue.
#[wasm_bindgen]
#[derive(Default)]
pub struct LeaseWatch {
    inner: CoreWatch,
}

/// A JS number of ms as the core's whole ms: fractions dropped, negatives
/// and NaN as 0 (the glue passes clock readings and stored stamps only).
fn ms(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 { value as u64 } else { 0 }
}

/// A lease as read: its token and recorded heartbeat (ms, `None`: none).
fn version(token: f64, heartbeat_at: Option<f64>) -> LeaseVersion {
    LeaseVersion { token: ms(token), heartbeat_at: heartbeat_at.map(|at| Millis(ms(at))) }
}

#[wasm_bindgen]
impl LeaseWatch {
    /// An empty watch.
    #[wasm_bindgen(constructor)]
    pub fn new() -> LeaseWatch {
        LeaseWatch::default()
    }

    /// Records that job `id`'s lease read with fencing token `token` and
    /// recorded heartbeat `heartbeat_at` (ms, `undefined` for none) at the
    /// monotonic `now_ms`, and answers for how many ms it has been seen so.
    pub fn sight(&mut self, id: f64, token: f64, heartbeat_at: Option<f64>, now_ms: f64) -> f64 {
        self.inner.sight(ms(id), version(token, heartbeat_at), ms(now_ms)) as f64
    }

    /// Records that job `id`'s lease read with fencing token `token` and
    /// recorded heartbeat `heartbeat_at` (ms, `undefined` for none) at the
    /// monotonic `now_ms`, and answers whether it has been seen so, unrenewed,
    /// for more than `stale_after_ms`.
    #[wasm_bindgen(js_name = unrenewedFor)]
    pub fn unrenewed_for(&mut self, id: f64, token: f64, heartbeat_at: Option<f64>, stale_after_ms: f64, now_ms: f64) -> bool {
        self.inner.unrenewed_for(ms(id), version(token, heartbeat_at), ms(stale_after_ms), ms(now_ms))
    }

    /// Records that job `id`, queued again after a cancel while it ran,
    /// carries that attempt's lease, read with token `token` (the job's
    /// now) and heartbeat `heartbeat_at` (ms, `undefined` for none) under
    /// its stale window `stale_after_ms`, at the monotonic `now_ms`; answers
    /// whether the job may be claimed now (that lease seen unrenewed for
    /// more than its window).
    #[wasm_bindgen(js_name = cancelledUnrenewedFor)]
    pub fn cancelled_unrenewed_for(&mut self, id: f64, token: f64, heartbeat_at: Option<f64>, stale_after_ms: f64, now_ms: f64) -> bool {
        self.inner.cancelled_unrenewed_for(ms(id), version(token, heartbeat_at), ms(stale_after_ms), ms(now_ms))
    }

    /// The cancelled attempts' leases seen unrenewed for more than their
    /// window by the monotonic `now_ms`, as of the last sightings, each as
    /// `'id:token'`: the form the PostgreSQL claim statements match
    /// (`watched`), for a host that reads these leases less often than it
    /// claims.
    #[wasm_bindgen(js_name = cancelledWatched)]
    pub fn cancelled_watched(&self, now_ms: f64) -> Vec<String> {
        self.inner.cancelled_watched(ms(now_ms)).map(|(id, token)| format!("{id}:{token}")).collect()
    }

    /// Forgets the leases last seen before the monotonic `since_ms`.
    #[wasm_bindgen(js_name = forgetUnseenSince)]
    pub fn forget_unseen_since(&mut self, since_ms: f64) {
        self.inner.forget_unseen_since(ms(since_ms));
    }
}
