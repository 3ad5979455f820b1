//! Wake-ups: an enqueue of due work wakes the queue's subscribers — in the
//! same process directly, and across processes through LISTEN/NOTIFY on
//! PostgreSQL.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::store::{EnqueueOptions, StoreConfig};
use serde_json::json;
use store_support::{backend_test, backends};

const SOON: Duration = Duration::from_secs(5);
const QUIET: Duration = Duration::from_millis(300);

backend_test! {
    async fn enqueue_of_due_work_wakes_local_subscribers_of_that_queue(db) {
        let s = &db.store;
        let mail = s.listen("mail").await.unwrap();
        let other = s.listen("other").await.unwrap();
        db.enqueue("mail", json!(1)).await;
        tokio::time::timeout(SOON, mail.notified())
            .await
            .expect("woken");
        assert!(tokio::time::timeout(QUIET, other.notified()).await.is_err());
        assert_eq!(mail.queue(), "mail");
    }
}

backend_test! {
    async fn delayed_enqueue_wakes_nobody(db) {
        let s = &db.store;
        let mail = s.listen("mail").await.unwrap();
        let later = EnqueueOptions {
            delay: Some(Duration::from_secs(60)),
            ..Default::default()
        };
        db.enqueue_with("mail", json!(1), &later).await;
        assert!(tokio::time::timeout(QUIET, mail.notified()).await.is_err());
    }
}

backend_test! {
    async fn wakes_arriving_while_nobody_waits_coalesce_into_one(db) {
        let s = &db.store;
        let mail = s.listen("mail").await.unwrap();
        for i in 0..5 {
            db.enqueue("mail", json!(i)).await;
        }
        // Let PostgreSQL's notifications arrive too before checking.
        tokio::time::sleep(QUIET).await;
        tokio::time::timeout(SOON, mail.notified())
            .await
            .expect("one pending wake");
        assert!(tokio::time::timeout(QUIET, mail.notified()).await.is_err());
    }
}

#[tokio::test]
async fn notify_from_another_store_wakes_a_postgres_listener() {
    let Some(db) = store_support::pg_db("wake_notify", StoreConfig::default()).await else {
        return;
    };
    let listener = db.store.listen("mail").await.unwrap();
    // Another process's store: its enqueue reaches us only through NOTIFY.
    let producer = db.second_store(StoreConfig::default()).await;
    producer
        .enqueue("mail", &json!(1), &EnqueueOptions::default(), db.now())
        .await
        .unwrap();
    tokio::time::timeout(SOON, listener.notified())
        .await
        .expect("woken through LISTEN/NOTIFY");
    // A queue nobody here listens to does not wake this subscriber.
    producer
        .enqueue("other", &json!(1), &EnqueueOptions::default(), db.now())
        .await
        .unwrap();
    assert!(
        tokio::time::timeout(QUIET, listener.notified())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn close_after_listen_returns() {
    // On PostgreSQL the LISTEN task holds a pooled connection; close must end
    // it rather than wait for it forever.
    for db in backends("wake_close").await {
        let wakeups = db.store.listen("mail").await.unwrap();
        drop(wakeups);
        tokio::time::timeout(SOON, db.store.close()).await.unwrap_or_else(|_| panic!("{}: close hung", db.label()));
    }
}
