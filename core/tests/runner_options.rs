//! Seed 000 options, normalised as the seed does, plus our refusals of values
//! that would make a hot loop or an unsafe lease.

use leasehold_core::backoff::Backoff;
use leasehold_core::lease::{LeasePolicy, PolicyError};
use leasehold_core::options::{AbortGrace, OptionError, OptionNames, OptionsInput};
use leasehold_core::supervision::{Cadence, Reconfirm};

fn base() -> OptionsInput {
    OptionsInput { interval_ms: 1000.0, stale_after_ms: 30_000.0, ..OptionsInput::default() }
}

#[test]
fn interval_is_at_least_one_and_whole() {
    let c = OptionsInput { interval_ms: 0.0, ..base() }.validate().unwrap();
    assert_eq!(c.interval_ms, 1);
    let c = OptionsInput { interval_ms: 12.9, ..base() }.validate().unwrap();
    assert_eq!(c.interval_ms, 12);
}

#[test]
fn a_non_finite_interval_is_a_type_error_naming_the_option() {
    let e = OptionsInput { interval_ms: f64::NAN, ..base() }.validate().unwrap_err();
    assert!(e.is_type_error());
    assert_eq!(e.to_string(), "intervalMs must be a finite number, got NaN");
    let e = OptionsInput { interval_ms: f64::INFINITY, ..base() }.validate().unwrap_err();
    assert!(matches!(e, OptionError::NotFinite { option: "intervalMs", .. }));
    assert_eq!(e.to_string(), "intervalMs must be a finite number, got Infinity", "spelled as JS spells it");
    let e = OptionsInput { stale_after_ms: f64::NEG_INFINITY, ..base() }.validate().unwrap_err();
    assert_eq!(e.to_string(), "staleAfterMs must be a finite number, got -Infinity");
}

#[test]
fn negative_spans_and_counts_are_range_errors_naming_the_option() {
    let cases: [(&str, OptionsInput); 4] = [
        ("intervalMs", OptionsInput { interval_ms: -1.0, ..base() }),
        ("staleAfterMs", OptionsInput { stale_after_ms: -5.0, ..base() }),
        ("heartbeatEveryMs", OptionsInput { heartbeat_every_ms: Some(-1.0), ..base() }),
        ("batchLimit", OptionsInput { batch_limit: Some(-2.0), ..base() }),
    ];
    for (name, input) in cases {
        let e = input.validate().unwrap_err();
        assert!(!e.is_type_error(), "{name}");
        assert!(e.to_string().starts_with(&format!("{name} must not be negative")), "{e}");
    }
}

#[test]
fn backoff_fields_must_be_finite_and_not_negative() {
    for (b, name) in [
        (Backoff { initial_ms: f64::NAN, max_ms: 1.0, multiplier: 2.0 }, "backoff.initialMs"),
        (Backoff { initial_ms: 1.0, max_ms: -1.0, multiplier: 2.0 }, "backoff.maxMs"),
        (Backoff { initial_ms: 1.0, max_ms: 1.0, multiplier: f64::INFINITY }, "backoff.multiplier"),
    ] {
        let e = OptionsInput { backoff: Some(b), ..base() }.validate().unwrap_err();
        assert!(e.to_string().starts_with(name), "{e}");
    }
}

#[test]
fn heartbeat_every_defaults_to_a_third_of_stale_never_under_250() {
    assert_eq!(base().validate().unwrap().heartbeat_every_ms, 10_000);
    let c = OptionsInput { stale_after_ms: 600.0, ..base() }.validate().unwrap();
    assert_eq!(c.heartbeat_every_ms, 250);
    let c = OptionsInput { heartbeat_every_ms: Some(0.0), ..base() }.validate().unwrap();
    assert_eq!(c.heartbeat_every_ms, 1, "at least 1");
}

#[test]
fn with_a_heartbeat_a_cadence_of_half_the_stale_window_or_slower_is_refused() {
    let e = OptionsInput { heartbeat: true, heartbeat_every_ms: Some(15_000.0), ..base() }.validate().unwrap_err();
    assert!(matches!(e, OptionError::CadenceTooSlow { heartbeat_every_ms: 15_000, stale_after_ms: 30_000, .. }));
    assert!(e.to_string().contains("heartbeatEveryMs"));
    assert!(OptionsInput { heartbeat: true, heartbeat_every_ms: Some(14_999.0), ..base() }.validate().is_ok());
    // Without a heartbeat the cadence is never used, so no such rule applies.
    assert!(OptionsInput { heartbeat_every_ms: Some(15_000.0), ..base() }.validate().is_ok());
}

