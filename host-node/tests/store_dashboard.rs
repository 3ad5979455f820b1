//! What a dashboard reads: counts by state (exact, or estimated over a large
//! id range), settlements in time buckets, keyset pages with filters, one
//! job's settlements, and the change marker, on both stores.

#![cfg(feature = "sqlite")]

mod store_support;

use std::collections::BTreeSet;
use std::time::Duration;

use leasehold::core::Millis;
use leasehold::store::dashboard::{JobQuery, ShownState};
use leasehold::store::{BackendKind, EnqueueOptions, JobId, SettlementOutcome, StoreConfig};
use serde_json::json;
use store_support::{TestDb, backend_test, owner, raw, retrying};

const LEASE: Duration = Duration::from_secs(30);

fn opts(max_attempts: u32) -> EnqueueOptions {
    EnqueueOptions { max_attempts, ..Default::default() }
}

/// Failed attempts retried an hour later: [`one_of_each`]'s retrying job
/// stays retrying (not due, so never claimed again) however slow the test
/// runs on PostgreSQL's real clock.
fn retry_in_an_hour() -> StoreConfig {
    retrying(Duration::from_secs(3600), Duration::from_secs(3600))
}

/// Queue `q` with one job in each shown state; answers the ids by state.
async fn one_of_each(db: &TestDb, q: &str) -> Vec<(ShownState, JobId)> {
    let s = &db.store;
    let me = owner("h", "a");
    let mut ids = Vec::new();
    // Claimed in id order: succeeded, dead, retrying, running.
    for (state, attempts) in [(ShownState::Succeeded, 3), (ShownState::Dead, 1), (ShownState::Retrying, 3), (ShownState::Running, 3)] {
        let id = s.enqueue(q, &json!({ "command": format!("echo {}", state.as_str()) }), &opts(attempts), db.now()).await.unwrap();
        let job = db.try_claim(q, &me, LEASE).await.expect("due");
        assert_eq!(job.id, id);
        match state {
            ShownState::Succeeded => drop(s.complete(job.fence(), None, db.now()).await.unwrap()),
            ShownState::Dead | ShownState::Retrying => drop(s.fail(job.fence(), "boom", None, db.now()).await.unwrap()),
            _ => {}
        }
        ids.push((state, id));
    }
    let cancelled = s.enqueue(q, &json!({ "command": "echo cancelled" }), &opts(3), db.now()).await.unwrap();
    s.cancel(&[cancelled], None, "ops", db.now()).await.unwrap();
    ids.push((ShownState::Cancelled, cancelled));
    let later = EnqueueOptions { delay: Some(Duration::from_secs(3600)), ..Default::default() };
    ids.push((ShownState::Scheduled, s.enqueue(q, &json!({ "command": "echo scheduled" }), &later, db.now()).await.unwrap()));
    // Behind the next call's claims (lower priorities run first).
    let last = EnqueueOptions { priority: 5, ..opts(3) };
    ids.push((ShownState::Queued, s.enqueue(q, &json!({ "command": "echo queued" }), &last, db.now()).await.unwrap()));
    ids
}

backend_test! {
    async fn the_overview_counts_each_queue_by_every_state_and_marks_the_paused_ones(db with retry_in_an_hour()) {
        one_of_each(&db, "mail").await;
        one_of_each(&db, "mail").await;
        db.enqueue_with("zip", json!(1), &opts(1)).await;
        db.store.pause_queue("zip", "ops", db.now()).await.unwrap();

        let overview = db.store.overview(db.now()).await.unwrap();
        assert!(!overview.succeeded_estimated);
        let names: Vec<&str> = overview.queues.iter().map(|q| q.queue.as_str()).collect();
        assert_eq!(names, ["mail", "zip"]);
        let mail = &overview.queues[0].counts;
        let counts = [mail.queued, mail.scheduled, mail.retrying, mail.running, mail.succeeded, mail.dead, mail.cancelled];
        assert_eq!(counts, [2; 7], "{}: {mail:?}", db.label());
        assert!(overview.queues[0].paused_at_ms.is_none());
        assert_eq!(overview.queues[1].paused_by.as_deref(), Some("ops"));
        assert_eq!(overview.queues[1].counts.queued, 1);
    }
}

