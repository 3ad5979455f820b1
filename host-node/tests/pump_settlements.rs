//! The event log derives job events from the store's settlements journal
//! with a watermark ([`SettlementSource`]): a settlement committed by a
//! process that never wrote an event of its own reaches the log, a reopened
//! log neither skips nor repeats one, and on PostgreSQL a row committed late
//! (its transaction open across a later commit) is held back, never skipped.

#![cfg(feature = "sqlite")]

mod store_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use leasehold::pump::{EventSource, Following, Pump, PumpOptions, SETTLEMENTS_SOURCE, SettlementSource};
use serde_json::json;
use store_support::{TestDb, backends, owner};

const LEASE: Duration = Duration::from_secs(30);

/// A pump over the log at `path` deriving `db`'s settlements of queue `q`,
/// following the store from the log's watermark.
async fn open(db: &TestDb, path: &Path) -> (Pump, Following) {
    let source = Arc::new(SettlementSource::new(Some("q")));
    let mut options = PumpOptions::new(path);
    // SQLite's test clock starts near 1970: no retention, or a reopen's
    // compaction would drop the events for their age.
    options.retention = Duration::from_secs(1 << 40);
    let mut builder = Pump::builder(options);
    builder.source(SETTLEMENTS_SOURCE, Arc::clone(&source) as Arc<dyn EventSource>);
    let pump = builder.open().await.unwrap();
    let from = pump.status().await.unwrap().marks.get(SETTLEMENTS_SOURCE).copied().unwrap_or(0);
    let following = source.follow(db.store.clone(), from, pump.kicker(), Duration::from_millis(20));
    (pump, following)
}

/// Settles one job of queue `q` as done: the journal id's row is the
/// store's, written in the settle's own transaction.
async fn settle_one(db: &TestDb, nonce: &str) -> i64 {
    let id = db.enqueue("q", json!(nonce)).await;
    let job = db.claim("q", &owner("h", nonce), LEASE).await;
    assert!(db.store.complete(job.fence(), None, db.now()).await.unwrap().is_updated());
    id.0
}

/// The jobs of the log's settlement events, in log order.
async fn logged_jobs(pump: &Pump) -> Vec<i64> {
    pump.flush().await.unwrap();
    let read = pump.read(0).await.unwrap();
    read.records
        .iter()
        .filter(|r| r.event.source == SETTLEMENTS_SOURCE)
        .map(|r| {
            assert_eq!(r.event.kind, "job-done");
            r.event.body["job"].as_i64().unwrap()
        })
        .collect()
}

/// Waits until the log's settlement events are `want` (the source reads the
/// store every 20 ms).
async fn wait_for(pump: &Pump, want: &[i64], label: &str) {
    for _ in 0..250 {
        if logged_jobs(pump).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(logged_jobs(pump).await, want, "{label}");
}

#[tokio::test]
async fn a_settlement_committed_while_no_log_was_open_reaches_the_log_and_a_reopen_repeats_none() {
    for db in backends("pump_settlements_reopen").await {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("worker.log");
        // The settling process writes no event of its own (as one killed
        // right after its commit).
        let first = settle_one(&db, "a").await;
        let (pump, following) = open(&db, &path).await;
        wait_for(&pump, &[first], db.label()).await;
        let second = settle_one(&db, "b").await;
        wait_for(&pump, &[first, second], db.label()).await;
        following.finish().await;
        pump.close().await.unwrap();
        drop(pump);
        // Settled while no log was open, then a reopen: from the watermark on.
        let third = settle_one(&db, "c").await;
        let (pump, following) = open(&db, &path).await;
        wait_for(&pump, &[first, second, third], db.label()).await;
        following.finish().await;
        pump.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_settlement_committed_late_is_held_back_then_logged_never_skipped() {
    for db in backends("pump_settlements_late").await {
        if db.label() != "postgres" {
            continue; // SQLite commits its ids in order
        }
        late_commit(&db).await;
    }
}

#[cfg(feature = "postgres")]
async fn late_commit(db: &TestDb) {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("worker.log");
    let (pump, following) = open(db, &path).await;
    let before = settle_one(db, "a").await;
    wait_for(&pump, &[before], "postgres").await;
    // A transaction that takes a journal id (after its transaction id, as
    // every settle statement does) and stays open across a later commit.
    let mut open_tx = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut open_tx).await.unwrap();
    sqlx::query("SELECT pg_current_xact_id()").execute(&mut open_tx).await.unwrap();
    sqlx::query(
        "INSERT INTO leasehold_settlements (job_id, queue, attempt, token, outcome, at)
         VALUES (424242, 'q', 1, 1, 'done', 0)",
    )
    .execute(&mut open_tx)
    .await
    .unwrap();
    // The reader turns while the open transaction holds the newest
    // transaction id: a fence taken from a snapshot's xmax (one past the
    // latest completed transaction) would equal the open one's id and pass
    // its row before it commits.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = settle_one(db, "b").await;
    // The later commit has the higher id: logging it now would move the
    // watermark past the open row, which would then never be logged.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(logged_jobs(&pump).await, [before], "held back while the lower id is open");
    sqlx::query("COMMIT").execute(&mut open_tx).await.unwrap();
    wait_for(&pump, &[before, 424242, after], "postgres").await;
    following.finish().await;
    pump.close().await.unwrap();
}

#[cfg(not(feature = "postgres"))]
async fn late_commit(_db: &TestDb) {
    unreachable!("no PostgreSQL databases without the feature")
}
