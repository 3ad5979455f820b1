//! The settlements journal: every settle (done, retrying, dead-lettered,
//! lost to a takeover, released) appends a row in its own statement or
//! transaction, a refused fence appends nothing, a deleted job's rows stay
//! until purged, and a reader with a cursor gets each row exactly once —
//! on PostgreSQL also a row that commits after one with a higher id.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::lease::FenceOutcome;
use leasehold::store::{
    FailOutcome, JournalCursor, OnSuccess, SettlementOutcome,
    SettlementRecord, StoreConfig,
};
use serde_json::json;
use store_support::{attempts, backend_test, owner, retrying, without_results};

const LEASE: Duration = Duration::from_secs(1);

/// `(job, attempt, token, outcome)` of each row, in the order given.
fn summary(rows: &[SettlementRecord]) -> Vec<(i64, Option<u32>, u64, SettlementOutcome)> {
    rows.iter().map(|r| (r.job.0, r.attempt, r.token, r.outcome)).collect()
}

backend_test! {
    async fn every_settle_appends_one_row_naming_the_attempt_and_its_owner(db with retrying(Duration::from_millis(1), Duration::from_millis(1))) {
        let s = &db.store;
        let once = attempts(1);
        let twice = attempts(2);
        let jobs: Vec<_> = [&twice, &once, &twice, &twice].iter().map(|o| (json!(1), (*o).clone())).collect();
        let ids = s.enqueue_many("q", &jobs, db.now()).await.unwrap();
        let me = owner("h1", "a");
        let page = db.claim_page("q", &me, LEASE, 4).await;
        assert_eq!(page.len(), 4);
        let by_id = |i: usize| page.iter().find(|j| j.id == ids[i]).unwrap().clone();
        let mut cursor = JournalCursor::default();
        assert!(s.settlements(&mut cursor).await.unwrap().is_empty());

        assert!(s.complete(by_id(0).fence(), Some(&json!({"exitCode": 0})), db.now()).await.unwrap().is_updated());
        let retry = s.fail(by_id(2).fence(), "exit code 1", None, db.now()).await.unwrap();
        let FailOutcome::Retrying { at } = retry else { panic!("{}: {retry:?}", db.label()) };
        assert_eq!(s.fail(by_id(1).fence(), "exit code 2", None, db.now()).await.unwrap(), FailOutcome::DeadLettered);
        assert!(s.release(by_id(3).fence(), db.now()).await.unwrap().is_updated());

        let rows = s.settlements(&mut cursor).await.unwrap();
        let token = |i: usize| by_id(i).token;
        assert_eq!(
            summary(&rows),
            [
                (ids[0].0, Some(1), token(0), SettlementOutcome::Done),
                (ids[2].0, Some(1), token(2), SettlementOutcome::Retrying { at }),
                (ids[1].0, Some(1), token(1), SettlementOutcome::DeadLettered),
                // A claim handed back unstarted ended no attempt.
                (ids[3].0, None, token(3), SettlementOutcome::Released),
            ]
        );
        assert_eq!(rows[1].error.as_deref(), Some("exit code 1"));
        assert_eq!(rows[2].error.as_deref(), Some("exit code 2"));
        for row in &rows {
            assert_eq!(row.queue, "q");
            let owner = row.owner.as_ref().expect("the attempt's owner");
            assert_eq!((owner.host_id.as_str(), owner.nonce.as_str()), ("h1", "a"));
        }
        assert!(s.settlements(&mut cursor).await.unwrap().is_empty(), "{}: read once", db.label());

        // The released job was not counted: its next claim is attempt 1
        // again. Lost to a takeover once stale, then completed by the taker
        // beside its next claim.
        db.advance(Duration::from_millis(20)).await;
        let again = db.claim_page("q", &me, LEASE, 2).await;
        let released = again.iter().find(|j| j.id == ids[3]).expect("released job claimed again");
        assert_eq!(released.attempt, 1);
        db.advance(LEASE * 2).await;
        let thief = owner("h2", "b");
        let taken = db.claim_page("q", &thief, LEASE, 2).await;
        let taken_over = taken.iter().find(|j| j.id == ids[3]).expect("reclaimed");
        let (outcome, _) = db.complete_and_claim(taken_over.fence(), None, "q", &thief, LEASE, 1).await;
        assert_eq!(outcome, FenceOutcome::Updated);
        let rows = s.settlements(&mut cursor).await.unwrap();
        let of_job: Vec<_> = rows.iter().filter(|r| r.job == ids[3]).collect();
        assert_eq!(
            of_job.iter().map(|r| (r.attempt, r.token, r.outcome)).collect::<Vec<_>>(),
            [(Some(1), released.token, SettlementOutcome::Lost), (Some(2), taken_over.token, SettlementOutcome::Done)]
        );
        assert_eq!(of_job[0].owner.as_ref().unwrap().host_id, "h1", "{}: the loser is named", db.label());
        assert!(of_job[0].error.as_deref().unwrap_or_default().contains("reclaimed by h2"));
        assert_eq!(of_job[1].owner.as_ref().unwrap().host_id, "h2");
    }
}