backend_test! {
    async fn counts_split_queued_jobs_into_queued_scheduled_and_retrying_as_the_overview_does(db with retry_in_an_hour()) {
        one_of_each(&db, "mail").await;
        one_of_each(&db, "mail").await;
        db.enqueue_with("zip", json!(1), &opts(1)).await;

        let counts = db.store.counts(db.now()).await.unwrap();
        let names: Vec<&str> = counts.iter().map(|c| c.queue.as_str()).collect();
        assert_eq!(names, ["mail", "zip"], "{}", db.label());
        let mail = &counts[0];
        let split = [mail.queued, mail.scheduled, mail.retrying, mail.running, mail.succeeded, mail.dead, mail.cancelled];
        assert_eq!(split, [2; 7], "{}: {mail:?}", db.label());
        assert_eq!(mail.waiting(), 6);
        assert_eq!((counts[1].queued, counts[1].waiting()), (1, 1));
        // The same numbers as the overview (and so `leasehold status`) gives.
        let overview = db.store.overview(db.now()).await.unwrap();
        let shown = &overview.queues[0].counts;
        assert_eq!(split, [shown.queued, shown.scheduled, shown.retrying, shown.running, shown.succeeded, shown.dead, shown.cancelled]);
    }
}

/// Makes the next job id `next` (ids are never reused, so a range can be
/// made sparse).
async fn skip_ids_to(db: &TestDb, next: i64) {
    match db.kind {
        BackendKind::Sqlite => {
            raw(db, &format!("UPDATE sqlite_sequence SET seq = {} WHERE name = 'leasehold_jobs'", next - 1), "").await;
        }
        BackendKind::Postgres => {
            raw(db, "", &format!("SELECT setval(pg_get_serial_sequence('leasehold_jobs', 'id'), {})", next - 1)).await;
        }
    }
}

