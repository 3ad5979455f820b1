//! Seed 003 `heartbeatLoop` as a state machine: pulses every interval after
//! the previous one, a lost fence interrupts with no lapse hook, failing
//! writes are tolerated and warned once per outage, an independent deadline
//! measured from the send time of the last confirmed renewal, one bounded
//! reconfirmation, lapse. Policy: I = 2000, W = 11000, R = 2000.

use leasehold_core::supervision::{Answer, Cadence, Reconfirm, Step, SupervisionPolicy, Supervisor};
use leasehold_core::Millis;

const LOOP: SupervisionPolicy = SupervisionPolicy {
    interval_ms: 2_000,
    tolerance_ms: 11_000,
    reconfirm_ms: 2_000,
    cadence: Cadence::AfterPulse,
    reconfirm: Reconfirm::Separate,
};

struct Sup {
    s: Supervisor,
    steps: Vec<Step>,
}

impl Sup {
    fn new() -> Sup {
        Sup::with(LOOP)
    }
    fn with(policy: SupervisionPolicy) -> Sup {
        Sup { s: Supervisor::new(policy, Millis(0), Millis(0)), steps: Vec::new() }
    }
    /// Every step the last input produced, in order (and kept in `steps`).
    fn polled(&mut self) -> Vec<Step> {
        let out: Vec<Step> = core::iter::from_fn(|| self.s.poll_output()).collect();
        self.steps.extend(out.iter().copied());
        out
    }
    fn timeout(&mut self, t: u64) -> Vec<Step> {
        self.s.handle_timeout(Millis(t));
        self.polled()
    }
    fn answer(&mut self, t: u64, call: u32, a: Answer) -> Vec<Step> {
        self.s.handle_answer(Millis(t), call, a);
        self.polled()
    }
    fn renew_call(steps: &[Step]) -> u32 {
        steps.iter().find_map(|s| match s { Step::Renew { call, .. } | Step::Reconfirm { call, .. } => Some(*call), _ => None }).expect("a call")
    }
}

#[test]
fn pulses_come_one_interval_after_the_previous_pulse_completed() {
    let mut s = Sup::new();
    assert_eq!(s.s.poll_timeout(), Some(Millis(2_000)));
    let c = Sup::renew_call(&s.timeout(2_000));
    assert_eq!(s.s.poll_timeout(), Some(Millis(11_000)), "while a pulse is in flight only the deadline is armed");
    s.answer(2_500, c, Answer::Updated);
    assert_eq!(s.s.poll_timeout(), Some(Millis(4_500)));
}

#[test]
fn a_lost_fence_interrupts_at_once_and_calls_no_lapse_hook() {
    let mut s = Sup::new();
    let c = Sup::renew_call(&s.timeout(2_000));
    assert_eq!(s.answer(2_010, c, Answer::Lost), vec![Step::Lost { at: Millis(2_000) }]);
    assert!(s.s.ended());
    assert_eq!(s.s.poll_timeout(), None);
    assert!(s.timeout(50_000).is_empty());
}

#[test]
fn a_failing_write_is_tolerated_and_warned_once_per_outage() {
    let mut s = Sup::new();
    let mut firsts = Vec::new();
    for (t, answer) in [(2_000, Answer::Failed), (4_010, Answer::Failed), (6_020, Answer::Updated), (8_030, Answer::Failed)] {
        let c = Sup::renew_call(&s.timeout(t));
        for step in s.answer(t + 10, c, answer) {
            if let Step::Failed { first_in_outage, .. } = step {
                firsts.push(first_in_outage);
            }
        }
    }
    assert_eq!(firsts, vec![true, false, true]);
    assert!(!s.s.ended());
}

