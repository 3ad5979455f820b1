//! Enqueue: payloads, options, idempotency keys, bulk inserts, and bad input
//! refused before anything is written.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::Millis;
use leasehold::store::{EnqueueOptions, JobState, StoreError};
use serde_json::json;
use store_support::{attempts, backend_test, keyed, owner};

backend_test! {
    async fn enqueued_job_keeps_its_payload_and_options(db) {
        let s = &db.store;
        let now = db.now();
        let opts = EnqueueOptions {
            run_at: Some(Millis(now.0 + 60_000)),
            priority: -3,
            max_attempts: 7,
            idempotency_key: Some("k1".into()),
            timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        };
        let payload = json!({"nested": {"list": [1, 2.5, "x", null, true]}});
        let id = s.enqueue("mail", &payload, &opts, now).await.unwrap();
        let record = s.job(id).await.unwrap();
        assert_eq!(record.queue, "mail");
        assert_eq!(record.payload, payload);
        assert_eq!(record.state, JobState::Queued);
        assert_eq!(record.run_at, Millis(now.0 + 60_000));
        assert_eq!(
            (record.priority, record.max_attempts, record.attempts),
            (-3, 7, 0)
        );
        assert_eq!(record.idempotency_key.as_deref(), Some("k1"));
        assert_eq!(record.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(record.token, 0);
        assert!(record.lease.is_none() && record.attempt_log.is_empty());
    }
}

backend_test! {
    async fn second_enqueue_with_the_same_key_returns_the_first_job(db) {
        let s = &db.store;
        let first = db.enqueue_with("q", json!("first"), &keyed("k")).await;
        let again = db.enqueue_with("q", json!("second"), &keyed("k")).await;
        assert_eq!(first, again);
        assert_eq!(s.job(first).await.unwrap().payload, json!("first"));
        // Keys are per queue.
        let elsewhere = db.enqueue_with("other", json!("x"), &keyed("k")).await;
        assert_ne!(elsewhere, first);
        let total: u64 = s.counts(db.now()).await.unwrap().iter().map(|c| c.queued).sum();
        assert_eq!(total, 2);
    }
}

backend_test! {
    async fn bulk_enqueue_answers_ids_in_input_order_with_keys_resolved(db) {
        let s = &db.store;
        let existing = db.enqueue_with("q", json!("old"), &keyed("dup")).await;
        let jobs = vec![
            (json!(0), EnqueueOptions::default()),
            (json!(1), keyed("dup")),
            (json!(2), keyed("fresh")),
            (json!(3), EnqueueOptions::default()),
            (json!(4), keyed("fresh")),
        ];
        let ids = s.enqueue_many("q", &jobs, db.now()).await.unwrap();
        assert_eq!(ids.len(), 5);
        assert_eq!(
            ids[1],
            existing,
            "{}: old key answers the old job",
            db.label()
        );
        assert_eq!(
            ids[4], ids[2],
            "a key repeated inside the batch answers its first job"
        );
        for (i, expected) in [(0, json!(0)), (2, json!(2)), (3, json!(3))] {
            assert_eq!(s.job(ids[i]).await.unwrap().payload, expected);
        }
        assert_eq!(s.counts(db.now()).await.unwrap()[0].queued, 4);
    }
}

backend_test! {
    async fn bulk_enqueue_of_thousands_is_one_statement_that_claims_in_order(db) {
        let jobs: Vec<_> = (0..5000)
            .map(|i| (json!({"i": i}), EnqueueOptions::default()))
            .collect();
        let ids = db.store.enqueue_many("q", &jobs, db.now()).await.unwrap();
        assert_eq!(ids.len(), 5000);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{}: ids ascend with input",
            db.label()
        );
        let page = db
            .store
            .claim_page("q", &owner("h", "a"), db.now(), Duration::from_secs(60), 3)
            .await
            .unwrap();
        let got: Vec<_> = page
            .iter()
            .map(|j| j.payload["i"].as_i64().unwrap())
            .collect();
        assert_eq!(got, [0, 1, 2]);
    }
}

backend_test! {
    async fn payload_text_that_is_not_json_is_refused_and_nothing_is_written(db) {
        let err = db
            .store
            .enqueue_json(
                "q",
                "{\"unterminated\": ",
                &EnqueueOptions::default(),
                db.now(),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidPayload(_)), "{err}");
        assert!(err.to_string().contains("payload is not JSON"));
        assert!(db.store.counts(db.now()).await.unwrap().is_empty());
        let ok = db
            .store
            .enqueue_json("q", "{\"a\": 1}", &EnqueueOptions::default(), db.now())
            .await;
        assert!(ok.is_ok());
    }
}

backend_test! {
    async fn queue_name_with_invalid_characters_is_refused_everywhere(db) {
        let s = &db.store;
        let bad = "emails; DROP TABLE x";
        let expect_invalid = |e: StoreError| {
            assert!(matches!(e, StoreError::InvalidQueueName { .. }), "{e}");
            assert!(e.to_string().contains(bad));
        };
        expect_invalid(
            s.enqueue(bad, &json!(1), &EnqueueOptions::default(), db.now())
                .await
                .unwrap_err(),
        );
        expect_invalid(
            s.claim(bad, &owner("h", "a"), db.now(), Duration::from_secs(1))
                .await
                .unwrap_err(),
        );
        expect_invalid(s.listen(bad).await.unwrap_err());
        assert!(s.counts(db.now()).await.unwrap().is_empty());
    }
}

backend_test! {
    async fn invalid_bulk_job_fails_the_whole_batch_before_writing(db) {
        let jobs = vec![
            (json!(1), EnqueueOptions::default()),
            (
                json!(2),
                attempts(0),
            ),
        ];
        let err = db
            .store
            .enqueue_many("q", &jobs, db.now())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("max_attempts"), "{err}");
        assert!(db.store.counts(db.now()).await.unwrap().is_empty());
    }
}

backend_test! {
    async fn a_delay_past_the_latest_due_time_is_refused_and_nothing_is_written(db) {
        // PostgreSQL answered "bigint out of range"; SQLite queued the job due at i64::MAX ms.
        let far = EnqueueOptions { delay: Some(Duration::from_millis(i64::MAX as u64)), ..Default::default() };
        let err = db.store.enqueue("q", &json!(1), &far, db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "delay", .. }), "{err}");
        assert!(db.store.counts(db.now()).await.unwrap().is_empty());
        let later = EnqueueOptions { delay: Some(Duration::from_secs(3600)), ..Default::default() };
        let before = db.now();
        let id = db.store.enqueue("q", &json!(2), &later, before).await.unwrap();
        assert!(db.store.job(id).await.unwrap().run_at.0 >= before.0 + 3_600_000);
    }
}
