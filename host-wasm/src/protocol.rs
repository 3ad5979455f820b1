//! The action buffer: how the core's [`Action`]s reach the JS glue without a
//! call per action.
//!
//! Each [`crate::Core`] owns one `Float64Array`-shaped buffer in wasm memory.
//! After every input, the core's pending actions are written into it as
//! fixed-size records; the glue reads them through a typed-array view of the
//! same memory, so a callback that completes costs one crossing into wasm and
//! none back.
//!
//! Layout (indices are `f64` slots):
//!
//! | slots | content |
//! |---|---|
//! | `0` ([`END`]) | records written and not yet consumed. The glue sets it to 0 once it has read them all; the core appends after it, so an input made while the glue is still reading (a user callback calling `wake()`) queues behind the records before it, in the core's own order |
//! | `1` ([`DEADLINE`]) | the core's next timeout in ms ([`leasehold_core::Runner::poll_timeout`]), or `-1` for none |
//! | `2` ([`CLAIM_TIME`]) | `1` when the answer to the claim in flight, given now, would have its time read (`claimFound`), else `0`: the glue then answers with the claim's own `at` and reads no clock |
//! | `3` ([`SETTLE_TIME`]) | `1` when a perform that resolves now would have its time read (`performed`), else `0` (as above) |
//! | `4..8` | reserved |
//! | `8 + r × 8 ..` | record `r`: `[opcode, field₁ … field₇]` |
//!
//! Records are the codec's ([`crate::record`]): `[code, fields…]`, with the
//! kinds below ([`KINDS`]: times and spans in ms, `slot`/`gen` name an item's
//! place and generation, `token` an error the glue holds for the length of
//! one drain), then the core's events (codes from [`op::EVENT`], fields as
//! [`crate::record::event_table`] lists them).
//!
//! | code | kind | fields |
//! |---|---|---|
//! | 1 | `claim` | `at` |
//! | 2 | `perform` | `slot, gen` |
//! | 3 | `renew` | `slot, gen, call, at` |
//! | 4 | `abort` | `slot, gen, lapsed (0/1)` |
//! | 5 | `drop` | `slot, gen` (never produced for JS: no grace period) |
//! | 6 | `log` | `kind (0 work failed, 1 claim failed), token` |
//! | 7 | `passEnded` | `pass, claimed, performed, failed, claimLost` |
//! | 8 | `more` | none: more actions are pending; read them with `drain()` once the buffer is consumed |
//!
//! The glue reads every number here from [`crate::protocol()`] at load, so the
//! layout is written down once, in this file and the codec.

use leasehold_core::runner::{Action, ItemKey, LogKind};
use leasehold_core::Millis;

use crate::record::{self, Kind};
pub use crate::record::STRIDE;

/// `f64` slots before the first record.
pub const HEADER: usize = 8;
/// Records the buffer holds. One input yields a handful; a timeout over a
/// full pool of 64 items yields a few per item; more than this waits behind a
/// [`op::MORE`] record.
pub const CAPACITY: usize = 256;
/// Slot of the record count.
pub const END: usize = 0;
/// Slot of the next deadline.
pub const DEADLINE: usize = 1;
/// Slot of the flag saying whether `claimFound`, called now, reads its time
/// ([`leasehold_core::runner::Runner::claim_found_reads_time`] and
/// [`leasehold_core::runner::Runner::claim_found_reads_time_now`]): `1` or `0`.
/// Rewritten by every drain, so it holds for the state the last input left.
pub const CLAIM_TIME: usize = 2;
/// Slot of the flag saying whether `performed`, called now, reads its time
/// ([`leasehold_core::runner::Runner::performed_reads_time_now`]): `1` or `0`.
/// Rewritten by every drain.
pub const SETTLE_TIME: usize = 3;
/// Total `f64` slots of a buffer.
pub const LEN: usize = HEADER + CAPACITY * STRIDE;

/// Record codes (see the module docs for their fields).
pub mod op {
    /// Call `claim(at)`.
    pub const CLAIM: u8 = 1;
    /// Call `perform(item, signal)` for the item at `slot`.
    pub const PERFORM: u8 = 2;
    /// Call `heartbeat(item, at)`; answer quoting `call`.
    pub const RENEW: u8 = 3;
    /// Abort the item's signal with a `JobClaimLostError`.
    pub const ABORT: u8 = 4;
    /// Forget the item (native hosts only).
    pub const DROP: u8 = 5;
    /// Log `<name> work failed` / `<name> claim failed`.
    pub const LOG: u8 = 6;
    /// Resolve whoever waits on the pass.
    pub const PASS_ENDED: u8 = 7;
    /// More actions are pending: call `drain()` once the buffer is consumed.
    pub const MORE: u8 = 8;
    /// The first event code; events are `EVENT + index` in the core's
    /// [`leasehold_core::event::EVENT_KINDS`].
    pub const EVENT: u8 = crate::record::EVENT_CODE;
}