/// One rule, the lease policy's relation 2: the runner's options and the
/// lease policy's validator draw the line at the same millisecond, `S > 2·I`.
#[test]
fn the_options_and_the_lease_validator_refuse_a_cadence_of_half_the_window_alike() {
    for stale in [30_000_u64, 30_001, 1_001] {
        let slowest_accepted = (stale - 1) / 2;
        for (every, accepted) in [(slowest_accepted, true), (slowest_accepted + 1, false)] {
            let lease = LeasePolicy {
                heartbeat_interval_ms: every,
                skew_allowance_ms: 1,
                stale_after_ms: stale,
                write_tolerance_ms: stale - every - 2,
                exit_grace_ms: 0,
            };
            let options = OptionsInput {
                heartbeat: true,
                stale_after_ms: stale as f64,
                heartbeat_every_ms: Some(every as f64),
                heartbeat_skew_ms: Some(1.0),
                ..base()
            }
            .validate();
            let case = format!("S = {stale}, I = {every}");
            if accepted {
                assert!(lease.validate().is_ok(), "{case}: {:?}", lease.validate());
                assert!(options.is_ok(), "{case}: {options:?}");
            } else {
                let refused = PolicyError::StaleAfterUnderTwoIntervals { stale_after_ms: stale, heartbeat_interval_ms: every };
                assert_eq!(lease.validate(), Err(refused), "{case}");
                assert!(matches!(options, Err(OptionError::CadenceTooSlow { .. })), "{case}: {options:?}");
            }
        }
    }
}

#[test]
fn supervision_parameters_follow_the_documented_relations() {
    let c = OptionsInput { heartbeat: true, ..base() }.validate().unwrap();
    let lease = c.lease.unwrap();
    assert_eq!((lease.heartbeat_interval_ms, lease.skew_allowance_ms, lease.stale_after_ms), (10_000, 5_000, 30_000));
    // A reconfirmation is bounded by one interval.
    assert_eq!(lease.supervision(Cadence::Grid, Reconfirm::Renewal).reconfirm_ms, 10_000);
    // Strictly inside the lease: W + I + K < S, by one millisecond (a JS
    // perform is never dropped, so there is no grace to make room for).
    assert_eq!(lease.write_tolerance_ms, 30_000 - 10_000 - 5_000 - 1);
    assert_eq!((lease.exit_grace_ms, c.abort_grace_ms), (0, None));
}

#[test]
fn a_skew_allowance_that_leaves_no_write_tolerance_is_refused() {
    let e = OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(20_000.0), ..base() }.validate().unwrap_err();
    assert!(matches!(e, OptionError::NoWriteTolerance { .. }));
    assert!(e.to_string().starts_with("heartbeatSkewMs"));
    // W = 30 000 − 10 000 − K − 1 must stay above 0: the equality W + I + K = S
    // is refused, as the lease policy's validator refuses it.
    let edge = OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(19_999.0), ..base() }.validate();
    assert!(matches!(edge, Err(OptionError::NoWriteTolerance { .. })), "{edge:?}");
    let c = OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(19_998.0), ..base() }.validate().unwrap();
    assert_eq!(c.lease.unwrap().write_tolerance_ms, 1);
}

#[test]
fn the_runner_and_the_lease_policy_give_one_verdict_on_every_set() {
    for skew in [1, 2_500, 5_000, 19_998, 19_999, 20_000] {
        for grace in [AbortGrace::Never, AbortGrace::Default, AbortGrace::Ms(4_999.0), AbortGrace::Ms(10_000.0)] {
            let input = OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(skew as f64), abort_grace: grace, ..base() };
            let ms = match grace {
                AbortGrace::Never => Some(0),
                AbortGrace::Default => None,
                AbortGrace::Ms(v) => Some(v as u64),
            };
            let policy = LeasePolicy::for_runner(30_000, 10_000, skew, ms);
            match input.validate() {
                Ok(c) => {
                    let p = policy.unwrap_or_else(|e| panic!("skew {skew} {grace:?}: the runner accepted what {e}"));
                    assert_eq!(c.lease, Some(p));
                    assert_eq!(p.validate().map(drop), Ok(()));
                }
                Err(e) => assert!(policy.is_err(), "skew {skew} {grace:?}: refused ({e}) what the policy accepts"),
            }
        }
    }
}

