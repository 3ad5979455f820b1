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
//! | `2..8` | reserved |
//! | `8 + r × 8 ..` | record `r`: `[opcode, field₁ … field₇]` |
//!
//! Records, by opcode (fields in order; times and spans in ms, `slot`/`gen`
//! name an item's place and generation, `token` an error the glue holds for
//! the length of one drain):
//!
//! | opcode | record | fields |
//! |---|---|---|
//! | 1 | claim | `at` |
//! | 2 | perform | `slot, gen` |
//! | 3 | renew | `slot, gen, call, at` |
//! | 4 | abort | `slot, gen, lapsed (0/1)` |
//! | 5 | drop | `slot, gen` (never produced for JS: no grace period) |
//! | 6 | log | `kind (0 work failed, 1 claim failed), token` |
//! | 7 | pass ended | `pass, claimed, performed, failed, claimLost` |
//! | 8 | more | none: more actions are pending; read them with `drain()` once the buffer is consumed |
//! | 10 | `pass-start` | `at` |
//! | 11 | `pass-end` | `at, claimed, performed, failed, claimLost, nextDelayMs` |
//! | 12 | `claimed` | `at, item` |
//! | 13 | `claim-failed` | `at, token` |
//! | 14 | `performed` | `at, item, durationMs` |
//! | 15 | `item-failed` | `at, item, token` |
//! | 16 | `heartbeat` | `at, item` |
//! | 17 | `heartbeat-failed` | `at, item, token` |
//! | 18 | `claim-lost` | `at, item, lapsed (0/1), unconfirmedMs` |
//!
//! The glue reads every number here from [`crate::protocol()`] at load, so the
//! layout is written down once, in this file.

use leasehold_core::event::{Event, PassReport};
use leasehold_core::runner::{Action, ItemKey, LogKind};
use leasehold_core::Millis;

/// `f64` slots per record.
pub const STRIDE: usize = 8;
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
/// Total `f64` slots of a buffer.
pub const LEN: usize = HEADER + CAPACITY * STRIDE;

/// Record opcodes (see the module docs for their fields).
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
    /// The first event opcode; events are `EVENT + index` in [`super::EVENTS`].
    pub const EVENT: u8 = 10;
    /// `pass-start`.
    pub const PASS_START: u8 = 10;
    /// `pass-end`.
    pub const PASS_END: u8 = 11;
    /// `claimed`.
    pub const CLAIMED: u8 = 12;
    /// `claim-failed`.
    pub const CLAIM_FAILED: u8 = 13;
    /// `performed`.
    pub const PERFORMED: u8 = 14;
    /// `item-failed`.
    pub const ITEM_FAILED: u8 = 15;
    /// `heartbeat`.
    pub const HEARTBEAT: u8 = 16;
    /// `heartbeat-failed`.
    pub const HEARTBEAT_FAILED: u8 = 17;
    /// `claim-lost`.
    pub const CLAIM_LOST: u8 = 18;
}

/// One sample of each event, in opcode order from [`op::EVENT`]: the `type`
/// strings the glue puts on events come from [`Event::type_name`] through it.
pub const EVENTS: [Event<u32>; 9] = [
    Event::PassStart { at: Millis::ZERO },
    Event::PassEnd { at: Millis::ZERO, report: PassReport::IDLE, next_delay_ms: 0 },
    Event::Claimed { at: Millis::ZERO, item: 0 },
    Event::ClaimFailed { at: Millis::ZERO, error: 0 },
    Event::Performed { at: Millis::ZERO, item: 0, duration_ms: 0 },
    Event::ItemFailed { at: Millis::ZERO, item: 0, error: 0 },
    Event::Heartbeat { at: Millis::ZERO, item: 0 },
    Event::HeartbeatFailed { at: Millis::ZERO, item: 0, error: 0 },
    Event::ClaimLost { at: Millis::ZERO, item: 0, lapsed: false, unconfirmed_ms: 0 },
];

/// The log kinds by their record code: `LOG_KINDS[code].suffix()` is the
/// message after the runner name.
pub const LOG_KINDS: [LogKind; 2] = [LogKind::WorkFailed, LogKind::ClaimFailed];

fn ms(at: Millis) -> f64 {
    at.0 as f64
}

