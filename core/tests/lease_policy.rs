//! The lease policy and its validator (seed 003 `Heartbeat.ts` constants, and
//! our relations between them): a table of accepted sets, and each relation
//! broken by exactly one millisecond, refused with its message.

use leasehold_core::lease::{LeasePolicy, PolicyError, PolicyWarning};
use leasehold_core::supervision::{Cadence, Reconfirm, SupervisionPolicy};

const fn policy(interval: u64, skew: u64, stale_after: u64, tolerance: u64) -> LeasePolicy {
    LeasePolicy {
        heartbeat_interval_ms: interval,
        skew_allowance_ms: skew,
        stale_after_ms: stale_after,
        write_tolerance_ms: tolerance,
        exit_grace_ms: 0,
    }
}

#[test]
fn defaults_are_the_seed_constants() {
    assert_eq!(LeasePolicy::DEFAULT, policy(2_000, 1_000, 15_000, 11_000));
    assert_eq!(LeasePolicy::default(), LeasePolicy::DEFAULT);
}

#[test]
fn reconfirm_bound_is_tolerance_plus_one_interval() {
    assert_eq!(LeasePolicy::DEFAULT.reconfirm_bound_ms(), 13_000);
    assert_eq!(policy(u64::MAX, 1, 1, 1).reconfirm_bound_ms(), u64::MAX);
}

#[test]
fn supervision_pulses_every_interval_and_bounds_the_reconfirmation_by_one_interval() {
    let p = policy(500, 250, 4_000, 3_000);
    let s = p.supervision(Cadence::AfterPulse, Reconfirm::Separate);
    assert_eq!(
        s,
        SupervisionPolicy {
            interval_ms: 500,
            tolerance_ms: 3_000,
            reconfirm_ms: 500,
            cadence: Cadence::AfterPulse,
            reconfirm: Reconfirm::Separate,
        }
    );
    assert_eq!(s.tolerance_ms + s.reconfirm_ms, p.reconfirm_bound_ms());
}

#[test]
fn lease_liveness_takes_the_policy_stale_after() {
    assert_eq!(policy(500, 250, 4_000, 3_000).lease_liveness().stale_after_ms, 4_000);
}

/// Every default and documented example, and every boundary the relations
/// allow exactly, with the warnings each raises.
#[test]
fn validator_accepts_safe_sets() {
    let table: &[(&str, LeasePolicy, &[PolicyWarning])] = &[
        ("the defaults", LeasePolicy::DEFAULT, &[]),
        ("the documented fast-reclaim example", policy(500, 250, 4_000, 3_000), &[]),
        ("lapse bound one ms under stale-after", policy(2_000, 1_000, 15_000, 11_999), &[]),
        (
            "stale-after one ms over two intervals",
            policy(2_000, 1, 4_001, 1_000),
            &[PolicyWarning::WriteToleranceUnderInterval { write_tolerance_ms: 1_000, heartbeat_interval_ms: 2_000 }],
        ),
        ("tolerance exactly one interval", policy(2_000, 1_000, 15_000, 2_000), &[]),
        (
            "tolerance one ms under one interval",
            policy(2_000, 1_000, 15_000, 1_999),
            &[PolicyWarning::WriteToleranceUnderInterval { write_tolerance_ms: 1_999, heartbeat_interval_ms: 2_000 }],
        ),
        ("the smallest safe set", policy(1, 1, 4, 1), &[]),
        ("for_stale_after(15_000)", LeasePolicy::for_stale_after(15_000).unwrap(), &[]),
    ];
    for (name, set, warnings) in table {
        assert_eq!(set.validate().as_deref(), Ok(*warnings), "{name}: {set:?}");
    }
}

