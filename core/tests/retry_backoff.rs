//! The retry backoff every job store uses for a failed attempt: 1 s doubling up to 1 h.

use leasehold_core::backoff::RETRY_BACKOFF;

#[test]
fn a_failed_attempt_waits_one_second_doubling_up_to_an_hour() {
    let delays: Vec<u64> = [1, 2, 3, 12, 13, 25].iter().map(|&k| RETRY_BACKOFF.delay_after(k)).collect();
    assert_eq!(delays, [1_000, 2_000, 4_000, 2_048_000, 3_600_000, 3_600_000]);
    assert_eq!(RETRY_BACKOFF.delay_after(u32::MAX), 3_600_000, "a job failing for ever waits no longer");
}
