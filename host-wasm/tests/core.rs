//! Driving a runner through `Core` as the JS glue does: inputs are method
//! calls, outputs are records in the action buffer.

mod common;
use common::*;
use leasehold_wasm::protocol::{op, CAPACITY, CLAIM_TIME, SETTLE_TIME};

/// The code of the event of type `type_name`: its place in the core's listing after `op::EVENT`.
fn ev(type_name: &str) -> u8 {
    let index = leasehold_core::event::EVENT_KINDS.iter().position(|k| k.type_name == type_name).expect("an event type");
    op::EVENT + index as u8
}
use leasehold_wasm::Core;
use wasm_bindgen_test::wasm_bindgen_test;

fn core_with(configure: impl FnOnce(&wasm_bindgen::JsValue)) -> Core {
    let o = options();
    configure(&o);
    Core::new(&o).expect("valid options")
}

fn traced() -> Core {
    core_with(|o| set(o, "onEvent", func()))
}

#[wasm_bindgen_test]
fn a_pass_claims_performs_each_item_and_claims_again_until_nothing_is_left() {
    let mut core = core_with(|_| {});
    assert_eq!(core.tick(1000.0), 0.0, "the first pass is pass 0");
    assert_eq!(take(&mut core), vec![Record { op: op::CLAIM, fields: vec![1000.0, 0., 0., 0., 0., 0., 0.] }]);
    let slot = core.claim_found(1001.0);
    assert_eq!(slot, 0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![op::PERFORM]);
    assert_eq!(records[0].fields[..2], [0.0, 0.0], "slot 0, generation 0");
    core.performed(1002.0, 0, 0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![op::CLAIM]);
    assert_eq!(records[0].fields[0], 1002.0);
    core.claim_empty(1003.0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![op::PASS_ENDED]);
    assert_eq!(records[0].fields[..5], [0.0, 1.0, 1.0, 0.0, 0.0], "pass 0: claimed 1, performed 1");
}

#[wasm_bindgen_test]
fn without_a_sink_no_event_record_is_written() {
    let mut core = core_with(|_| {});
    core.tick(0.0);
    core.claim_found(1.0);
    core.failed(2.0, 0, 0, 0);
    core.claim_empty(3.0);
    let all = take(&mut core);
    assert!(all.iter().all(|r| r.op < op::EVENT), "{all:?}");
    assert!(ops(&all).contains(&op::LOG), "a failure is still logged");
}

#[wasm_bindgen_test]
fn with_a_sink_events_are_records_with_their_fields() {
    let mut core = traced();
    core.tick(1000.0);
    take(&mut core);
    core.claim_found(1001.0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![ev("pass-start"), ev("claimed"), op::PERFORM]);
    assert_eq!(records[0].fields[0], 1000.0, "pass-start carries the time read at the head of the pass");
    assert_eq!(records[1].fields[..2], [1001.0, 0.0], "claimed: at, item 0");
    core.performed(1008.0, 0, 0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![ev("performed"), op::CLAIM]);
    assert_eq!(records[0].fields[..3], [1008.0, 0.0, 7.0], "performed: at, item, durationMs");
    core.claim_empty(1009.0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![ev("pass-end"), op::PASS_ENDED]);
    assert_eq!(records[0].fields[..6], [1009.0, 1.0, 1.0, 0.0, 0.0, 1000.0], "at, report, nextDelayMs");
}

#[wasm_bindgen_test]
fn errors_travel_as_the_token_the_glue_chose() {
    let mut core = traced();
    core.tick(0.0);
    core.claim_found(1.0);
    take(&mut core);
    core.failed(2.0, 0, 0, 41);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![op::LOG, ev("item-failed"), op::CLAIM]);
    assert_eq!(records[0].fields[..2], [0.0, 41.0], "work failed, token 41");
    assert_eq!(records[1].fields[..3], [2.0, 0.0, 41.0], "item-failed: at, item, token");
    core.claim_failed(3.0, 42);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![op::LOG, ev("claim-failed"), ev("pass-end"), op::PASS_ENDED]);
    assert_eq!(records[0].fields[..2], [1.0, 42.0], "claim failed, token 42");
}