/// From an accepted boundary set, one field moved by one millisecond breaks
/// exactly one relation; the error names it with the numbers.
#[test]
fn validator_refuses_each_relation_broken_by_one_millisecond() {
    let lapse_edge = policy(2_000, 1_000, 15_000, 11_999);
    let interval_edge = policy(2_000, 1, 4_001, 1_000);
    assert!(lapse_edge.validate().is_ok() && interval_edge.validate().is_ok());

    let mut table: Vec<(LeasePolicy, PolicyError, String)> = [
        (
            LeasePolicy { stale_after_ms: 4_000, ..interval_edge },
            PolicyError::StaleAfterUnderTwoIntervals { stale_after_ms: 4_000, heartbeat_interval_ms: 2_000 },
            "lease policy: stale_after_ms (4000) must be more than 2 * heartbeat_interval_ms \
             (2 * 2000 = 4000): one missed pulse would make a live owner's run stealable",
        ),
        (
            LeasePolicy { heartbeat_interval_ms: 2_001, ..interval_edge },
            PolicyError::StaleAfterUnderTwoIntervals { stale_after_ms: 4_001, heartbeat_interval_ms: 2_001 },
            "lease policy: stale_after_ms (4001) must be more than 2 * heartbeat_interval_ms \
             (2 * 2001 = 4002): one missed pulse would make a live owner's run stealable",
        ),
    ]
    .map(|(set, error, message)| (set, error, message.to_owned()))
    .into();
    // Every span is positive.
    for (field, set) in [
        ("heartbeat_interval_ms", LeasePolicy { heartbeat_interval_ms: 0, ..LeasePolicy::DEFAULT }),
        ("skew_allowance_ms", LeasePolicy { skew_allowance_ms: 0, ..LeasePolicy::DEFAULT }),
        ("stale_after_ms", LeasePolicy { stale_after_ms: 0, ..LeasePolicy::DEFAULT }),
        ("write_tolerance_ms", LeasePolicy { write_tolerance_ms: 0, ..LeasePolicy::DEFAULT }),
    ] {
        table.push((set, PolicyError::NotPositive { field }, format!("lease policy: {field} must be positive, got 0")));
    }
    // The lapse relation W + I + K < S, broken by one millisecond on each of its four spans.
    for (set, (w, i, k, s)) in [
        (LeasePolicy { write_tolerance_ms: 12_000, ..lapse_edge }, (12_000, 2_000, 1_000, 15_000)),
        (LeasePolicy { heartbeat_interval_ms: 2_001, ..lapse_edge }, (11_999, 2_001, 1_000, 15_000)),
        (LeasePolicy { skew_allowance_ms: 1_001, ..lapse_edge }, (11_999, 2_000, 1_001, 15_000)),
        (LeasePolicy { stale_after_ms: 14_999, ..lapse_edge }, (11_999, 2_000, 1_000, 14_999)),
    ] {
        let message = format!(
            "lease policy: write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms \
             ({w} + {i} + {k} = {}) must be less than stale_after_ms ({s}): the owner's \
             decision to lapse must fall at least the skew allowance before a peer may steal",
            w + i + k
        );
        table.push((set, lapse(w, i, k, s), message));
    }
    for (set, error, message) in &table {
        assert_eq!(set.validate(), Err(*error), "{set:?}");
        assert_eq!(error.to_string(), *message);
    }
}

fn lapse(tolerance: u64, interval: u64, skew: u64, stale_after: u64) -> PolicyError {
    PolicyError::LapseNotBeforeSteal {
        write_tolerance_ms: tolerance,
        heartbeat_interval_ms: interval,
        skew_allowance_ms: skew,
        exit_grace_ms: 0,
        stale_after_ms: stale_after,
    }
}

#[test]
fn validator_reports_the_first_broken_relation_in_documented_order() {
    // Breaks relations 1 and 3: relation 1 is reported.
    assert_eq!(policy(0, 1, 1, 1).validate(), Err(PolicyError::NotPositive { field: "heartbeat_interval_ms" }));
    // Breaks relations 2 and 3: relation 2 is reported.
    assert_eq!(
        policy(10, 5, 15, 10).validate(),
        Err(PolicyError::StaleAfterUnderTwoIntervals { stale_after_ms: 15, heartbeat_interval_ms: 10 })
    );
}

#[test]
fn validator_sums_without_overflow() {
    let huge = policy(u64::MAX / 4, u64::MAX, u64::MAX, u64::MAX);
    let error = huge.validate().unwrap_err();
    assert_eq!(error, lapse(u64::MAX, u64::MAX / 4, u64::MAX, u64::MAX));
    let sum = u128::from(u64::MAX) * 2 + u128::from(u64::MAX / 4);
    assert!(error.to_string().contains(&format!("= {sum})")), "{error}");
    assert!(policy(u64::MAX, 1, u64::MAX, 1).validate().unwrap_err().to_string().contains(&format!(
        "(2 * {} = {})",
        u64::MAX,
        u128::from(u64::MAX) * 2
    )));
}

