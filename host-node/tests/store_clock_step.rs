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
    /// The mirror test's dead owner, but one a liveness check can see die:
    /// the pid probe proves an owner on the claimant's host gone (no such
    /// process). Two processes on one host read clocks a step apart when
    /// one started after the host's wall clock stepped (an NTP correction,
    /// a resume from sleep). Proof of death needs no watch, but the
    /// takeover's swap still asks the claimant's wall clock, on which the
    /// dead owner's last stamp lies a step in the future; and a look that
    /// names the lease every time spends the page on it, so a claimant
    /// claiming one job at a time claimed nothing else meanwhile (B took the
    /// job over at 83 s, and the job enqueued at 30 s at 85 s). The watch lets a proven-gone owner's lease go as it lets any other
    /// go (after one window unrenewed on B's own clock), so B takes the job
    /// over about one window after A's last renewal. Found by the simulator:
    /// `sim --profile clock-steps --hosts 1 --replay 5`.
    async fn a_dead_owner_proven_gone_whose_clock_read_a_step_ahead_is_taken_over_about_one_window_after_its_last_renewal(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        db.enqueue("q", json!(1)).await;
        // A: "gone" to B's liveness check once it stops; its clock a minute ahead of B's.
        let a = owner("h1", "gone");
        let a_now = || Millis(db.now().0 + STEP_MS);
        let job = db.store.claim("q", &a, a_now(), LEASE).await.unwrap().expect("A claims");
        let b_store = db.second_store(StoreConfig::default().with_liveness(Arc::new(GoneByNonce))).await;
        let b = owner("h1", "b");
        let (mut taken_at, mut other_at, mut other) = (None, None, None);
        for second in 0..120 {
            // A renews every 3 s for 12 s, then dies (its last renewal at 12 s).
            if second <= 12 && second % 3 == 0 {
                assert!(db.store.heartbeat(job.fence(), a_now()).await.unwrap().is_updated(), "A's renewal at {second} s");
            }
            if second == 30 {
                other = Some(db.enqueue("q", json!(2)).await);
            }
            if let Some(claimed) = b_store.claim("q", &b, db.now(), LEASE).await.unwrap() {
                if claimed.id == job.id {
                    taken_at.get_or_insert(second);
                } else {
                    assert_eq!(Some(claimed.id), other);
                    other_at.get_or_insert(second);
                }
            }
            if taken_at.is_some() && other_at.is_some() {
                break;
            }
            db.advance(Duration::from_secs(1)).await;
        }
        assert!(
            taken_at.is_some_and(|at| at <= 12 + 10 + 2),
            "B took the dead owner's job over at {taken_at:?} s (A's last renewal at 12 s, a stale window of 10 s), \
             and the job enqueued at 30 s at {other_at:?} s"
        );
        assert!(other_at.is_some_and(|at| at <= 31), "B claimed the job enqueued at 30 s only at {other_at:?} s");
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

backend_test! {
    /// The mirror of the first test: the owner's clock reads a step ahead of
    /// the claimant's (the owner started after an NTP step forward, or the
    /// claimant after one back). When the owner dies where no liveness check
    /// can see it (another pid namespace, another host on a shared file),
    /// the claimant, watching all along, has seen the lease unrenewed for
    /// its window on its own clock one window after the last renewal, which
    /// is all the takeover rule needs. On the claimant's clock the owner's
    /// last stamp lies a step in the future, so a takeover that waited for
    /// the wall clock to call the lease stale as well would leave the job
    /// with the dead owner for the step too (a day's step: a day).
    async fn a_dead_owner_whose_clock_read_a_step_ahead_is_taken_over_about_one_window_after_its_last_renewal(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        db.enqueue("q", json!(1)).await;
        // A: its clock a minute ahead of B's.
        let a = owner("h1", "a");
        let a_now = || Millis(db.now().0 + STEP_MS);
        let job = db.store.claim("q", &a, a_now(), LEASE).await.unwrap().expect("A claims");
        let b_store = db.second_store(StoreConfig::default()).await;
        let b = owner("h2", "b");
        let mut taken_at = None;
        for second in 0..120 {
            // A renews every 3 s for 12 s, then dies (its last renewal at 12 s).
            if second <= 12 && second % 3 == 0 {
                assert!(db.store.heartbeat(job.fence(), a_now()).await.unwrap().is_updated(), "A's renewal at {second} s");
            }
            if let Some(taken) = b_store.claim("q", &b, db.now(), LEASE).await.unwrap() {
                assert_eq!((taken.id, taken.reclaimed), (job.id, true));
                taken_at = Some(second);
                break;
            }
            db.advance(Duration::from_secs(1)).await;
        }
        let taken_at = taken_at.expect("B took the job over within two minutes");
        assert!(
            taken_at <= 12 + 10 + 2,
            "B, watching since A's claim, took the dead owner's job over only at {taken_at} s, \
             {} s after A's last renewal (12 s), with a stale window of 10 s",
            taken_at - 12
        );
    }
}

backend_test! {
    /// `cancel` then `retry` of a running job: the job is queued again, due
    /// once the cancelled attempt's lease would have gone stale (its
    /// `expires_at`, stamped with the owner's clock), because the owner hears
    /// of the cancel only at its next renewal and stops its work before then.
    /// A claimant whose clock reads a step ahead of the owner's finds that
    /// due time long past; it claims the job only once it has itself seen
    /// the cancelled attempt's lease unrenewed for its window, as for a
    /// takeover of a running lease.
    async fn a_job_cancelled_while_it_ran_and_retried_is_not_started_by_a_worker_whose_clock_reads_ahead_while_the_old_lease_runs(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        let id = db.enqueue("q", json!(1)).await;
        let a = owner("h1", "a");
        let job = db.store.claim("q", &a, db.now(), LEASE).await.unwrap().expect("A claims");
        db.store.cancel(&[id], None, "ops", db.now()).await.unwrap();
        db.store.retry(&[id], db.now()).await.unwrap();
        let b_store = db.second_store(StoreConfig::default()).await;
        let b = owner("h2", "b");
        // One second on: A has not renewed since (it renews every few
        // seconds), so its command still runs.
        db.advance(Duration::from_secs(1)).await;
        let started = b_store.claim("q", &b, Millis(db.now().0 + STEP_MS), LEASE).await.unwrap();
        assert!(
            started.is_none(),
            "B (its clock a minute ahead) started job {} again 1 s after its cancel, while A's cancelled \
             attempt (token {}) still runs until its next renewal is refused",
            id.0,
            job.token
        );
        // B first saw that lease at 1 s: it claims the job at its first claim more than
        // the window (10 s) after that, and not before.
        let mut started_at = None;
        for second in 2..30 {
            db.advance(Duration::from_secs(1)).await;
            if let Some(started) = b_store.claim("q", &b, Millis(db.now().0 + STEP_MS), LEASE).await.unwrap() {
                assert_eq!((started.id, started.reclaimed), (id, false));
                started_at = Some(second);
                break;
            }
        }
        assert_eq!(started_at, Some(12), "B claims the retried job once it has watched the cancelled lease for 10 s");
    }
}

backend_test! {
    /// A look's read of the running leases comes after its claim statement,
    /// which waits for SQLite's write lock (up to the busy timeout). A claim
    /// or renewal sent after the look's `now` and landing while the claim
    /// waited must be watched from when the look read it (the round's `now`
    /// plus the time the round took), not from `now`: the watch would
    /// otherwise count time from before the lease was even written, and the
    /// claimant (its clock a step ahead, so the wall clock does not hold it
    /// back) would take the job over before the owner's own deadline for
    /// that lease. The wait passes for real and on the test's clock alike.
    async fn a_claim_that_lands_while_a_look_waits_for_the_write_lock_is_watched_from_when_it_landed(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        // Due in an hour: B's claims find nothing to claim (yet still need the write lock).
        let later = leasehold::store::EnqueueOptions { delay: Some(Duration::from_secs(3_600)), ..Default::default() };
        let id = db.enqueue_with("q", json!(1), &later).await;
        let b_store = Arc::new(db.second_store(StoreConfig::default()).await);
        let b = owner("h2", "b");
        let b_now = |now: Millis| Millis(now.0 + STEP_MS);
        let looked_at = db.now();
        // The database is locked (a long write elsewhere): B's look waits in its claim statement.
        let lock = store_support::lock(&db).await;
        let look = tokio::spawn({
            let (b_store, b) = (b_store.clone(), b.clone());
            let at = b_now(looked_at);
            async move { b_store.claim("q", &b, at, LEASE).await }
        });
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(!look.is_finished(), "B's look waits for the write lock");
        // 2 s on, A claims the job, and its claim lands as the lock is let go, before B's
        // claim statement. (Done on the lock's own connection, so that it lands first.)
        db.advance(Duration::from_secs(2)).await;
        let a_claimed_at = db.now().0 as i64;
        let store_support::Lock::Sqlite(mut conn) = lock else { unreachable!() };
        sqlx::query(
            "UPDATE leasehold_jobs SET state = 'running', token = token + 1, attempts = attempts + 1, \
             owner_host = 'h1', owner_pid = 1, owner_nonce = 'a', claimed_at = ?1, heartbeat_at = ?1, \
             lease_ms = ?2, expires_at = ?1 + ?2 WHERE id = ?3",
        )
        .bind(a_claimed_at)
        .bind(LEASE.as_millis() as i64)
        .bind(id.0)
        .execute(&mut conn)
        .await
        .unwrap();
        sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
        assert!(look.await.unwrap().unwrap().is_none(), "A's lease, first seen");
        // A then stops renewing (paused, cut off): it works on until its deadline, within
        // the window of its claim's send time (2 s after B's look began). B looks every second.
        let mut taken_at = None;
        for second in 3..40 {
            db.advance(Duration::from_secs(1)).await;
            if b_store.claim("q", &b, b_now(db.now()), LEASE).await.unwrap().is_some() {
                taken_at = Some(second);
                break;
            }
        }
        let taken_at = taken_at.expect("B took the job over in the end");
        assert!(
            taken_at > 2 + 10,
            "B took A's job over {taken_at} s after its look began, {} s after A's claim (2 s), \
             inside that lease's 10 s window",
            taken_at - 2
        );
    }
}

backend_test! {
    /// What lets a claimant claim a job carrying a cancelled attempt's lease
    /// is that very lease, watched: the job claimed, cancelled and retried
    /// again between two of its looks carries a new attempt's lease, which
    /// it has not watched, and waits for its next look.
    async fn a_cancelled_lease_watched_long_enough_does_not_let_a_newer_cancelled_attempt_of_the_job_start_early(db) {
        if db.kind != BackendKind::Sqlite {
            continue;
        }
        let id = db.enqueue("q", json!(1)).await;
        let a = owner("h1", "a");
        db.store.claim("q", &a, db.now(), LEASE).await.unwrap().expect("A claims");
        db.store.cancel(&[id], None, "ops", db.now()).await.unwrap();
        db.store.retry(&[id], db.now()).await.unwrap();
        // B looks at most once per window (10 s): at 0 s, 10 s, 20 s.
        let b_store = db.second_store(StoreConfig::default().with_reclaim_every(Duration::from_secs(3_600))).await;
        let b = owner("h2", "b");
        let b_now = |db: &store_support::TestDb| Millis(db.now().0 + STEP_MS);
        for _ in 0..=10 {
            assert!(b_store.claim("q", &b, b_now(&db), LEASE).await.unwrap().is_none(), "B waits out the window");
            db.advance(Duration::from_secs(1)).await;
        }
        // At 11 s B has watched that attempt's lease for its window. Before B's next claim,
        // another worker claims the job, is cancelled, and the job is retried again: a new
        // attempt's lease (two tokens on), due on that worker's clock.
        let now = db.now().0;
        let changed = store_support::raw(
            &db,
            &format!(
                "UPDATE leasehold_jobs SET token = token + 2, heartbeat_at = {now}, expires_at = {now} + 10000, \
                 run_at = {now} + 10000 WHERE id = {} RETURNING 1",
                id.0
            ),
            "",
        )
        .await;
        assert_eq!(changed, 1);
        assert!(
            b_store.claim("q", &b, b_now(&db), LEASE).await.unwrap().is_none(),
            "B started the job on the watch of an earlier attempt's lease"
        );
        // B's next look (at 20 s) sees the new lease; more than 10 s later it starts the job.
        let mut started_at = None;
        for second in 12..40 {
            db.advance(Duration::from_secs(1)).await;
            if b_store.claim("q", &b, b_now(&db), LEASE).await.unwrap().is_some() {
                started_at = Some(second);
                break;
            }
        }
        assert_eq!(started_at, Some(31));
    }
}