#[wasm_bindgen_test]
fn the_deadline_slot_holds_the_next_pass_of_a_started_loop_and_clears_on_stop() {
    let mut core = core_with(|o| set(o, "intervalMs", 250.0));
    assert_eq!(deadline(&core), None);
    core.start(1000.0);
    core.claim_empty(1004.0);
    assert_eq!(deadline(&core), Some(1254.0), "one interval after the pass ended");
    take(&mut core);
    core.timeout(1254.0);
    assert_eq!(ops(&take(&mut core)), vec![op::CLAIM], "the timer runs the next pass");
    core.stop();
    core.claim_empty(1260.0);
    take(&mut core);
    assert_eq!(deadline(&core), None, "a stopped loop schedules nothing");
}

/// A core with a heartbeat (stale after 3000 ms, renewals every 250 ms), and
/// an `onEvent` sink when `traced`, whose tick at `at` claimed one item; its
/// records so far taken.
fn holding_one_item(traced: bool, at: f64) -> Core {
    let mut core = core_with(|o| {
        set(o, "heartbeat", func());
        if traced {
            set(o, "onEvent", func());
        }
        set(o, "staleAfterMs", 3000.0);
        set(o, "heartbeatEveryMs", 250.0);
    });
    core.tick(at);
    core.claim_found(at);
    take(&mut core);
    core
}

#[wasm_bindgen_test]
fn a_renewal_answering_false_aborts_the_item_and_its_failure_counts_as_claim_lost() {
    let mut core = holding_one_item(true, 1000.0);
    assert_eq!(deadline(&core), Some(1250.0), "the first renewal is one interval after the claim");
    core.timeout(1250.0);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![op::RENEW]);
    let [slot, generation, call, at] = [records[0].fields[0], records[0].fields[1], records[0].fields[2], records[0].fields[3]];
    assert_eq!((slot, generation, at), (0.0, 0.0, 1250.0));
    core.renewed(1260.0, 0, 0, call as u32, false);
    let records = take(&mut core);
    assert_eq!(ops(&records), vec![ev("claim-lost"), op::ABORT]);
    assert_eq!(records[0].fields[..3], [1250.0, 0.0, 0.0], "claim-lost at the renewal's send time, not lapsed");
    assert_eq!(records[1].fields[..3], [0.0, 0.0, 0.0], "abort slot 0 gen 0, not lapsed");
    core.failed(1270.0, 0, 0, 3);
    let records = take(&mut core);
    assert!(!ops(&records).contains(&op::LOG), "a lost claim's failure is not logged");
    core.claim_empty(1280.0);
    let records = take(&mut core);
    let ended = records.iter().find(|r| r.op == op::PASS_ENDED).expect("pass ended");
    assert_eq!(ended.fields[1..5], [1.0, 0.0, 0.0, 1.0], "claimed 1, claimLost 1");
}

#[wasm_bindgen_test]
fn renewals_that_never_answer_lapse_the_claim() {
    let mut core = holding_one_item(false, 0.0);
    let mut aborts = Vec::new();
    while let Some(at) = deadline(&core) {
        core.timeout(at);
        aborts.extend(take(&mut core).into_iter().filter(|r| r.op == op::ABORT).map(|r| (at, r.fields[2])));
        if !aborts.is_empty() {
            break;
        }
    }
    // S = 3000, I = 250, K = 125: W = S − I − K − 1 = 2624, R = 250 → the hanging
    // renewal sent at 250 is given until the deadline plus R.
    assert_eq!(aborts, vec![(2874.0, 1.0)], "lapsed at W + R after the claim");
}

#[wasm_bindgen_test]
fn an_input_made_while_records_are_unread_appends_behind_them() {
    let mut core = core_with(|o| set(o, "concurrency", 2.0));
    core.tick(0.0);
    core.claim_found(1.0);
    core.wake(2.0); // during the pass: a follow-up is owed, nothing to do now
    core.claim_found(3.0);
    assert_eq!(ops(&take(&mut core)), vec![op::CLAIM, op::PERFORM, op::CLAIM, op::PERFORM]);
}