backend_test! {
    async fn a_settlement_numbers_its_attempt_as_the_jobs_attempt_log_does_across_a_retry(db) {
        // A retry starts the job's budget again, and the journal stored the
        // attempt of that budget: the second attempt was journaled as 1 where
        // the attempt log (`show`) numbers it 2, and a cancel of the queued
        // job as attempt 0. Both reads, the event log's and the dashboard's,
        // number each attempt as the log does, and a settlement that ended
        // no attempt has none.
        let s = &db.store;
        let id = db.enqueue_with("q", json!(1), &attempts(1)).await;
        let first = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        assert_eq!(s.fail(first.fence(), "boom", None, db.now()).await.unwrap(), FailOutcome::DeadLettered);
        s.retry(&[id], db.now()).await.unwrap();
        s.cancel(&[id], None, "me", db.now()).await.unwrap();
        s.retry(&[id], db.now()).await.unwrap();
        let second = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due again");
        assert_eq!(second.attempt, 1, "{}: a handler sees the attempt of the fresh budget", db.label());
        assert!(s.complete(second.fence(), None, db.now()).await.unwrap().is_updated());

        let job = s.job(id).await.unwrap();
        let logged: Vec<u64> = job.attempt_log.iter().map(|a| a.token).collect();
        assert_eq!(logged, [first.token, second.token], "{}", db.label());
        let expected = [
            (id.0, Some(1), first.token, SettlementOutcome::DeadLettered),
            (id.0, None, first.token, SettlementOutcome::Cancelled),
            (id.0, Some(2), second.token, SettlementOutcome::Done),
        ];
        let mut cursor = JournalCursor::default();
        assert_eq!(summary(&s.settlements(&mut cursor).await.unwrap()), expected, "{}: the journal", db.label());
        assert_eq!(summary(&s.job_settlements(&job).await.unwrap()), expected, "{}: the dashboard's", db.label());
    }
}

backend_test! {
    async fn a_settle_whose_fence_is_refused_appends_nothing(db) {
        let s = &db.store;
        let old = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        let new = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("reclaimed");
        let mut cursor = JournalCursor::default();
        let lost = s.settlements(&mut cursor).await.unwrap();
        assert_eq!(summary(&lost), [(old.id.0, Some(1), old.token, SettlementOutcome::Lost)]);
        assert!(!s.complete(old.fence(), None, db.now()).await.unwrap().is_updated());
        assert!(matches!(s.fail(old.fence(), "late", None, db.now()).await.unwrap(), FailOutcome::Lost(_)));
        assert!(!s.release(old.fence(), db.now()).await.unwrap().is_updated());
        assert!(!s.complete_many(&without_results(&[old.fence()]), db.now()).await.unwrap()[0].is_updated());
        assert!(s.settlements(&mut cursor).await.unwrap().is_empty(), "{}: a refused settle was journaled", db.label());
        assert!(s.complete(new.fence(), None, db.now()).await.unwrap().is_updated());
        let done = s.settlements(&mut cursor).await.unwrap();
        assert_eq!(summary(&done), [(new.id.0, Some(2), new.token, SettlementOutcome::Done)]);
    }
}

