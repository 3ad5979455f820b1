//! [`Core`]: one job runner as JS sees it — the
//! core's inputs as numeric methods, its actions as records in a buffer the
//! glue reads from wasm memory (see [`crate::protocol`]).
//!
//! Nothing here calls JavaScript: the glue (`pkg/src/runner.js`) calls the
//! user's callbacks, holds the items, the abort controllers, the timer and the
//! promises, and reports each completion with one call here. So no wasm frame
//! is ever on the stack under user code, and a user callback that calls
//! `wake()` re-enters nothing: its records queue behind the ones being read.
//!
//! Times are what the glue passes, in ms: its `now()` readings, never earlier
//! than a deadline its timer already fired for. Fractions are truncated, and
//! NaN or negative readings count as 0 (`f64 as u64`).
//! Items are named by `slot` (`0..pool size`) and `gen`, as the `perform`
//! record gave them; an answer for an item that already settled, or a slot
//! out of range, is ignored by the core. Errors thrown by user callbacks stay
//! in JS: the core carries a `token` the glue chose and hands it back in
//! `log` and event records.

use crate::protocol::{self, CAPACITY, CLAIM_TIME, DEADLINE, END, HEADER, LEN, SETTLE_TIME, STRIDE};
use leasehold_core::options::Config;
use leasehold_core::runner::{DetachedId, Ended, ItemKey, Runner, Ticket};
use leasehold_core::Millis;
use wasm_bindgen::prelude::*;

/// One runner: the core state machine and its action buffer.
#[wasm_bindgen]
pub struct Core {
    runner: Runner<u32>,
    /// The action buffer, [`LEN`] slots; allocated once, never moved.
    out: Box<[f64]>,
    /// [`Runner::time_read_by_state`], fixed by the options: whether the
    /// time flags change with the state.
    by_state: bool,
}

fn at(now: f64) -> Millis {
    // `as` truncates fractions and saturates: NaN and negatives are 0.
    Millis(now as u64)
}

fn key(slot: u32, generation: u32) -> Option<ItemKey> {
    Some(ItemKey { slot: u16::try_from(slot).ok()?, generation })
}

/// A flag slot's value: 1 or 0.
fn flag(on: bool) -> f64 {
    if on { 1.0 } else { 0.0 }
}

fn pass_number(ticket: Option<leasehold_core::runner::PassId>) -> f64 {
    ticket.map_or(-1.0, |pass| pass.0 as f64)
}