fn flag(value: bool) -> f64 {
    if value { 1.0 } else { 0.0 }
}

fn report_fields(report: PassReport) -> [f64; 4] {
    [
        f64::from(report.claimed),
        f64::from(report.performed),
        f64::from(report.failed),
        f64::from(report.claim_lost),
    ]
}

fn key_fields(key: ItemKey) -> [f64; 2] {
    [f64::from(key.slot), f64::from(key.generation)]
}

/// Writes `action` as one record into `record` (exactly [`STRIDE`] slots).
/// Answers false, writing nothing, for an event this host does not know
/// (the core's `Event` is `#[non_exhaustive]`): it is skipped.
pub fn encode(action: Action<u32>, record: &mut [f64]) -> bool {
    let mut put = |code: u8, fields: &[f64]| {
        record[0] = f64::from(code);
        record[1..=fields.len()].copy_from_slice(fields);
    };
    match action {
        Action::Claim { at } => put(op::CLAIM, &[ms(at)]),
        Action::Perform { key } => put(op::PERFORM, &key_fields(key)),
        Action::Renew { key, call, at } => {
            let [slot, generation] = key_fields(key);
            put(op::RENEW, &[slot, generation, f64::from(call), ms(at)]);
        }
        Action::Abort { key, lapsed } => {
            let [slot, generation] = key_fields(key);
            put(op::ABORT, &[slot, generation, flag(lapsed)]);
        }
        Action::Drop { key } => put(op::DROP, &key_fields(key)),
        Action::Log { kind, error } => {
            let code = if kind == LogKind::WorkFailed { 0.0 } else { 1.0 };
            put(op::LOG, &[code, f64::from(error)]);
        }
        Action::PassEnded { pass, report } => {
            let [c, p, f, l] = report_fields(report);
            put(op::PASS_ENDED, &[pass.0 as f64, c, p, f, l]);
        }
        Action::Emit(event) => return encode_event(event, put),
        // Asked only of a host that opted into the settle phase; the JS
        // runner's perform settles by itself (seed 000), so it never does.
        Action::Settle { .. } | Action::Release { .. } => return false,
    }
    true
}

fn encode_event(event: Event<u32>, mut put: impl FnMut(u8, &[f64])) -> bool {
    match event {
        Event::PassStart { at } => put(op::PASS_START, &[ms(at)]),
        Event::PassEnd { at, report, next_delay_ms } => {
            let [c, p, f, l] = report_fields(report);
            put(op::PASS_END, &[ms(at), c, p, f, l, next_delay_ms as f64]);
        }
        Event::Claimed { at, item } => put(op::CLAIMED, &[ms(at), f64::from(item)]),
        Event::ClaimFailed { at, error } => put(op::CLAIM_FAILED, &[ms(at), f64::from(error)]),
        Event::Performed { at, item, duration_ms } => {
            put(op::PERFORMED, &[ms(at), f64::from(item), duration_ms as f64]);
        }
        Event::ItemFailed { at, item, error } => {
            put(op::ITEM_FAILED, &[ms(at), f64::from(item), f64::from(error)]);
        }
        Event::Heartbeat { at, item } => put(op::HEARTBEAT, &[ms(at), f64::from(item)]),
        Event::HeartbeatFailed { at, item, error } => {
            put(op::HEARTBEAT_FAILED, &[ms(at), f64::from(item), f64::from(error)]);
        }
        Event::ClaimLost { at, item, lapsed, unconfirmed_ms } => {
            put(op::CLAIM_LOST, &[ms(at), f64::from(item), flag(lapsed), unconfirmed_ms as f64]);
        }
        _ => return false,
    }
    true
}

/// Writes the [`op::MORE`] record.
pub fn encode_more(record: &mut [f64]) {
    record[0] = f64::from(op::MORE);
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasehold_core::runner::PassId;

    fn record(action: Action<u32>) -> [f64; STRIDE] {
        let mut r = [0.0; STRIDE];
        assert!(encode(action, &mut r));
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
    fn event_opcodes_follow_the_events_table() {
        for (index, event) in EVENTS.iter().enumerate() {
            let r = record(Action::Emit(event.clone()));
            assert_eq!(r[0], f64::from(op::EVENT) + index as f64, "{}", event.type_name());
        }
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