#[test]
fn the_deadline_runs_from_the_send_time_of_the_last_confirmed_renewal_not_its_reply() {
    let mut s = Sup::new();
    let c = Sup::renew_call(&s.timeout(2_000));
    s.answer(9_000, c, Answer::Updated); // a slow reply: sent at 2000
    // The next pulse (11000) hangs; the deadline is 2000 + 11000 = 13000,
    // not 9000 + 11000.
    Sup::renew_call(&s.timeout(11_000));
    assert_eq!(s.s.poll_timeout(), Some(Millis(13_000)), "the last confirmed renewal is the one sent at 2000");
    let steps = s.timeout(13_000);
    assert!(matches!(steps.as_slice(), [Step::Reconfirm { at: Millis(13_000), .. }]), "{steps:?}");
}

#[test]
fn a_reconfirmation_runs_while_a_renewal_write_hangs_and_lets_supervision_go_on() {
    let mut s = Sup::new();
    let _hanging = Sup::renew_call(&s.timeout(2_000));
    let steps = s.timeout(11_000);
    let rc = Sup::renew_call(&steps);
    assert!(matches!(steps.as_slice(), [Step::Reconfirm { at: Millis(11_000), .. }]));
    assert_eq!(s.s.poll_timeout(), Some(Millis(13_000)), "bounded by one interval");
    let steps = s.answer(11_500, rc, Answer::Updated);
    assert!(steps.contains(&Step::Reconfirmed { unconfirmed_ms: 11_000, budget_ms: 10_500 }), "{steps:?}");
    assert!(!s.s.ended());
    // The first renewal still hangs, so no pulse is due: the one timeout is
    // the deadline, from the reconfirmation's send time (11000) + W.
    assert_eq!(s.s.poll_timeout(), Some(Millis(22_000)), "the reconfirmation is the last confirmed renewal");
}

#[test]
fn a_reconfirmation_that_times_out_lapses_with_the_unconfirmed_span() {
    let mut s = Sup::new();
    Sup::renew_call(&s.timeout(2_000));
    s.timeout(11_000);
    assert_eq!(s.timeout(13_000), vec![Step::Lapsed { unconfirmed_ms: 13_000 }]);
    assert!(s.s.ended());
}

#[test]
fn a_reconfirmation_that_raises_lapses() {
    let mut s = Sup::new();
    Sup::renew_call(&s.timeout(2_000));
    let rc = Sup::renew_call(&s.timeout(11_000));
    let steps = s.answer(11_100, rc, Answer::Failed);
    assert_eq!(steps.last(), Some(&Step::Lapsed { unconfirmed_ms: 11_100 }));
}

#[test]
fn a_reconfirmation_answering_lost_interrupts_without_lapse() {
    let mut s = Sup::new();
    Sup::renew_call(&s.timeout(2_000));
    let rc = Sup::renew_call(&s.timeout(11_000));
    assert_eq!(s.answer(11_100, rc, Answer::Lost), vec![Step::Lost { at: Millis(11_000) }]);
    assert!(!s.steps.iter().any(|st| matches!(st, Step::Lapsed { .. })));
}

#[test]
fn a_failed_receipt_hook_lapses_the_lease() {
    let mut s = Sup::new();
    Sup::renew_call(&s.timeout(2_000));
    let rc = Sup::renew_call(&s.timeout(11_000));
    s.answer(11_100, rc, Answer::Updated);
    s.s.handle_receipt_failed(Millis(11_200));
    assert_eq!(s.polled(), vec![Step::Lapsed { unconfirmed_ms: 200 }]);
}

#[test]
fn steps_not_yet_polled_wait_in_order_for_the_next_poll() {
    let mut s = Sup::new();
    s.s.handle_timeout(Millis(2_000));
    let Some(Step::Renew { call, .. }) = s.s.poll_output() else { panic!("a renewal is due") };
    // Two inputs, no poll between them: both inputs' steps come out, in order.
    s.s.handle_answer(Millis(2_100), call, Answer::Failed);
    s.s.handle_timeout(Millis(11_000));
    let steps = s.polled();
    assert!(matches!(steps[0], Step::Failed { first_in_outage: true, .. }), "{steps:?}");
    assert!(matches!(steps[1], Step::Renew { .. } | Step::Reconfirm { .. }), "{steps:?}");
    assert_eq!(s.s.poll_output(), None, "each step once");
}

