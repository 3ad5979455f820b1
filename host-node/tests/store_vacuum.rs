//! PostgreSQL upkeep: a store vacuums its jobs table once its claims have
//! walked enough dead index entries (`vacuum_every`: the entries claims
//! leave at the head of the queue, which slow every later claim), and never
//! when that is off.

#![cfg(feature = "postgres")]

mod store_support;

use std::time::{Duration, Instant};

use leasehold::store::{EnqueueOptions, Store, StoreConfig};
use serde_json::json;
use store_support::{owner, pg_db};

const LEASE: Duration = Duration::from_secs(30);

/// Manual vacuums of this schema's jobs table (autovacuum counts apart).
async fn vacuums(url: &str) -> i64 {
    let pool = sqlx::PgPool::connect(url).await.expect("stats connection");
    let n: i64 = sqlx::query_scalar(
        "SELECT coalesce(sum(vacuum_count), 0)::int8 FROM pg_stat_user_tables
         WHERE relname = 'leasehold_jobs' AND schemaname = current_schema()",
    )
    .fetch_one(&pool)
    .await
    .expect("vacuum count");
    pool.close().await;
    n
}

/// Enqueues `n` jobs and claims them all, in pages of 4.
async fn enqueue_and_claim(store: &Store, n: usize) {
    let now = store_support::wall_now();
    let batch: Vec<_> = (0..n)
        .map(|i| (json!(i), EnqueueOptions::default()))
        .collect();
    store.enqueue_many("q", &batch, now).await.unwrap();
    let me = owner("h", "n1");
    let mut claimed = 0;
    while claimed < n {
        let page = store
            .claim_page("q", &me, store_support::wall_now(), LEASE, 4)
            .await
            .unwrap();
        assert!(!page.is_empty(), "every enqueued job is due");
        claimed += page.len();
    }
}

#[tokio::test]
async fn claims_past_vacuum_every_vacuum_the_jobs_table() {
    let config = StoreConfig::default().with_vacuum_every(Some(5));
    let Some(db) = pg_db("vacuum_every", config).await else {
        return;
    };
    assert_eq!(vacuums(&db.url).await, 0, "a fresh schema");
    enqueue_and_claim(&db.store, 12).await;
    // The vacuum runs in the background: wait for it, within reason.
    let deadline = Instant::now() + Duration::from_secs(20);
    while vacuums(&db.url).await == 0 {
        // Pages of 4 walk 0 + 4 + 8 = 12 >= 5²/2 dead entries by the third.
        assert!(
            Instant::now() < deadline,
            "no vacuum after 12 claims with vacuum_every 5"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    db.store.close().await;
}

#[tokio::test]
async fn with_vacuum_every_off_the_store_never_vacuums() {
    let config = StoreConfig::default().with_vacuum_every(None);
    let Some(db) = pg_db("vacuum_off", config).await else {
        return;
    };
    enqueue_and_claim(&db.store, 12).await;
    // Ample time for a background vacuum of 12 rows (the test above sees
    // one within milliseconds) to have run and been counted.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(vacuums(&db.url).await, 0);
    db.store.close().await;
}