backend_test! {
    async fn over_a_large_id_range_succeeded_jobs_are_estimated_and_said_to_be_while_the_rest_stay_exact(db with retry_in_an_hour()) {
        // 150,000 succeeded jobs (a third on queue b), inserted in one statement.
        let insert = "INSERT INTO leasehold_jobs (queue, payload, state, run_at, max_attempts, created_at, finished_at)";
        match db.kind {
            BackendKind::Sqlite => raw(&db, &format!(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
                 {insert} SELECT CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{{}}', 'succeeded', 0, 1, 0, 0 FROM n"), "").await,
            BackendKind::Postgres => raw(&db, "", &format!(
                "{insert} SELECT CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, '{{}}', 'succeeded', 0, 1, 0, 0
                 FROM generate_series(1, 150000) i")).await,
        };
        let ids = one_of_each(&db, "a").await;
        let overview = db.store.overview(db.now()).await.unwrap();
        assert!(overview.succeeded_estimated);
        assert_eq!(overview.sampled_ids, 4096);
        let a = &overview.queues.iter().find(|q| q.queue == "a").expect("a").counts;
        let b = &overview.queues.iter().find(|q| q.queue == "b").expect("b").counts;
        let near = |estimate: u64, truth: f64| (estimate as f64 - truth).abs() / truth < 0.06;
        assert!(near(a.succeeded, 100_001.0), "{}: a ≈ {}", db.label(), a.succeeded);
        assert!(near(b.succeeded, 50_000.0), "{}: b ≈ {}", db.label(), b.succeeded);
        // Every other state is exact.
        assert_eq!([a.queued, a.scheduled, a.retrying, a.running, a.dead, a.cancelled], [1; 6]);
        assert_eq!(ids.len(), 7);
        // Store::counts is exact however large the range.
        let counts = db.store.counts(db.now()).await.unwrap();
        let succeeded: Vec<(&str, u64)> = counts.iter().map(|c| (c.queue.as_str(), c.succeeded)).collect();
        assert_eq!(succeeded, [("a", 100_001), ("b", 50_000)], "{}", db.label());
    }
}

backend_test! {
    async fn pages_go_back_by_id_without_gaps_or_repeats_and_filter_by_queue_state_and_text(db with retry_in_an_hour()) {
        let mut all = Vec::new();
        for _ in 0..3 {
            all.extend(one_of_each(&db, "a").await);
            all.extend(one_of_each(&db, "b").await);
        }
        let s = &db.store;
        let mut seen = Vec::new();
        let mut query = JobQuery { limit: 5, ..Default::default() };
        loop {
            let page = s.job_page(&query, db.now()).await.unwrap();
            assert!(page.jobs.len() <= 5);
            seen.extend(page.jobs.iter().map(|j| j.id));
            match page.next {
                Some(next) => query.before = Some(next),
                None => break,
            }
        }
        let mut expected: Vec<JobId> = all.iter().map(|(_, id)| *id).collect();
        expected.sort_unstable_by(|x, y| y.cmp(x));
        assert_eq!(seen, expected, "{}: newest first, each once", db.label());

        for state in ShownState::ALL {
            let query = JobQuery { queue: Some("b".into()), state: Some(state), ..Default::default() };
            let page = s.job_page(&query, db.now()).await.unwrap();
            let got: BTreeSet<JobId> = page.jobs.iter().map(|j| j.id).collect();
            let want: BTreeSet<JobId> = all[7..14].iter().chain(&all[21..28]).chain(&all[35..42])
                .filter(|(st, _)| *st == state).map(|(_, id)| *id).collect();
            assert_eq!(got, want, "{}: {state:?}", db.label());
            assert!(page.jobs.iter().all(|j| ShownState::of(j, db.now()) == state || db.kind == BackendKind::Postgres));
            assert_eq!(page.next, None);
        }
        let query = JobQuery { text: Some("echo dead".into()), ..Default::default() };
        let page = s.job_page(&query, db.now()).await.unwrap();
        assert_eq!(page.jobs.len(), 6);
        assert!(page.jobs.iter().all(|j| j.payload["command"] == "echo dead"));
    }
}

backend_test! {
    async fn a_search_no_index_serves_stops_after_its_window_and_says_where_to_go_on(db) {
        let s = &db.store;
        let old = db.enqueue_with("q", json!({ "command": "needle" }), &opts(1)).await;
        skip_ids_to(&db, old.0 + 250_000).await;
        let new = db.enqueue_with("q", json!({ "command": "hay" }), &opts(1)).await;
        let mut query = JobQuery { text: Some("needle".into()), ..Default::default() };
        let first = s.job_page(&query, db.now()).await.unwrap();
        assert!(first.jobs.is_empty());
        let next = first.next.expect("older ids remain");
        assert_eq!(first.searched_down_to, Some(next));
        assert_eq!(next.0, new.0 + 1 - 100_000);
        let mut pages = 1;
        query.before = Some(next);
        let found = loop {
            let page = s.job_page(&query, db.now()).await.unwrap();
            pages += 1;
            if !page.jobs.is_empty() {
                assert_eq!(page.next, None);
                break page.jobs;
            }
            query.before = Some(page.next.expect("more"));
        };
        assert_eq!(found.iter().map(|j| j.id).collect::<Vec<_>>(), [old]);
        assert_eq!(pages, 3, "{}: 250,001 ids in windows of 100,000", db.label());
        // A state with its own index is not windowed.
        s.cancel(&[old], None, "ops", db.now()).await.unwrap();
        let query = JobQuery { state: Some(ShownState::Cancelled), ..Default::default() };
        let page = s.job_page(&query, db.now()).await.unwrap();
        assert_eq!(page.jobs.iter().map(|j| j.id).collect::<Vec<_>>(), [old]);
        assert_eq!(page.next, None);
    }
}

backend_test! {
    async fn activity_buckets_count_settlements_by_outcome_with_how_long_they_waited_and_ran(db) {
        let s = &db.store;
        let since = db.now();
        let a = db.enqueue_with("q", json!(1), &opts(1)).await;
        let b = db.enqueue_with("q", json!(2), &opts(2)).await;
        db.advance(Duration::from_millis(300)).await;
        let ja = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("a");
        let jb = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("b");
        db.advance(Duration::from_millis(200)).await;
        s.complete(ja.fence(), None, db.now()).await.unwrap();
        s.fail(jb.fence(), "boom", None, db.now()).await.unwrap();
        let c = db.enqueue_with("q", json!(3), &opts(1)).await;
        s.cancel(&[c], None, "ops", db.now()).await.unwrap();
        assert_eq!((ja.id, jb.id), (a, b));

        let activity = s.activity(Millis(since.0 - 60_000), 60_000, db.now()).await.unwrap();
        let total = |f: fn(&leasehold::store::dashboard::ActivityBucket) -> u64| activity.buckets.iter().map(f).sum::<u64>();
        assert_eq!((total(|b| b.done), total(|b| b.retrying), total(|b| b.cancelled), total(|b| b.dead)), (1, 1, 1, 0));
        let ran: Vec<_> = activity.buckets.iter().filter(|b| b.ran.count > 0).collect();
        let runs: u64 = ran.iter().map(|b| b.ran.count).sum();
        assert_eq!(runs, 2);
        if db.kind == BackendKind::Sqlite {
            // The virtual clock: waited 300 ms after due, ran 200 ms.
            let bucket = ran[0];
            assert_eq!((bucket.ran.mean_ms, bucket.ran.max_ms), (200, 200));
            assert_eq!((bucket.waited.count, bucket.waited.mean_ms), (1, 300));
        } else {
            assert!(ran.iter().all(|b| b.ran.max_ms >= 150 && b.ran.max_ms < 5_000));
        }
        assert!(s.activity(since, 0, db.now()).await.is_err());
        assert!(s.activity(Millis(since.0 - 3_600_000), 1, db.now()).await.is_err(), "too many buckets");
    }
}

backend_test! {
    async fn a_job_page_shows_its_own_settlements_only(db) {
        let s = &db.store;
        let id = db.enqueue_with("q", json!(1), &opts(2)).await;
        let other = db.enqueue_with("q", json!(2), &opts(2)).await;
        for _ in 0..2 {
            let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
            s.fail(job.fence(), "boom", None, db.now()).await.unwrap();
            db.advance(Duration::from_secs(5)).await;
        }
        let _ = other;
        let record = s.job(id).await.unwrap();
        let rows = s.job_settlements(&record).await.unwrap();
        assert!(rows.iter().all(|r| r.job == id));
        assert!(!rows.is_empty(), "{}: {record:?}", db.label());
        assert!(matches!(rows[0].outcome, SettlementOutcome::Retrying { .. }), "{}: {rows:?}", db.label());
    }
}

backend_test! {
    async fn the_change_marker_moves_when_jobs_change_state_and_not_at_a_renewal(db) {
        let s = &db.store;
        let start = s.change_marker().await.unwrap();
        let id = db.enqueue_with("q", json!(1), &opts(1)).await;
        let enqueued = s.change_marker().await.unwrap();
        let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        let claimed = s.change_marker().await.unwrap();
        s.heartbeat(job.fence(), db.now()).await.unwrap();
        assert_eq!(s.change_marker().await.unwrap(), claimed, "{}: a renewal changes no state", db.label());
        s.fail(job.fence(), "boom", None, db.now()).await.unwrap();
        let dead = s.change_marker().await.unwrap();
        s.retry(&[id], db.now()).await.unwrap();
        let retried = s.change_marker().await.unwrap();
        s.pause_queue("q", "ops", db.now()).await.unwrap();
        let paused = s.change_marker().await.unwrap();
        let markers = [start, enqueued, claimed, dead, retried, paused];
        for pair in markers.windows(2) {
            assert_ne!(pair[0], pair[1], "{}: {markers:?}", db.label());
        }
    }
}

backend_test! {
    async fn the_change_marker_moves_when_a_schedule_is_added_paused_resumed_driven_or_removed(db) {
        use leasehold::schedule::Cadence;
        use leasehold::store::ScheduleSpec;
        let s = &db.store;
        let start = s.change_marker().await.unwrap();
        let spec = ScheduleSpec::new("tick", "q", Cadence::Every(Duration::from_secs(60)), json!({ "command": "true" }));
        let earlier = Millis(db.now().0 - 600_000);
        s.add_schedule(&spec, earlier).await.unwrap();
        let added = s.change_marker().await.unwrap();
        s.pause_schedule("tick", db.now()).await.unwrap();
        let paused = s.change_marker().await.unwrap();
        s.resume_schedule("tick", earlier).await.unwrap();
        let resumed = s.change_marker().await.unwrap();
        // Catch-up none, driven 30 s after a slot: no job, the slot is
        // skipped, and only the schedule moves on.
        let missed = ScheduleSpec { catch_up: leasehold::core::schedule::CatchUp::None, ..spec.clone() };
        s.remove_schedule("tick").await.unwrap();
        let removed = s.change_marker().await.unwrap();
        s.add_schedule(&missed, earlier).await.unwrap();
        let again = s.change_marker().await.unwrap();
        let half_past = Millis(db.now().0 / 60_000 * 60_000 - 30_000);
        let round = s.run_due_schedules("q", half_past).await.unwrap();
        assert!(round.enqueued.is_empty(), "{}: {round:?}", db.label());
        let driven = s.change_marker().await.unwrap();
        let markers = [start, added, paused, resumed, removed, again, driven];
        for pair in markers.windows(2) {
            assert_ne!(pair[0], pair[1], "{}: {markers:?}", db.label());
        }
    }
}