const CLAIM: Kind = Kind { name: "claim", code: op::CLAIM, fields: &["at"] };
const PERFORM: Kind = Kind { name: "perform", code: op::PERFORM, fields: &["slot", "gen"] };
const RENEW: Kind = Kind { name: "renew", code: op::RENEW, fields: &["slot", "gen", "call", "at"] };
const ABORT: Kind = Kind { name: "abort", code: op::ABORT, fields: &["slot", "gen", "lapsed"] };
const DROP: Kind = Kind { name: "drop", code: op::DROP, fields: &["slot", "gen"] };
const LOG: Kind = Kind { name: "log", code: op::LOG, fields: &["kind", "token"] };
const PASS_ENDED: Kind = Kind {
    name: "passEnded",
    code: op::PASS_ENDED,
    fields: &["pass", "claimed", "performed", "failed", "claimLost"],
};
const MORE: Kind = Kind { name: "more", code: op::MORE, fields: &[] };

/// The runner's record kinds besides its events.
pub const KINDS: [Kind; 8] = [CLAIM, PERFORM, RENEW, ABORT, DROP, LOG, PASS_ENDED, MORE];

/// The log kinds by their record code: `LOG_KINDS[code].suffix()` is the
/// message after the runner name.
pub const LOG_KINDS: [LogKind; 2] = [LogKind::WorkFailed, LogKind::ClaimFailed];

fn ms(at: Millis) -> f64 {
    at.0 as f64
}

fn key_fields(key: ItemKey) -> [f64; 2] {
    [f64::from(key.slot), f64::from(key.generation)]
}

/// Writes `action` as one record into `record` (exactly [`STRIDE`] slots).
/// Answers false, writing nothing, for an action the JS runner never gets.
pub fn encode(action: &Action<u32>, record: &mut [f64]) -> bool {
    match *action {
        Action::Claim { at } => record::put(record, &CLAIM, &[ms(at)]),
        Action::Perform { key } => record::put(record, &PERFORM, &key_fields(key)),
        Action::Renew { key, call, at } => {
            let [slot, generation] = key_fields(key);
            record::put(record, &RENEW, &[slot, generation, f64::from(call), ms(at)]);
        }
        Action::Abort { key, lapsed } => {
            let [slot, generation] = key_fields(key);
            record::put(record, &ABORT, &[slot, generation, if lapsed { 1.0 } else { 0.0 }]);
        }
        Action::Drop { key } => record::put(record, &DROP, &key_fields(key)),
        Action::Log { kind, error } => {
            let code = if kind == LogKind::WorkFailed { 0.0 } else { 1.0 };
            record::put(record, &LOG, &[code, f64::from(error)]);
        }
        Action::PassEnded { pass, report } => {
            let counts = [report.claimed, report.performed, report.failed, report.claim_lost].map(f64::from);
            let [c, p, f, l] = counts;
            record::put(record, &PASS_ENDED, &[pass.0 as f64, c, p, f, l]);
        }
        Action::Emit(ref event) => record::put_event(record, event),
        // Asked only of a host that opted into the settle phase; the JS
        // runner's perform settles by itself (seed 000), so it never does.
        Action::Settle { .. } | Action::Release { .. } => return false,
    }
    true
}

/// Writes the [`op::MORE`] record.
pub fn encode_more(record: &mut [f64]) {
    record::put(record, &MORE, &[]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasehold_core::event::{Event, PassReport};
    use leasehold_core::runner::PassId;

    fn record(action: Action<u32>) -> [f64; STRIDE] {
        let mut r = [0.0; STRIDE];
        assert!(encode(&action, &mut r));
        r
    }

    #[test]
    fn every_record_fits_its_stride() {
        let r = record(Action::Emit(Event::PassEnd {
            at: Millis(5),
            report: PassReport { claimed: 4, performed: 1, failed: 2, claim_lost: 1 },
            next_delay_ms: 250,
        }));
        assert_eq!(r[..7], [11.0, 5.0, 4.0, 1.0, 2.0, 1.0, 250.0]);
    }

    #[test]
    fn a_lapsed_claim_writes_its_flag_and_span() {
        let r = record(Action::Emit(Event::ClaimLost { at: Millis(9), item: 2, lapsed: true, unconfirmed_ms: 2_624 }));
        assert_eq!(r[..5], [18.0, 9.0, 2.0, 1.0, 2_624.0]);
    }

    #[test]
    fn items_are_named_by_slot_and_generation() {
        let key = ItemKey { slot: 3, generation: 9 };
        assert_eq!(record(Action::Renew { key, call: 2, at: Millis(70) })[..5], [3.0, 3.0, 9.0, 2.0, 70.0]);
        assert_eq!(record(Action::Abort { key, lapsed: true })[..4], [4.0, 3.0, 9.0, 1.0]);
        assert_eq!(record(Action::PassEnded { pass: PassId(6), report: PassReport::IDLE })[..2], [7.0, 6.0]);
    }

    #[test]
    fn log_kinds_round_trip_through_their_codes() {
        for (code, kind) in LOG_KINDS.iter().enumerate() {
            let r = record(Action::Log { kind: *kind, error: 4 });
            assert_eq!(r[..3], [6.0, code as f64, 4.0]);
        }
    }
}