#[wasm_bindgen]
impl Core {
    /// `new Core(options)`: reads and validates `createJobRunner`'s options
    /// (see [`crate::options::read`]).
    ///
    /// # Errors
    /// A `TypeError` or `RangeError` naming the bad option.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &JsValue) -> Result<Core, JsValue> {
        let checked = crate::options::read(options)?;
        Ok(Core::with_config(checked.config, checked.tracing))
    }

    /// Byte offset of the action buffer in `wasmMemory().buffer`; it never moves
    /// (but the `ArrayBuffer` is replaced when memory grows: re-create views
    /// whose length went to 0).
    #[wasm_bindgen(js_name = bufferPtr)]
    pub fn buffer_ptr(&self) -> u32 {
        // wasm32: pointers are 32-bit.
        self.out.as_ptr() as usize as u32
    }

    /// `start()` at `now`.
    pub fn start(&mut self, now: f64) {
        self.runner.start(at(now));
        self.drain();
    }

    /// `tick()` at `now`: the pass to wait for, or `-1` when the
    /// runner is disposed (resolve with the idle report at once).
    pub fn tick(&mut self, now: f64) -> f64 {
        let pass = match self.runner.tick(at(now)) {
            Ticket::Pass(pass) => Some(pass),
            Ticket::Done(_) => None,
        };
        self.drain();
        pass_number(pass)
    }

    /// `wake()` at `now`.
    pub fn wake(&mut self, now: f64) {
        self.runner.wake(at(now));
        self.drain();
    }

    /// `stop()`: no more passes are scheduled; a pending follow-up is dropped.
    pub fn stop(&mut self) {
        self.runner.stop();
        self.drain();
    }

    /// The pass to wait for, or `-1` for none.
    pub fn quiesce(&mut self) -> f64 {
        let pass = self.runner.quiesce();
        self.drain();
        pass_number(pass)
    }

    /// The pass to wait for, or `-1` for none.
    pub fn dispose(&mut self) -> f64 {
        let pass = self.runner.dispose();
        self.drain();
        pass_number(pass)
    }

    /// The claim in flight answered an item: the slot to store it at before
    /// reading the records (its `perform` record names that slot), or `-1`
    /// if no claim was in flight.
    #[wasm_bindgen(js_name = claimFound)]
    pub fn claim_found(&mut self, now: f64) -> i32 {
        let key = self.runner.claim_found(at(now));
        self.drain();
        key.map_or(-1, |k| i32::from(k.slot))
    }

    /// The claim in flight answered `null` or `undefined`.
    #[wasm_bindgen(js_name = claimEmpty)]
    pub fn claim_empty(&mut self, now: f64) {
        self.runner.claim_empty(at(now));
        self.drain();
    }

    /// The claim in flight threw or rejected with the error held as `token`.
    #[wasm_bindgen(js_name = claimFailed)]
    pub fn claim_failed(&mut self, now: f64, token: u32) {
        self.runner.claim_failed(at(now), token);
        self.drain();
    }

    /// The item's `perform` resolved.
    pub fn performed(&mut self, now: f64, slot: u32, generation: u32) {
        if let Some(key) = key(slot, generation) {
            self.runner.item_settled(at(now), key, Ok(()));
        }
        self.drain();
    }

    /// The item's `perform` threw or rejected with the error held as `token`.
    pub fn failed(&mut self, now: f64, slot: u32, generation: u32, token: u32) {
        if let Some(key) = key(slot, generation) {
            self.runner.item_settled(at(now), key, Err(token));
        }
        self.drain();
    }

    /// The item's `perform` resolved to say its job was lost (cancelled
    /// under it, or the write of its outcome refused by the store's fence):
    /// counted `claimLost` (see [`Runner::item_lost`]).
    pub fn lost(&mut self, now: f64, slot: u32, generation: u32) {
        if let Some(key) = key(slot, generation) {
            self.runner.item_lost(at(now), key);
        }
        self.drain();
    }

    /// The item's work is over and the glue writes its outcome: its slot is
    /// free for the next claim at once (see [`Runner::item_detached`]).
    /// Answers the id to report its end with ([`Core::detached_performed`],
    /// [`Core::detached_failed`], [`Core::detached_lost`]), or `-1` when the
    /// item is not performing.
    pub fn detached(&mut self, now: f64, slot: u32, generation: u32) -> f64 {
        let id = key(slot, generation).and_then(|key| self.runner.item_detached(at(now), key));
        self.drain();
        id.map_or(-1.0, |id| f64::from(id.0))
    }

    /// The detached item `id`'s outcome was written: counted `performed`.
    #[wasm_bindgen(js_name = detachedPerformed)]
    pub fn detached_performed(&mut self, now: f64, id: u32) {
        self.runner.detached_ended(at(now), DetachedId(id), Ended::Performed);
        self.drain();
    }

    /// The detached item `id`'s failure was recorded, with the error held
    /// as `token`: counted `failed`, logged and traced.
    #[wasm_bindgen(js_name = detachedFailed)]
    pub fn detached_failed(&mut self, now: f64, id: u32, token: u32) {
        self.runner.detached_ended(at(now), DetachedId(id), Ended::Failed(token));
        self.drain();
    }

    /// Nothing of the detached item `id` was written (cancelled, or refused
    /// by the fence): counted `claimLost`.
    #[wasm_bindgen(js_name = detachedLost)]
    pub fn detached_lost(&mut self, now: f64, id: u32) {
        self.runner.detached_ended(at(now), DetachedId(id), Ended::Lost);
        self.drain();
    }

    /// Renewal `call` of the item answered: `landed` is the truthiness of
    /// what `heartbeat` resolved to.
    pub fn renewed(&mut self, now: f64, slot: u32, generation: u32, call: u32, landed: bool) {
        if let Some(key) = key(slot, generation) {
            self.runner.renewal_answered(at(now), key, call, Ok(landed));
        }
        self.drain();
    }

    /// Renewal `call` of the item threw or rejected with the error held as
    /// `token`.
    #[wasm_bindgen(js_name = renewFailed)]
    pub fn renew_failed(&mut self, now: f64, slot: u32, generation: u32, call: u32, token: u32) {
        if let Some(key) = key(slot, generation) {
            self.runner.renewal_answered(at(now), key, call, Err(token));
        }
        self.drain();
    }

    /// The timer for the deadline in the buffer fired: `now` is at least
    /// that deadline.
    pub fn timeout(&mut self, now: f64) {
        self.runner.handle_timeout(at(now));
        self.drain();
    }

    /// Appends the core's pending actions to the buffer after the records
    /// not yet consumed (slot [`END`]), up to [`CAPACITY`] with a `more`
    /// record last when some did not fit, and updates the deadline slot.
    /// Every input method ends with it; the glue calls it alone after a
    /// `more` record.
    pub fn drain(&mut self) {
        // Only the glue writes END besides us, and only 0; clamp anything else.
        let mut end = (self.out[END] as usize).min(CAPACITY);
        // Room for one record is kept for `more` until the core runs dry; an
        // action that does not fit stays in the core's queue. Each action is
        // read in place, field by field (see `Runner::peek_action`).
        while end < CAPACITY {
            let Some(action) = self.runner.peek_action() else { break };
            let record = &mut self.out[HEADER + end * STRIDE..][..STRIDE];
            if end + 1 == CAPACITY {
                protocol::encode_more(record);
                end += 1;
                break;
            }
            if protocol::encode(action, record) {
                end += 1;
            }
            self.runner.skip_action();
        }
        self.out[END] = end as f64;
        self.out[DEADLINE] = self.runner.poll_timeout().map_or(-1.0, |m| m.0 as f64);
        self.write_time_flags();
    }
}