backend_test! {
    async fn a_deleted_jobs_settlement_stays_until_purge_says_it_is_old_enough(db with StoreConfig::default().with_on_success(OnSuccess::Delete)) {
        let s = &db.store;
        let ids = db.enqueue_n("q", 3).await;
        let me = owner("h", "a");
        let page = db.claim_page("q", &me, LEASE, 3).await;
        let completions: Vec<_> = page[..2].iter().map(|j| (j.fence(), None)).collect();
        assert!(s.complete_many(&completions, db.now()).await.unwrap().iter().all(|o| o.is_updated()));
        let (outcome, _) = db.complete_and_claim(page[2].fence(), None, "q", &me, LEASE, 1).await;
        assert!(outcome.is_updated());
        assert!(s.job(ids[0]).await.is_err(), "{}: the job is deleted", db.label());
        let done = |rows: Vec<SettlementRecord>| {
            let mut jobs: Vec<i64> = rows.iter().filter(|r| r.outcome == SettlementOutcome::Done).map(|r| r.job.0).collect();
            jobs.sort_unstable();
            jobs
        };
        let all: Vec<i64> = ids.iter().map(|id| id.0).collect();
        assert_eq!(done(s.settlements(&mut JournalCursor::default()).await.unwrap()), all);

        assert_eq!(s.purge_settlements(None, Duration::from_secs(3600), db.now()).await.unwrap(), 0);
        assert_eq!(s.purge_settlements(Some("other"), Duration::ZERO, db.now()).await.unwrap(), 0);
        db.advance(Duration::from_millis(50)).await;
        assert_eq!(s.purge_settlements(Some("q"), Duration::ZERO, db.now()).await.unwrap(), 3);
        assert!(s.settlements(&mut JournalCursor::default()).await.unwrap().is_empty());
    }
}

backend_test! {
    /// On SQLite ids commit in order, so the watermark is the last id read; a
    /// purge that empties the journal does not make ids start again below it.
    async fn a_cursor_reads_each_row_once_across_a_purge_that_empties_the_journal(db) {
        let s = &db.store;
        let me = owner("h", "a");
        let mut cursor = JournalCursor::default();
        let mut seen = Vec::new();
        for round in 0..3 {
            let id = db.enqueue("q", json!(round)).await;
            let job = db.claim("q", &me, LEASE).await;
            assert!(s.complete(job.fence(), None, db.now()).await.unwrap().is_updated());
            let rows = s.settlements(&mut cursor).await.unwrap();
            assert_eq!(rows.iter().map(|r| r.job).collect::<Vec<_>>(), [id], "{} round {round}", db.label());
            seen.extend(rows);
            db.advance(Duration::from_millis(20)).await;
            s.purge_settlements(None, Duration::ZERO, db.now()).await.unwrap();
        }
        assert_eq!(seen.len(), 3);
    }
}

/// The late commit: transaction A appends a row (taking the lower id) and
/// stays open while B appends one (a higher id) and commits. A reader then
/// sees B's row; once A commits, the next read answers A's row — which a
/// watermark of "the highest id seen" would skip — and no read answers
/// either twice.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_row_that_commits_after_a_higher_id_is_read_exactly_once() {
    let Some(db) = store_support::pg_db("journal_late_commit", StoreConfig::default()).await else { return };
    let s = &db.store;
    let mut cursor = JournalCursor::default();
    assert!(s.settlements(&mut cursor).await.unwrap().is_empty());
    let append = "INSERT INTO leasehold_settlements (job_id, queue, attempt, token, outcome, at)
                  VALUES ($1, 'q', 1, 1, 'done', 0) RETURNING id";
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let mut late = pool.begin().await.unwrap();
    let low: i64 = sqlx::query_scalar(append).bind(1_i64).fetch_one(&mut *late).await.unwrap();
    let high: i64 = sqlx::query_scalar(append).bind(2_i64).fetch_one(&pool).await.unwrap();
    assert!(low < high, "the open transaction holds the lower id");

    let read = |rows: Vec<SettlementRecord>| rows.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(read(s.settlements(&mut cursor).await.unwrap()), [high], "the committed row shows at once");
    assert_eq!(read(s.settlements(&mut cursor).await.unwrap()), Vec::<i64>::new(), "and only once");
    late.commit().await.unwrap();
    assert_eq!(read(s.settlements(&mut cursor).await.unwrap()), [low], "the late commit is not skipped");
    assert_eq!(read(s.settlements(&mut cursor).await.unwrap()), Vec::<i64>::new());
    let third: i64 = sqlx::query_scalar(append).bind(3_i64).fetch_one(&pool).await.unwrap();
    assert_eq!(read(s.settlements(&mut cursor).await.unwrap()), [third]);
}