#[test]
fn the_steps_of_two_unpolled_inputs_one_making_the_most_wait_whole_for_one_poll() {
    let mut s = Sup::new();
    let hanging = Sup::renew_call(&s.timeout(2_000));
    let rc = Sup::renew_call(&s.timeout(11_000));
    // The reconfirmation's answer makes the most steps one input makes;
    // the hanging renewal's answer one more; nothing is polled between.
    s.s.handle_answer(Millis(11_500), rc, Answer::Updated);
    s.s.handle_answer(Millis(11_600), hanging, Answer::Updated);
    assert_eq!(
        s.polled(),
        vec![
            Step::Confirmed { call: rc, at: Millis(11_000) },
            Step::Reconfirmed { unconfirmed_ms: 11_000, budget_ms: 10_500 },
            Step::Confirmed { call: hanging, at: Millis(2_000) },
        ]
    );
}

#[test]
fn two_overdue_timers_after_a_stall_reconfirm_once() {
    let mut s = Sup::new();
    // A stall: nothing ran until 20000; both the pulse and the deadline are overdue.
    let first = s.timeout(20_000);
    let second = s.timeout(20_000);
    let reconfirms = first.iter().chain(second.iter()).filter(|st| matches!(st, Step::Reconfirm { .. })).count();
    assert_eq!(reconfirms, 1);
    assert!(!first.iter().chain(second.iter()).any(|st| matches!(st, Step::Renew { .. })), "no pulse while reconfirming");
}

#[test]
fn a_pulse_due_during_a_reconfirmation_goes_out_once_it_decided() {
    let mut s = Sup::new();
    // A stall past both timers: the reconfirmation holds the due pulse back.
    let rc = Sup::renew_call(&s.timeout(20_000));
    assert_eq!(s.s.poll_timeout(), Some(Millis(22_000)), "only the reconfirm bound is armed");
    s.answer(20_100, rc, Answer::Updated);
    assert_eq!(s.s.poll_timeout(), Some(Millis(2_000)), "the held pulse is overdue");
    assert!(matches!(s.timeout(20_100).as_slice(), [Step::Renew { at: Millis(20_100), .. }]));
}

#[test]
fn a_grid_runner_skips_missed_slots_after_a_stall() {
    let policy = SupervisionPolicy { cadence: Cadence::Grid, reconfirm: Reconfirm::Renewal, ..LOOP };
    let mut s = Sup::with(policy);
    assert_eq!(s.timeout(7_500).len(), 1, "one renewal for the missed slots 2000, 4000, 6000");
    assert_eq!(s.s.poll_timeout(), Some(Millis(8_000)), "the grid goes on at the next point; that slot will be skipped if the renewal is still in flight");
}

#[test]
fn a_runner_reconfirmation_handled_late_keeps_the_lease_bound() {
    // Grid + Renewal (the runner): W = 11000, R = 2000, so the decision is due
    // by 13000 however late the deadline is handled.
    let policy = SupervisionPolicy { cadence: Cadence::Grid, reconfirm: Reconfirm::Renewal, ..LOOP };
    let mut s = Sup::with(policy);
    s.timeout(2_000); // a renewal, which hangs
    s.timeout(12_000); // the deadline, 1000 ms late
    assert_eq!(s.s.poll_timeout(), Some(Millis(13_000)), "deadline + R, not handled time + R");
    assert_eq!(s.timeout(13_000), vec![Step::Lapsed { unconfirmed_ms: 13_000 }]);
}

#[test]
fn a_runner_deadline_handled_after_its_bound_lapses_at_once() {
    let policy = SupervisionPolicy { cadence: Cadence::Grid, reconfirm: Reconfirm::Renewal, ..LOOP };
    let mut s = Sup::with(policy);
    assert_eq!(s.timeout(20_000), vec![Step::Lapsed { unconfirmed_ms: 20_000 }], "no renewal is sent past the bound");
}
