//! The backoff while a store does not answer: a worker notices a recovered
//! database within two seconds, however long the outage lasted.

use leasehold_core::backoff::{recovery_backoff, RECOVERY_PROBE_MAX_MS};

#[test]
fn recovery_backoff_doubles_from_its_first_wait_and_never_waits_past_the_probe_cap() {
    let b = recovery_backoff(250.0);
    let delays: Vec<u64> = (1..=6).map(|k| b.delay_after(k)).collect();
    assert_eq!(delays, [250, 500, 1000, 1500, 1500, 1500]);
    assert_eq!(b.delay_after(u32::MAX), RECOVERY_PROBE_MAX_MS as u64, "an outage of a week waits no longer");
}

#[test]
fn a_first_wait_longer_than_the_probe_cap_is_capped_too() {
    assert_eq!(recovery_backoff(10_000.0).delay_after(1), RECOVERY_PROBE_MAX_MS as u64);
}