/// Runs the same inputs twice: consuming after each one, and never consuming
/// until the buffer fills. The records must come out the same, in order.
#[wasm_bindgen_test]
fn records_that_do_not_fit_wait_behind_a_more_record_and_keep_their_order() {
    let configure = |o: &wasm_bindgen::JsValue| {
        set(o, "onEvent", func());
        set(o, "concurrency", 64.0);
        set(o, "batchLimit", 1000.0);
    };
    let inputs = |core: &mut Core, after: &mut dyn FnMut(&mut Core)| {
        core.tick(0.0);
        after(core);
        for i in 0..64 {
            assert_eq!(core.claim_found(f64::from(i)), i);
            after(core);
        }
        for slot in 0..64 {
            core.performed(100.0, slot, 0);
            after(core);
        }
    };
    let mut reference = core_with(configure);
    let mut expected = Vec::new();
    inputs(&mut reference, &mut |core| expected.extend(take(core)));

    let mut core = core_with(configure);
    inputs(&mut core, &mut |_| {});
    let mut got = take(&mut core);
    assert_eq!(got.len(), CAPACITY, "the buffer filled");
    assert_eq!(got.last().map(|r| r.op), Some(op::MORE), "its last record says more are pending");
    got.pop();
    core.drain();
    got.extend(take(&mut core));
    assert!(expected.len() > CAPACITY);
    assert_eq!(got, expected);
}

#[wasm_bindgen_test]
fn answers_for_unknown_items_are_ignored() {
    let mut core = core_with(|_| {});
    core.tick(0.0);
    core.claim_found(1.0);
    take(&mut core);
    core.performed(2.0, 999, 0);
    core.performed(2.0, 70_000, 0);
    core.performed(2.0, 0, 5);
    core.renewed(2.0, 0, 0, 9, true);
    assert!(take(&mut core).is_empty());
    core.performed(3.0, 0, 0);
    assert_eq!(ops(&take(&mut core)), vec![op::CLAIM], "the real answer still counts");
}

#[wasm_bindgen_test]
fn times_are_truncated_and_unreadable_times_count_as_zero() {
    let mut core = traced();
    core.tick(1000.9);
    assert_eq!(take(&mut core)[0].fields[0], 1000.0);
    core.claim_found(f64::NAN);
    let records = take(&mut core);
    assert_eq!(records[1].op, ev("claimed"));
    assert_eq!(records[1].fields[0], 0.0);
    core.performed(-5.0, 0, 0);
    assert_eq!(take(&mut core)[0].fields[0], 0.0);
}

#[wasm_bindgen_test]
fn quiesce_and_dispose_answer_the_pass_to_wait_for_and_dispose_ends_ticks() {
    let mut core = core_with(|_| {});
    assert_eq!(core.quiesce(), -1.0, "nothing in flight");
    let pass = core.tick(0.0);
    assert_eq!(core.quiesce(), pass);
    assert_eq!(core.dispose(), pass);
    assert_eq!(core.dispose(), -1.0, "a second dispose waits for nothing");
    assert_eq!(core.tick(1.0), -1.0, "a disposed runner answers the idle report");
}

/// The header's time flags, as the glue reads them before answering a claim
/// (`CLAIM_TIME`) or a resolved perform (`SETTLE_TIME`): `[claim, settle]`.
fn time_flags(core: &Core) -> [f64; 2] {
    let buffer = core.buffer();
    [buffer[CLAIM_TIME], buffer[SETTLE_TIME]]
}

#[wasm_bindgen_test]
fn the_header_says_when_an_answers_time_is_read() {
    // One worker, no heartbeat, no sink: a claim's answer never has its time
    // read (the worker performs next); a settle always does (it claims next).
    let mut one = core_with(|_| {});
    assert_eq!(time_flags(&one), [0.0, 1.0], "as made");
    one.tick(0.0);
    assert_eq!(time_flags(&one), [0.0, 1.0], "a claim in flight");

    // A pool: read only when the answer issues a claim or ends the pass.
    let mut pool = core_with(|o| set(o, "concurrency", 2.0));
    pool.tick(0.0);
    assert_eq!(time_flags(&pool), [1.0, 0.0], "the claim's answer claims for the other worker; no settle can");
    pool.claim_found(1.0);
    assert_eq!(time_flags(&pool), [0.0, 0.0], "every worker busy, a claim in flight");
    pool.performed(2.0, 0, 0);
    assert_eq!(time_flags(&pool), [1.0, 0.0], "the freed worker waits: the answer claims for it");
    pool.claim_empty(3.0);
    assert_eq!(time_flags(&pool), [0.0, 1.0], "no claim in flight: the last settle ends the pass");

    // A sink (or a heartbeat) times every answer.
    let mut traced_pool = core_with(|o| {
        set(o, "concurrency", 2.0);
        set(o, "onEvent", func());
    });
    traced_pool.tick(0.0);
    traced_pool.claim_found(1.0);
    assert_eq!(time_flags(&traced_pool), [1.0, 1.0]);
}