#[test]
fn a_zero_skew_allowance_is_refused_as_the_lease_policy_refuses_it() {
    let e = OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(0.0), ..base() }.validate().unwrap_err();
    assert!(matches!(e, OptionError::ZeroSkew { .. }));
    assert_eq!(e.to_string(), "heartbeatSkewMs must be above 0: no two hosts' clocks agree to the millisecond");
}

#[test]
fn a_skew_allowance_left_to_default_to_zero_is_refused_naming_the_cadence_that_was_given() {
    // K defaults to ⌊I / 2⌋: a cadence of 1 ms (or 0, which counts as 1) leaves it 0. The
    // user gave only the cadence, so the refusal names it, not an option they never set.
    for every in [0.0, 1.0] {
        let input = OptionsInput { heartbeat: true, heartbeat_every_ms: Some(every), ..base() };
        let e = input.validate().unwrap_err();
        assert!(matches!(e, OptionError::ZeroSkew { skew_from_heartbeat_every_ms: Some(1), .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "heartbeatEveryMs (1) must be at least 2 when heartbeatSkewMs is left out: the skew allowance \
             defaults to half of it, and must be above 0 (no two hosts' clocks agree to the millisecond)"
        );
    }
    assert!(OptionsInput { heartbeat: true, heartbeat_every_ms: Some(2.0), ..base() }.validate().is_ok());
}

#[test]
fn a_stale_window_too_short_for_the_default_cadence_is_refused_saying_the_cadence_is_the_default() {
    // S = 300 and no cadence given: I defaults to max(250, ⌊S / 3⌋) = 250, not under S / 2.
    let input = OptionsInput { heartbeat: true, stale_after_ms: 300.0, ..base() };
    let e = input.validate().unwrap_err();
    assert!(matches!(e, OptionError::CadenceTooSlow { heartbeat_every_ms: 250, stale_after_ms: 300, defaulted: true, .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "heartbeatEveryMs (250, its default: the larger of 250 and a third of staleAfterMs) must be under \
         half of staleAfterMs (300) so two renewals fit in the stale window: give a heartbeatEveryMs under \
         150, or a staleAfterMs above 500"
    );
    // In a window of 2 or less no cadence is under half of it: only the window is said to
    // lengthen (it said "give a heartbeatEveryMs under 0").
    for (stale, said) in [(0.0, "0"), (2.0, "2")] {
        let e = OptionsInput { stale_after_ms: stale, ..input }.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "heartbeatEveryMs (250, its default: the larger of 250 and a third of staleAfterMs) must be under \
                 half of staleAfterMs ({said}) so two renewals fit in the stale window: give a staleAfterMs above 500"
            )
        );
    }
    let e = OptionsInput { stale_after_ms: 3.0, ..input }.validate().unwrap_err();
    assert!(e.to_string().ends_with("give a heartbeatEveryMs under 2, or a staleAfterMs above 500"), "{e}");
    // A cadence that was given is named as given.
    let e = OptionsInput { heartbeat_every_ms: Some(250.0), ..input }.validate().unwrap_err();
    assert_eq!(
        e.to_string(),
        "heartbeatEveryMs (250) must be under half of staleAfterMs (300) so two renewals fit in the stale window"
    );
}

#[test]
fn the_default_abort_grace_is_the_smaller_of_five_seconds_and_what_fits() {
    let long = OptionsInput { heartbeat: true, abort_grace: AbortGrace::Default, ..base() }.validate().unwrap();
    assert_eq!(long.abort_grace_ms, Some(5_000));
    assert_eq!(long.lease.unwrap().write_tolerance_ms, 30_000 - 10_000 - 5_000 - 5_000 - 1);
    // S = 3 000, I = 1 000, K = 500: the room leaves the lease two intervals.
    let short = OptionsInput { stale_after_ms: 3_000.0, heartbeat: true, abort_grace: AbortGrace::Default, ..base() };
    let short = short.validate().unwrap();
    assert_eq!(short.abort_grace_ms, Some(500));
    assert_eq!(short.lease.unwrap().write_tolerance_ms, 999);
    // Without renewals nothing is ever aborted; the grace is the plain default.
    let plain = OptionsInput { abort_grace: AbortGrace::Default, ..base() }.validate().unwrap();
    assert_eq!(plain.abort_grace_ms, Some(5_000));
}

#[test]
fn a_given_abort_grace_that_does_not_fit_is_refused_naming_both_options() {
    let input = OptionsInput { stale_after_ms: 3_000.0, heartbeat: true, abort_grace: AbortGrace::Ms(4_000.0), ..base() };
    let e = input.validate().unwrap_err();
    assert!(matches!(e, OptionError::GraceDoesNotFit { abort_grace_ms: 4_000, room_ms: 500, stale_after_ms: 3_000, .. }));
    let text = e.to_string();
    assert!(text.starts_with("abortGraceMs (4000) does not fit in staleAfterMs (3000)"), "{text}");
    assert!(text.contains("at most 500 of grace fits"), "{text}");
    let fits = OptionsInput { abort_grace: AbortGrace::Ms(500.0), ..input }.validate().unwrap();
    assert_eq!(fits.abort_grace_ms, Some(500));
}

#[test]
fn refusals_name_the_options_as_the_host_calls_them() {
    let names = OptionNames {
        stale_after: "--stale-after",
        heartbeat_every: "--heartbeat-every",
        heartbeat_skew: "the skew allowance",
        abort_grace: "--grace",
        unit: "ms",
    };
    let input = OptionsInput { stale_after_ms: 3_000.0, heartbeat: true, abort_grace: AbortGrace::Ms(4_000.0), names, ..base() };
    let text = input.validate().unwrap_err().to_string();
    assert!(text.starts_with("--grace (4000ms) does not fit in --stale-after (3000ms)"), "{text}");
    assert!(text.ends_with("at most 500ms of grace fits (shorten --grace or lengthen --stale-after)"), "{text}");
    let bad = OptionsInput { heartbeat_every_ms: Some(1_500.0), ..input }.validate().unwrap_err().to_string();
    assert!(bad.starts_with("--heartbeat-every (1500ms) must be under half of --stale-after (3000ms)"), "{bad}");
    let grace = OptionsInput { abort_grace: AbortGrace::Ms(-1.0), ..input }.validate().unwrap_err().to_string();
    assert!(grace.starts_with("--grace must not be negative"), "{grace}");
}

#[test]
fn batch_limit_defaults_to_25_and_is_at_least_one() {
    assert_eq!(base().validate().unwrap().batch_limit, 25);
    assert_eq!(OptionsInput { batch_limit: Some(0.0), ..base() }.validate().unwrap().batch_limit, 1);
    assert_eq!(OptionsInput { batch_limit: Some(7.8), ..base() }.validate().unwrap().batch_limit, 7);
}

#[test]
fn concurrency_is_truncated_clamped_and_junk_means_one() {
    for (v, want) in [(None, 1), (Some(2.9), 2), (Some(0.0), 1), (Some(-3.0), 1), (Some(f64::NAN), 1),
                      (Some(f64::INFINITY), 1), (Some(65.0), 64), (Some(1e300), 1)] {
        assert_eq!(OptionsInput { concurrency: v, ..base() }.validate().unwrap().concurrency, want, "{v:?}");
    }
}

#[test]
fn a_store_lease_shorter_than_the_stale_window_is_refused_as_the_lease_policy_refuses_it() {
    // base(): a 30,000 ms stale window. A store lease of 29,999 ms runs out before the runner
    // stops the work; the same span or a longer one does not.
    let e = OptionsInput { heartbeat: true, store_lease_ms: Some(29_999.0), ..base() }.validate().unwrap_err();
    assert_eq!(e, OptionError::StoreLeaseTooShort { store_lease_ms: 29_999, stale_after_ms: 30_000, names: OptionNames::JS });
    assert!(e.to_string().starts_with("the job's claims stamp a lease of 29999 in its store, shorter than staleAfterMs (30000)"), "{e}");
    assert_eq!(
        LeasePolicy::check_store_lease(30_000, 29_999),
        Err(PolicyError::StoreLeaseShorterThanStale { store_lease_ms: 29_999, stale_after_ms: 30_000 })
    );
    for lease in [30_000.0, 60_000.0] {
        assert!(OptionsInput { heartbeat: true, store_lease_ms: Some(lease), ..base() }.validate().is_ok(), "{lease}");
    }
    // Without a heartbeat the claim is never renewed, and still must outlast the window.
    assert!(OptionsInput { store_lease_ms: Some(1.0), ..base() }.validate().is_err());
    let e = OptionsInput { store_lease_ms: Some(f64::NAN), ..base() }.validate().unwrap_err();
    assert!(matches!(e, OptionError::NotFinite { option: "storeLeaseMs", .. }), "{e:?}");
}