#[test]
fn warning_names_tolerance_and_interval() {
    let warnings = policy(2_000, 1_000, 15_000, 1_999).validate().unwrap();
    assert_eq!(
        warnings[0].to_string(),
        "lease policy: write_tolerance_ms (1999) is under one heartbeat_interval_ms (2000): \
         every renewal becomes a reconfirmation and one failed write lapses the lease"
    );
}

#[test]
fn for_stale_after_scales_the_default_proportions() {
    assert_eq!(LeasePolicy::for_stale_after(15_000), Ok(LeasePolicy::DEFAULT));
    assert_eq!(LeasePolicy::for_stale_after(30_000), Ok(policy(4_000, 2_000, 30_000, 22_000)));
    assert_eq!(LeasePolicy::for_stale_after(15), Ok(policy(2, 1, 15, 11)));
    // Rounded down: 1_000 * 2 / 15 = 133.3…, 1_000 / 15 = 66.6…, 1_000 * 11 / 15 = 733.3….
    assert_eq!(LeasePolicy::for_stale_after(1_000), Ok(policy(133, 66, 1_000, 733)));
}

#[test]
fn for_stale_after_is_always_safe_and_warning_free_from_fifteen_ms() {
    let large = [u64::MAX, u64::MAX - 1, u64::MAX / 11, 1 << 40, 86_400_000];
    for stale_after in (15..=5_000).chain(large) {
        let set = LeasePolicy::for_stale_after(stale_after).unwrap_or_else(|e| panic!("{stale_after}: {e}"));
        assert_eq!(set.stale_after_ms, stale_after);
        assert_eq!(set.validate(), Ok(vec![]), "{set:?}");
    }
}

#[test]
fn for_stale_after_under_fifteen_ms_names_the_field_that_rounds_to_zero() {
    assert_eq!(LeasePolicy::for_stale_after(14), Err(PolicyError::NotPositive { field: "skew_allowance_ms" }));
    assert_eq!(LeasePolicy::for_stale_after(7), Err(PolicyError::NotPositive { field: "heartbeat_interval_ms" }));
    assert_eq!(LeasePolicy::for_stale_after(0), Err(PolicyError::NotPositive { field: "heartbeat_interval_ms" }));
}

#[cfg(feature = "std")]
#[test]
fn policy_error_is_a_std_error() {
    let error: Box<dyn std::error::Error> = Box::new(PolicyError::NotPositive { field: "stale_after_ms" });
    assert_eq!(error.to_string(), "lease policy: stale_after_ms must be positive, got 0");
}

// ---- the exit grace: the whole exit fits in the lease -----------------------

#[test]
fn an_exit_grace_that_reaches_the_steal_instant_is_refused_like_any_lapse_too_late() {
    // 11 999 + 2 000 + 1 000 = 14 999: no millisecond is left for a grace.
    let edge = policy(2_000, 1_000, 15_000, 11_999);
    let with_grace = LeasePolicy { exit_grace_ms: 1, ..edge };
    let error = with_grace.validate().unwrap_err();
    assert_eq!(
        error,
        PolicyError::LapseNotBeforeSteal {
            write_tolerance_ms: 11_999,
            heartbeat_interval_ms: 2_000,
            skew_allowance_ms: 1_000,
            exit_grace_ms: 1,
            stale_after_ms: 15_000,
        }
    );
    assert_eq!(
        error.to_string(),
        "lease policy: write_tolerance_ms + heartbeat_interval_ms + skew_allowance_ms + exit_grace_ms \
         (11999 + 2000 + 1000 + 1 = 15000) must be less than stale_after_ms (15000): the owner's work \
         must have ended at least the skew allowance before a peer may steal"
    );
    // Taken out of the tolerance instead, it fits.
    assert_eq!(LeasePolicy { write_tolerance_ms: 11_998, ..with_grace }.validate(), Ok(vec![]));
}

