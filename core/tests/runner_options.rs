//! Seed 000 options, normalised as the seed does, plus our refusals of values
//! that would make a hot loop or an unsafe lease.

use leasehold_core::backoff::Backoff;
use leasehold_core::options::{OptionError, OptionsInput};

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
    assert!(matches!(e, OptionError::CadenceTooSlow { heartbeat_every_ms: 15_000, stale_after_ms: 30_000 }));
    assert!(e.to_string().contains("heartbeatEveryMs"));
    assert!(OptionsInput { heartbeat: true, heartbeat_every_ms: Some(14_999.0), ..base() }.validate().is_ok());
    // Without a heartbeat the cadence is never used, so no such rule applies.
    assert!(OptionsInput { heartbeat_every_ms: Some(15_000.0), ..base() }.validate().is_ok());
}

#[test]
fn supervision_parameters_follow_the_documented_relations() {
    let c = OptionsInput { heartbeat: true, ..base() }.validate().unwrap();
    let hb = c.heartbeat.unwrap();
    assert_eq!((hb.every_ms, hb.skew_ms, hb.reconfirm_ms), (10_000, 5_000, 10_000));
    assert_eq!(hb.tolerance_ms, 30_000 - 10_000 - 5_000);
}

#[test]
fn a_skew_allowance_that_leaves_no_write_tolerance_is_refused() {
    let e = OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(20_000.0), ..base() }.validate().unwrap_err();
    assert!(matches!(e, OptionError::NoWriteTolerance { .. }));
    assert!(e.to_string().starts_with("heartbeatSkewMs"));
    assert!(OptionsInput { heartbeat: true, heartbeat_skew_ms: Some(19_999.0), ..base() }.validate().is_ok());
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