/// The plan of `statement` as the store runs it (prepared, generic plan:
/// the store's connections force it), executed with `args` (SQL literals).
#[cfg(feature = "postgres")]
async fn generic_plan(url: &str, statement: &str, args: &str) -> serde_json::Value {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET plan_cache_mode = force_generic_plan; PREPARE p AS {statement}")))
        .execute(&mut conn)
        .await
        .unwrap();
    let mut tx = conn.begin().await.unwrap();
    let args = if args.is_empty() { String::new() } else { format!("({args})") };
    let plan = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("EXPLAIN (FORMAT JSON, COSTS OFF) EXECUTE p{args}")))
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    plan
}

/// Every node of a plan, depth first.
#[cfg(feature = "postgres")]
fn plan_nodes(plan: &serde_json::Value) -> Vec<&serde_json::Value> {
    let mut nodes = vec![&plan[0]["Plan"]];
    let mut i = 0;
    while let Some(node) = nodes.get(i).copied() {
        nodes.extend(node.get("Plans").and_then(|p| p.as_array()).into_iter().flatten());
        i += 1;
    }
    nodes
}

/// A journal of 20,000 rows, with statistics.
#[cfg(feature = "postgres")]
async fn big_journal(name: &str) -> Option<store_support::TestDb> {
    let db = store_support::pg_db(name, StoreConfig::default()).await?;
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    sqlx::raw_sql(
        "INSERT INTO leasehold_settlements (job_id, queue, attempt, token, outcome, at)
         SELECT g, 'q', 1, 1, 'done', 0 FROM generate_series(1, 20000) g;
         ANALYZE leasehold_settlements",
    )
    .execute(&pool)
    .await
    .unwrap();
    Some(db)
}

/// The journal's reads by xid (the event log's, the dashboard's span and
/// probe) order by the table's `xid` column, the (xid, id) index's order:
/// with a bare `ORDER BY xid` they sorted the output column `xid::text`
/// instead — digits as text (1000 before 999) — and every read scanned and
/// sorted the whole journal rather than walking the index. Checked on the
/// plans, as the event log's reader re-sorts its answer by id, and xids
/// crossing a power of ten would take too many transactions to make.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn the_journal_reads_walk_the_index_in_xid_order_not_the_xids_text() {
    use leasehold::core::queue::statements::postgres as sql;
    let Some(db) = big_journal("journal_read_order").await else { return };
    for (name, statement, args) in [
        ("settlements", sql::SETTLEMENTS.text, "'0', 1"),
        ("dashboard_journal_span", sql::DASHBOARD_JOURNAL_SPAN.text, ""),
        ("dashboard_journal_probe", sql::DASHBOARD_JOURNAL_PROBE.text, "'0'"),
    ] {
        let plan = generic_plan(&db.url, statement, args).await;
        for node in plan_nodes(&plan) {
            let keys = node["Sort Key"].as_array().into_iter().flatten();
            assert!(keys.filter_map(|k| k.as_str()).all(|k| !k.contains("::text")), "{name} sorts the xids' text: {plan}");
            assert_ne!(node["Node Type"], "Seq Scan", "{name} scans the journal: {plan}");
        }
    }
    let mut cursor = JournalCursor::default();
    assert_eq!(db.store.settlements(&mut cursor).await.unwrap().len(), 20_000);
}

/// Each purge range deletes its rows off the (xid, id) index: joined to the
/// range, the generic plan hashed it against a scan of the whole journal,
/// once per range (quadratic in the journal's length).
#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_purge_range_deletes_off_the_index_without_scanning_the_journal() {
    let Some(db) = big_journal("journal_purge_plan").await else { return };
    let statement = leasehold::core::queue::statements::postgres::PURGE_SETTLEMENTS.text;
    let plan = generic_plan(&db.url, statement, "'0', 0, 1000, 0, NULL").await;
    for node in plan_nodes(&plan) {
        assert_ne!(node["Node Type"], "Seq Scan", "a purge range scans the journal: {plan}");
    }
    // Range by range, every row goes (the ranges' ends are exact).
    let purged = db.store.purge_settlements(None, Duration::from_secs(1), db.now()).await.unwrap();
    assert_eq!(purged, 20_000);
    assert!(db.store.settlements(&mut JournalCursor::default()).await.unwrap().is_empty());
}
