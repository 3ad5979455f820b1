//! The lease-only liveness check (seed 003 `leaseLiveness`), in virtual time:
//! alive while the persisted heartbeat is inside the stale-after window, gone
//! once it is not, gone when there is no heartbeat.

use leasehold_core::Millis;
use leasehold_core::lease::{LeaseLiveness, LeasePolicy, LivenessCheck, LivenessContext, OwnerId};

fn owner() -> OwnerId {
    OwnerId::new("host-a", 100, "owner-nonce")
}

fn claimant() -> OwnerId {
    OwnerId::new("host-b", 200, "claimant-nonce")
}

fn ask(check: &dyn LivenessCheck, heartbeat_at: Option<u64>, now: u64) -> bool {
    let claimant = claimant();
    let context = LivenessContext { claimant: &claimant, heartbeat_at: heartbeat_at.map(Millis), now: Millis(now) };
    check.is_alive(&owner(), &context)
}

const WINDOW: LeaseLiveness = LeaseLiveness { stale_after_ms: 15_000 };

#[test]
fn owner_is_alive_while_heartbeat_is_inside_the_window() {
    assert!(ask(&WINDOW, Some(1_000), 1_000));
    assert!(ask(&WINDOW, Some(1_000), 9_000));
}

#[test]
fn owner_is_alive_at_exactly_stale_after() {
    // heartbeat_at >= now - stale_after: 1_000 >= 16_000 - 15_000.
    assert!(ask(&WINDOW, Some(1_000), 16_000));
}

#[test]
fn owner_is_gone_one_millisecond_past_stale_after() {
    assert!(!ask(&WINDOW, Some(1_000), 16_001));
    assert!(!ask(&WINDOW, Some(1_000), 1_000_000));
}

#[test]
fn owner_without_a_heartbeat_is_gone() {
    assert!(!ask(&WINDOW, None, 0));
    assert!(!ask(&WINDOW, None, 16_000));
}

#[test]
fn heartbeat_ahead_of_now_is_alive() {
    // The owner's clock ran ahead of the arbiter's: the lease is fresh, not stale.
    assert!(ask(&WINDOW, Some(20_000), 10_000));
}

#[test]
fn window_reaching_before_the_epoch_keeps_every_heartbeat_alive() {
    // now - stale_after would be negative: every recorded heartbeat is inside.
    assert!(ask(&WINDOW, Some(0), 14_999));
    assert!(ask(&LeaseLiveness { stale_after_ms: u64::MAX }, Some(0), u64::MAX));
}

#[test]
fn lease_liveness_ignores_who_owns_and_who_claims() {
    let same_host = OwnerId::new("host-a", 100, "other");
    for claimant in [claimant(), same_host, owner()] {
        let context = LivenessContext { claimant: &claimant, heartbeat_at: Some(Millis(0)), now: Millis(15_001) };
        assert!(!WINDOW.is_alive(&owner(), &context));
        let context = LivenessContext { now: Millis(15_000), ..context };
        assert!(WINDOW.is_alive(&owner(), &context));
    }
}

#[test]
fn default_window_is_the_policy_default_stale_after() {
    assert_eq!(LeaseLiveness::default(), LeaseLiveness { stale_after_ms: 15_000 });
    assert_eq!(LeasePolicy::DEFAULT.lease_liveness(), LeaseLiveness::default());
}

#[test]
fn is_fresh_matches_is_alive() {
    for (heartbeat_at, now) in [(None, 5), (Some(0), 15_000), (Some(0), 15_001), (Some(30_000), 0)] {
        assert_eq!(WINDOW.is_fresh(heartbeat_at.map(Millis), Millis(now)), ask(&WINDOW, heartbeat_at, now));
    }
}