impl Core {
    /// A runner over validated options; `tracing` says whether a trace sink
    /// exists (with none, no event record is ever written).
    pub(crate) fn with_config(config: Config, tracing: bool) -> Core {
        let mut out = vec![0.0; LEN].into_boxed_slice();
        out[DEADLINE] = -1.0;
        let runner = Runner::new(config, tracing);
        let by_state = runner.time_read_by_state();
        out[CLAIM_TIME] = flag(runner.claim_found_reads_time());
        out[SETTLE_TIME] = 1.0;
        let mut core = Core { runner, out, by_state };
        core.write_time_flags();
        core
    }

    /// Writes [`CLAIM_TIME`] and [`SETTLE_TIME`] for the runner's state now
    /// where they depend on it (otherwise they were written once, at
    /// construction): the glue reads them, rather than calling in, before it
    /// answers a claim or a resolved perform, and reads no clock where they
    /// are 0 (a clock reading costs as much as a wasm call in Node.js).
    fn write_time_flags(&mut self) {
        if self.by_state {
            self.out[CLAIM_TIME] = flag(self.runner.claim_found_reads_time_now());
            self.out[SETTLE_TIME] = flag(self.runner.performed_reads_time_now());
        }
    }

    /// The buffer as the glue sees it (for tests and native callers).
    pub fn buffer(&self) -> &[f64] {
        &self.out
    }

    /// Marks every record consumed, as the glue does once it has read them.
    pub fn consume(&mut self) {
        self.out[END] = 0.0;
    }

    /// The core runner, read-only (for tests).
    pub fn runner(&self) -> &Runner<u32> {
        &self.runner
    }
}