#[test]
fn a_runners_write_tolerance_is_what_is_left_after_the_grace_strictly() {
    // S = 30 000, I = 10 000, K = 5 000, G = 5 000: W = 9 999.
    let p = LeasePolicy::for_runner(30_000, 10_000, 5_000, Some(5_000)).unwrap();
    assert_eq!((p.write_tolerance_ms, p.exit_grace_ms), (9_999, 5_000));
    assert_eq!(p.write_tolerance_ms + p.heartbeat_interval_ms + p.skew_allowance_ms + p.exit_grace_ms, 30_000 - 1);
    // A work that ends itself (G = 0) keeps the whole tolerance, one ms under the equality.
    let js = LeasePolicy::for_runner(3_000, 250, 125, Some(0)).unwrap();
    assert_eq!((js.write_tolerance_ms, js.exit_grace_ms), (2_624, 0));
}

#[test]
fn the_default_grace_is_the_smaller_of_five_seconds_and_what_fits() {
    // The room leaves the lease two intervals: 3 000 − 500 − 2 · 1 000.
    assert_eq!(LeasePolicy::grace_room_ms(3_000, 1_000, 500), 500);
    let short = LeasePolicy::for_runner(3_000, 1_000, 500, None).unwrap();
    assert_eq!((short.exit_grace_ms, short.write_tolerance_ms), (500, 999));
    let long = LeasePolicy::for_runner(30_000, 10_000, 5_000, None).unwrap();
    assert_eq!(long.exit_grace_ms, leasehold_core::lease::DEFAULT_EXIT_GRACE_MS);
    assert_eq!(long.exit_grace_ms, 5_000);
    // Nothing fits: the default is no grace at all, never a refusal.
    assert_eq!(LeasePolicy::grace_room_ms(1_000, 499, 400), 0);
    assert_eq!(LeasePolicy::for_runner(1_000, 499, 400, None).unwrap().exit_grace_ms, 0);
}

#[test]
fn a_given_grace_longer_than_the_room_is_refused_naming_the_room() {
    assert!(LeasePolicy::for_runner(3_000, 1_000, 500, Some(500)).is_ok());
    let error = LeasePolicy::for_runner(3_000, 1_000, 500, Some(501)).unwrap_err();
    assert_eq!(
        error,
        PolicyError::GraceDoesNotFit {
            exit_grace_ms: 501,
            room_ms: 500,
            stale_after_ms: 3_000,
            heartbeat_interval_ms: 1_000,
            skew_allowance_ms: 500,
        }
    );
    assert_eq!(
        error.to_string(),
        "lease policy: exit_grace_ms (501) does not fit in stale_after_ms (3000) with \
         heartbeat_interval_ms (1000) and skew_allowance_ms (500): at most 500 fits"
    );
}

#[test]
fn every_runner_policy_ends_its_work_before_a_peer_may_reclaim() {
    use leasehold_core::Millis;
    for stale in [4, 100, 3_000, 30_000, 86_400_000] {
        for interval in [1, stale / 10, stale / 3] {
            let skew = (interval / 2).max(1);
            for grace in [None, Some(0), Some(LeasePolicy::grace_room_ms(stale, interval, skew))] {
                let Ok(p) = LeasePolicy::for_runner(stale, interval, skew, grace) else { continue };
                let t = Millis(1_000_000);
                assert!(p.exit_deadline(t) < p.reclaim_from(t), "{p:?}");
                assert_eq!(p.exit_deadline(t).since(t), p.write_tolerance_ms + interval + p.exit_grace_ms);
            }
        }
    }
}

#[test]
fn a_claim_may_be_handed_over_unrenewed_for_at_most_100_ms_and_half_the_skew_allowance() {
    // Half of K is what is left for the clocks' skew: the runner measures the lease from its
    // claim, so a stamp `d` earlier moves its exit deadline `d` past the store's.
    assert_eq!(LeasePolicy::DEFAULT.claim_age_tolerance_ms(), 100);
    assert_eq!(policy(250, 200, 3_000, 2_000).claim_age_tolerance_ms(), 100);
    assert_eq!(policy(150, 75, 600, 300).claim_age_tolerance_ms(), 37);
    assert_eq!(policy(2, 1, 100, 50).claim_age_tolerance_ms(), 0);
    assert_eq!(leasehold_core::lease::MAX_CLAIM_AGE_TOLERANCE_MS, 100);
    // A runner's: K is half the cadence unless given.
    let runner = LeasePolicy::for_runner(600, 150, 75, None).unwrap();
    assert_eq!(runner.claim_age_tolerance_ms(), 37);
}
