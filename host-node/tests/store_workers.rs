//! The workers table: each worker's record is one row per owner incarnation
//! and queue, upserted with its totals; a late or repeated write never moves
//! a counter back, a clean stop is kept, and old rows can be purged.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::store::{StoreError, WorkerCounters};
use store_support::{backend_test, owner};

fn counters(n: u64) -> WorkerCounters {
    WorkerCounters {
        claimed: n,
        succeeded: n + 1,
        failed: n + 2,
        dead_lettered: n + 3,
        renewals: n + 4,
        lapses: n + 5,
        losses: n + 6,
        steals: n + 7,
    }
}

backend_test! {
    async fn a_worker_is_one_row_that_keeps_its_start_and_never_moves_a_counter_back(db) {
        let s = &db.store;
        let me = owner("host-a", "nonce-a");
        s.record_worker("q", &me, &counters(1), false, db.now()).await.unwrap();
        let [first] = s.workers().await.unwrap().try_into().expect("one row");
        db.advance(Duration::from_millis(20)).await;
        s.record_worker("q", &me, &counters(10), false, db.now()).await.unwrap();
        // An older snapshot arriving late changes nothing.
        s.record_worker("q", &me, &counters(5), false, db.now()).await.unwrap();
        let [row] = s.workers().await.unwrap().try_into().expect("still one row");
        assert_eq!(row.counters, counters(10));
        assert_eq!(row.started_at, first.started_at);
        assert!(row.last_seen > first.last_seen, "{}: {row:?} after {first:?}", db.label());
        assert_eq!((row.queue.as_str(), row.owner.host_id.as_str(), row.owner.nonce.as_str()), ("q", "host-a", "nonce-a"));
        assert_eq!(row.owner.pid, me.pid);
        assert_eq!(row.stopped_at, None);
    }
}

backend_test! {
    async fn a_clean_stop_is_kept_and_each_queue_of_a_worker_is_its_own_row(db) {
        let s = &db.store;
        let me = owner("host-a", "nonce-a");
        s.record_worker("a", &me, &counters(1), false, db.now()).await.unwrap();
        s.record_worker("b", &me, &counters(2), true, db.now()).await.unwrap();
        // A periodic record racing the stop does not clear it.
        s.record_worker("b", &me, &counters(2), false, db.now()).await.unwrap();
        let rows = s.workers().await.unwrap();
        let by_queue: Vec<_> = rows.iter().map(|r| (r.queue.as_str(), r.stopped_at.is_some(), r.counters.claimed)).collect();
        assert_eq!(by_queue, [("a", false, 1), ("b", true, 2)]);
    }
}

backend_test! {
    async fn workers_are_listed_most_recently_seen_first_and_purged_when_long_unseen(db) {
        let s = &db.store;
        s.record_worker("q", &owner("h", "old"), &counters(0), false, db.now()).await.unwrap();
        db.advance(Duration::from_millis(1500)).await;
        s.record_worker("q", &owner("h", "new"), &counters(0), false, db.now()).await.unwrap();
        let nonces: Vec<_> = s.workers().await.unwrap().into_iter().map(|r| r.owner.nonce).collect();
        assert_eq!(nonces, ["new", "old"]);
        s.record_worker("other", &owner("h", "old"), &counters(0), false, db.now()).await.unwrap();
        assert_eq!(s.purge_workers(Some("other"), Duration::from_secs(1), db.now()).await.unwrap(), 0);
        let purged = s.purge_workers(None, Duration::from_secs(1), db.now()).await.unwrap();
        assert_eq!(purged, 1);
        let rows: Vec<_> = s.workers().await.unwrap().into_iter().map(|r| (r.queue, r.owner.nonce)).collect();
        assert_eq!(rows, [("other".to_owned(), "old".to_owned()), ("q".to_owned(), "new".to_owned())]);
    }
}

backend_test! {
    async fn a_record_with_a_bad_queue_or_no_nonce_is_refused_and_writes_nothing(db) {
        let s = &db.store;
        let bad_queue = s.record_worker("", &owner("h", "n"), &counters(0), false, db.now()).await;
        assert!(matches!(bad_queue, Err(StoreError::InvalidQueueName { .. })), "{}: {bad_queue:?}", db.label());
        let no_nonce = s.record_worker("q", &owner("h", ""), &counters(0), false, db.now()).await;
        assert!(
            matches!(&no_nonce, Err(StoreError::InvalidOption { option: "owner.nonce", .. })),
            "{}: {no_nonce:?}",
            db.label()
        );
        assert!(s.workers().await.unwrap().is_empty());
    }
}
