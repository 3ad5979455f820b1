//! SQLite leases are stamped and judged with each worker's own clock, and two
//! workers' clocks can read a whole step apart: the runner's clock is the
//! system time read when it started, carried on by the monotonic clock, so a
//! worker started after an NTP step forward or a resume from sleep reads
//! every older worker's renewals that far in the past. A claimant takes a
//! lease over only once it has itself seen that lease unrenewed for longer
//! than its stale window, on its own clock (the core's `LeaseWatch`).
//! PostgreSQL stamps and judges every lease with the server's one clock.

#![cfg(feature = "sqlite")]

mod store_support;

use std::sync::Arc;
use std::time::Duration;

use leasehold::core::Millis;
use leasehold::core::lease::{LivenessCheck, LivenessContext, OwnerId};
use leasehold::store::{BackendKind, StoreConfig};
use serde_json::json;
use store_support::{backend_test, owner};

const LEASE: Duration = Duration::from_secs(10);
/// How far ahead of the owner's clock the claimant's reads.
const STEP_MS: u64 = 60_000;

backend_test! {
    async fn a_worker_whose_clock_reads_a_step_ahead_takes_over_only_a_lease_left_unrenewed(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        db.enqueue("q", json!(1)).await;
        let a = owner("h1", "a");
        let job = db.store.claim("q", &a, db.now(), LEASE).await.unwrap().expect("A claims");
        // B: another process on the same file, its clock a minute ahead.
        let b_store = db.second_store(StoreConfig::default()).await;
        let b = owner("h2", "b");
        let b_now = || Millis(db.now().0 + STEP_MS);
        // A renews every 3 s; B claims every second. On the wall clocks
        // alone, B would take the job over at its first claim: A's heartbeat
        // reads 60 s old to it.
        for second in 0..40 {
            if second % 3 == 0 {
                assert!(db.store.heartbeat(job.fence(), db.now()).await.unwrap().is_updated(), "A's renewal at {second} s");
            }
            let taken = b_store.claim("q", &b, b_now(), LEASE).await.unwrap();
            assert!(taken.is_none(), "B took the job over at {second} s while A renewed it every 3 s");
            db.advance(Duration::from_secs(1)).await;
        }
        // A stops renewing (its last renewal, at 39 s, B saw at 39 s): B takes
        // the job over at its first claim more than 10 s after that.
        let mut taken_at = None;
        for second in 40..60 {
            if let Some(taken) = b_store.claim("q", &b, b_now(), LEASE).await.unwrap() {
                assert_eq!((taken.id, taken.reclaimed), (job.id, true));
                taken_at = Some(second);
                break;
            }
            db.advance(Duration::from_secs(1)).await;
        }
        assert_eq!(taken_at, Some(50), "taken over the first claim after 10 s unrenewed");
    }
}

/// Calls every owner whose nonce is "gone" proven gone, and none alive.
struct GoneByNonce;

impl LivenessCheck for GoneByNonce {
    fn is_alive(&self, _expected: &OwnerId, _context: &LivenessContext<'_>) -> bool {
        false
    }

    fn proven_gone(&self, expected: &OwnerId, _context: &LivenessContext<'_>) -> bool {
        expected.nonce == "gone"
    }
}

backend_test! {
    /// Proof that the owner is gone (the pid probe's: no such process on this
    /// host) consults no clock, so it needs no watch: the takeover is at the
    /// first look that finds the lease stale.
    async fn an_owner_proven_gone_is_taken_over_without_waiting_a_window(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        let config = || StoreConfig::default().with_liveness(Arc::new(GoneByNonce));
        let ids = [db.enqueue("q", json!(1)).await, db.enqueue("q", json!(2)).await];
        for nonce in ["gone", "unknown"] {
            db.store.claim("q", &owner("h1", nonce), db.now(), LEASE).await.unwrap().expect("claims");
        }
        let b_store = db.second_store(config()).await;
        let b = owner("h2", "b");
        let first = b_store.claim("q", &b, Millis(db.now().0 + STEP_MS), LEASE).await.unwrap();
        assert_eq!(first.map(|job| job.id), Some(ids[0]), "the proven-gone owner's job at once");
        let second = b_store.claim("q", &b, Millis(db.now().0 + STEP_MS), LEASE).await.unwrap();
        assert!(second.is_none(), "the other owner's lease was first seen just now");
    }
}

backend_test! {
    /// A lease that the watch keeps from being taken over (its owner renews
    /// it, but on the claimant's clock it reads stale) must not keep the
    /// claimant from its queue's other work. Each look names stale leases
    /// first and claims queued jobs only in the room they leave, and a look
    /// that found some is followed by another at the next claim: a claimant
    /// whose clock reads ahead, claiming one job at a time as `leasehold
    /// work` does, was handed the owner's lease at every claim, refused it,
    /// and never claimed a queued job while that owner worked.
    async fn a_lease_the_watch_refuses_does_not_keep_the_claimant_from_queued_jobs(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        db.enqueue("q", json!(1)).await;
        let a = owner("h1", "a");
        let job = db.store.claim("q", &a, db.now(), LEASE).await.unwrap().expect("A claims");
        let queued = db.enqueue("q", json!(2)).await;
        let b_store = db.second_store(StoreConfig::default()).await;
        let b = owner("h2", "b");
        let mut claimed_at = None;
        for second in 0..20 {
            if second % 3 == 0 {
                assert!(db.store.heartbeat(job.fence(), db.now()).await.unwrap().is_updated(), "A's renewal at {second} s");
            }
            if let Some(claimed) = b_store.claim("q", &b, Millis(db.now().0 + STEP_MS), LEASE).await.unwrap() {
                assert_eq!(claimed.id, queued, "B claimed the queued job, not A's");
                claimed_at = Some(second);
                break;
            }
            db.advance(Duration::from_secs(1)).await;
        }
        // The look that first names the lease spends its page on it; the next claim
        // leaves the refused lease out and claims the queued job.
        assert!(
            claimed_at.is_some_and(|second| second <= 1),
            "B claimed the queued job at {claimed_at:?} s (None: not in 20 s) while A worked on"
        );
    }
}
