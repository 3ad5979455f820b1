//! The store-and-handler adapter: `Worker::new(store, "queue", handler)` run
//! by a `JobRunner` over a real SQLite file.
#![cfg(feature = "sqlite")]

use leasehold::runner::{AbortSignal, BoxError, JobRunner};
use leasehold::store::{ClaimedJob, EnqueueOptions, JobState, Store};
use leasehold::worker::{Handler, Worker, WorkerStats};
use leasehold::core::Millis;
use std::time::Duration;

struct Echo;

impl Handler for Echo {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        let n = job.payload["n"].as_i64().unwrap_or(0);
        if n == 3 {
            // Long enough for renewals.
            tokio::time::sleep(Duration::from_millis(700)).await;
        }
        if n % 5 == 0 {
            return Err(format!("job {n} refuses").into());
        }
        Ok(Some(serde_json::json!({ "doubled": n * 2 })))
    }
}

fn now() -> Millis {
    Millis(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64)
}

#[tokio::test]
async fn a_worker_completes_fails_and_dead_letters_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let store = Store::connect(&url).await.unwrap();
    let options = EnqueueOptions { max_attempts: 1, ..EnqueueOptions::default() };
    let mut ids = Vec::new();
    for n in 1..=20 {
        ids.push(store.enqueue("work", &serde_json::json!({ "n": n }), &options, now()).await.unwrap());
    }
    let worker = Worker::new(store.clone(), "work", Echo).page_size(4).lease(Duration::from_secs(10));
    let runner = JobRunner::builder("test.worker")
        .stale_after(Duration::from_secs(10))
        .concurrency(4)
        .batch_limit(100)
        .spawn(worker)
        .unwrap();
    let report = runner.tick().await;
    assert_eq!(report.claimed, 20);
    assert_eq!(report.performed, 20, "failures are recorded in the store, not raised to the runner");
    for (n, id) in (1..=20).zip(&ids) {
        let job = store.job(*id).await.unwrap();
        if n % 5 == 0 {
            assert_eq!(job.state, JobState::Dead, "job {n}");
            assert_eq!(job.last_error.as_deref(), Some(format!("job {n} refuses").as_str()));
        } else {
            assert_eq!(job.state, JobState::Succeeded, "job {n}");
            let results = store.results(*id).await.unwrap();
            assert_eq!(results.len(), 1);
            assert_eq!(results[0].1, serde_json::json!({ "doubled": n * 2 }));
        }
    }
    runner.dispose().await;
}

#[tokio::test]
async fn an_incarnation_reclaims_its_own_stale_job_though_its_pid_is_alive() {
    // A claim that landed but whose answer was lost leaves a job running
    // under a live owner that does not know it: peers' pid probe answers
    // alive, so only the owner itself can take it back, on the lease alone.
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let probe = std::sync::Arc::new(leasehold::liveness::SameHostPidProbe::new());
    let config = leasehold::store::StoreConfig::default().with_liveness(probe);
    let store = Store::connect_with(&url, config).await.unwrap();
    let t0 = now();
    store.enqueue("q", &serde_json::json!({}), &EnqueueOptions::default(), t0).await.unwrap();
    let me = leasehold::liveness::current_owner();
    let lease = Duration::from_secs(5);
    let first = store.claim("q", &me, t0, lease).await.unwrap().expect("claimed");
    let later = Millis(t0.0 + 6_000);
    let sibling = leasehold::liveness::current_owner(); // same host and pid, another nonce
    assert!(store.claim("q", &sibling, later, lease).await.unwrap().is_none(), "a live owner is not stolen from");
    let again = store.claim("q", &me, Millis(t0.0 + 6_000 + 5_001), lease).await.unwrap().expect("reclaimed by its own incarnation");
    assert!(again.token > first.token);
    assert!(!again.reclaimed, "taking its own lease back is no rescue from a lost worker");
}

/// Succeeds for `{"n": 1}`, fails for `{"n": 2}`, and for `{"n": 3}` hands its
/// own claim back (the first time) before answering, so the completion finds
/// the fence gone.
struct Mixed {
    store: Store,
    released: std::sync::atomic::AtomicBool,
}

impl Handler for Mixed {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        match job.payload["n"].as_i64() {
            Some(2) => Err("exit code 2".into()),
            Some(3) if !self.released.swap(true, std::sync::atomic::Ordering::SeqCst) => {
                self.store.release_many(&[job.fence()], now()).await?;
                Ok(None)
            }
            _ => Ok(None),
        }
    }
}

#[tokio::test]
async fn each_attempt_is_reported_to_the_settled_hook_with_its_outcome() {
    use leasehold::store::{RetryBackoff, StoreConfig};
    use leasehold::worker::Settlement;
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let retry = RetryBackoff { initial: Duration::from_millis(50), max: Duration::from_millis(50) };
    let store = Store::connect_with(&url, StoreConfig::default().with_retry(retry)).await.unwrap();
    let twice = EnqueueOptions { max_attempts: 2, ..EnqueueOptions::default() };
    let mut ids = Vec::new();
    for n in 1..=3 {
        ids.push(store.enqueue("q", &serde_json::json!({ "n": n }), &twice, now()).await.unwrap().0);
    }
    let seen: Arc<Mutex<Vec<(i64, u32, Settlement)>>> = Arc::default();
    let worker = Worker::new(store.clone(), "q", Mixed { store: store.clone(), released: false.into() }).on_settled({
        let seen = Arc::clone(&seen);
        move |job, settlement| seen.lock().unwrap().push((job.id.0, job.attempt, settlement.clone()))
    });
    // Three claims a pass: job 3, handed back at once, waits for the next.
    let runner = JobRunner::builder("test.settled").stale_after(Duration::from_secs(10)).batch_limit(3).spawn(worker).unwrap();
    let before = now();
    runner.tick().await;
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3, "one settlement per attempt: {seen:?}");
        assert_eq!(seen[0], (ids[0], 1, Settlement::Completed));
        match &seen[1] {
            (id, 1, Settlement::Retrying { at, error }) if *id == ids[1] => {
                assert_eq!(error, "exit code 2");
                assert!(at.0 >= before.0 + 50, "due after the retry backoff");
            }
            other => panic!("job 2's first attempt: {other:?}"),
        }
        assert_eq!(seen[2], (ids[2], 1, Settlement::Lost { lapsed: false }), "the completion found the fence gone");
    }
    // Past the backoff the retry runs its last attempt and dead-letters.
    tokio::time::sleep(Duration::from_millis(60)).await;
    runner.tick().await;
    runner.dispose().await;
    let seen = seen.lock().unwrap();
    let last = seen.iter().find(|(id, attempt, _)| *id == ids[1] && *attempt == 2).expect("job 2 tried again");
    assert_eq!(last.2, Settlement::DeadLettered { error: "exit code 2".to_owned() });
}

/// Completes its job once the test says so, after saying it started.
struct Gated {
    started: std::sync::Arc<tokio::sync::Notify>,
    go: std::sync::Arc<tokio::sync::Notify>,
}

impl Handler for Gated {
    async fn handle(&self, _job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        self.started.notify_one();
        self.go.notified().await;
        Ok(None)
    }
}

/// A completion that can not be written (the database is locked past the
/// store's busy timeout, as when it is away) is tried again while the claim
/// holds, and lands once the database is back: the job is settled once and
/// never runs a second time.
#[tokio::test]
async fn a_completion_the_database_refused_is_written_once_it_is_back() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let store = Store::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    let id = store.enqueue("q", &serde_json::json!(1), &EnqueueOptions::default(), now()).await.unwrap();
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    let go = std::sync::Arc::new(tokio::sync::Notify::new());
    let settled = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let worker = Worker::new(store.clone(), "q", Gated { started: started.clone(), go: go.clone() })
        .lease(Duration::from_secs(120))
        .on_settled({
            let settled = settled.clone();
            move |job, settlement| settled.lock().unwrap().push((job.id, format!("{settlement:?}")))
        });
    let runner = JobRunner::builder("test.locked").stale_after(Duration::from_secs(120)).spawn(worker).unwrap();
    let pass = tokio::spawn({
        let runner = runner.clone();
        async move { runner.tick().await }
    });
    started.notified().await;

    // Another process takes the database for longer than the busy timeout.
    let mut other = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut other).await.unwrap();
    go.notify_one();
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(settled.lock().unwrap().is_empty(), "nothing is settled while the database is away");
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();

    let report = pass.await.unwrap();
    assert_eq!((report.claimed, report.performed), (1, 1));
    let job = store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(job.attempts, 1, "it ran once");
    assert_eq!(*settled.lock().unwrap(), vec![(id, "Completed".to_owned())]);
    runner.dispose().await;
}

#[tokio::test]
async fn a_worker_counts_claims_steals_outcomes_and_renewals_and_records_them_in_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let store = Store::connect(&url).await.unwrap();
    let enqueue = |n: i64, max_attempts: u32| {
        let store = store.clone();
        async move {
            let options = EnqueueOptions { max_attempts, ..EnqueueOptions::default() };
            store.enqueue("work", &serde_json::json!({ "n": n }), &options, now()).await.unwrap()
        }
    };
    // A job another worker claimed 5 s ago under a 1 s lease: stale.
    let long_ago = EnqueueOptions { run_at: Some(Millis(now().0 - 10_000)), ..EnqueueOptions::default() };
    let stale = store.enqueue("work", &serde_json::json!({ "n": 1 }), &long_ago, now()).await.unwrap();
    let peer = leasehold::liveness::current_owner();
    store.claim("work", &peer, Millis(now().0 - 5_000), Duration::from_secs(1)).await.unwrap().expect("claimed by the peer");
    for n in [2, 3, 4] {
        enqueue(n, 3).await;
    }
    enqueue(5, 2).await; // fails, retried later
    enqueue(10, 1).await; // fails on its last attempt
    let stats = WorkerStats::new();
    let worker = Worker::new(store.clone(), "work", Echo)
        .lease(Duration::from_secs(10))
        .sharing_stats(stats.clone())
        .record_every(Some(Duration::from_millis(100)));
    let runner = JobRunner::builder("test.stats")
        .stale_after(Duration::from_secs(10))
        .heartbeat_every(Duration::from_millis(250))
        .concurrency(2)
        .batch_limit(100)
        .spawn(worker)
        .unwrap();
    let report = runner.tick().await;
    assert_eq!(report.claimed, 6);
    assert_eq!(store.job(stale).await.unwrap().state, JobState::Succeeded);
    let counted = stats.counters();
    assert_eq!(
        (counted.claimed, counted.steals, counted.succeeded, counted.failed, counted.dead_lettered),
        (6, 1, 4, 1, 1),
        "{counted:?}"
    );
    assert!(counted.renewals >= 1, "the 700 ms job was renewed every 250 ms: {counted:?}");
    assert_eq!((counted.lapses, counted.losses), (0, 0));

    tokio::time::sleep(Duration::from_millis(300)).await;
    let [seen] = store.workers().await.unwrap().try_into().expect("one worker row");
    assert_eq!((seen.queue.as_str(), seen.counters, seen.stopped_at), ("work", counted, None), "recorded while it runs");
    runner.dispose().await;
    stats.stop().await.unwrap();
    let [stopped] = store.workers().await.unwrap().try_into().expect("one worker row");
    assert!(stopped.stopped_at.is_some(), "a clean stop is recorded: {stopped:?}");
    assert_eq!(stopped.owner.nonce, seen.owner.nonce);
    assert!(stopped.last_seen >= seen.last_seen);
}

#[tokio::test]
async fn a_worker_is_recorded_as_started_when_it_starts_claiming_not_an_interval_later() {
    // Its first record was written only if SQLite's one connection was free, which the
    // worker's own first claim held: skipped, the record (and its started_at) came an
    // interval later, or on a worker kept busy only when it stopped.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("q.db").display())).await.unwrap();
    for n in 1..=20 {
        store.enqueue("work", &serde_json::json!({ "n": n * 2 + 1 }), &EnqueueOptions::default(), now()).await.unwrap();
    }
    let worker = Worker::new(store.clone(), "work", Echo).record_every(Some(Duration::from_secs(60)));
    let runner = JobRunner::builder("test.started").concurrency(4).batch_limit(100).spawn(worker).unwrap();
    let before = now();
    assert_eq!(runner.tick().await.claimed, 20);
    let after = now();
    let mut rows = store.workers().await.unwrap();
    for _ in 0..20 {
        if !rows.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        rows = store.workers().await.unwrap();
    }
    let [row] = rows.try_into().expect("the worker recorded itself as it started, not 60 s on");
    assert!(before <= row.started_at && row.started_at <= after, "started {} ms after its first claim", row.started_at.0 - before.0);
    runner.dispose().await;
}

/// Sleeps past its job's timeout, answering the timeout it was handed.
struct Overrun;

impl Handler for Overrun {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        tokio::time::sleep(job.timeout.unwrap_or_default() * 4).await;
        Ok(Some(serde_json::json!({ "timeoutMs": job.timeout.map(|t| t.as_millis() as u64) })))
    }
}

#[tokio::test]
async fn a_worker_hands_the_timeout_to_its_handler_and_leaves_enforcing_it_to_the_handler() {
    // As EnqueueOptions::timeout says: the timeout travels with the claim, and only the
    // handler (the command-line tool's ends its command) holds the work to it.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("q.db").display())).await.unwrap();
    let options = EnqueueOptions { timeout: Some(Duration::from_millis(50)), ..EnqueueOptions::default() };
    let id = store.enqueue("q", &serde_json::json!({}), &options, now()).await.unwrap();
    let runner = JobRunner::builder("test.timeout").spawn(Worker::new(store.clone(), "q", Overrun)).unwrap();
    assert_eq!(runner.tick().await.performed, 1);
    runner.dispose().await;
    assert_eq!(store.job(id).await.unwrap().state, JobState::Succeeded);
    assert_eq!(store.results(id).await.unwrap()[0].1, serde_json::json!({ "timeoutMs": 50 }));
}

#[tokio::test]
async fn a_worker_on_a_queue_no_store_accepts_is_refused_at_spawn_naming_the_queue_and_the_rule() {
    // Spawned, it claimed on and on, each claim refused by the store and said only in
    // the runner's logs, so a typo in the queue left the worker idle without a word.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("q.db").display())).await.unwrap();
    let long = "q".repeat(129);
    for (queue, rule) in [
        ("bad name", "only A-Z a-z 0-9 _ - . : are allowed"),
        ("mail/eu", "only A-Z a-z 0-9 _ - . : are allowed"),
        ("", "empty"),
        (long.as_str(), "longer than 128 bytes"),
    ] {
        let error = JobRunner::builder("test.queue").spawn(Worker::new(store.clone(), queue, Echo)).unwrap_err();
        assert_eq!(
            error,
            leasehold::core::OptionError::InvalidQueueName {
                queue: queue.to_owned(),
                rule: leasehold::core::queue::rules::check_queue_name(queue).unwrap_err(),
            }
        );
        assert_eq!(
            error.to_string(),
            format!(
                "invalid queue name {queue:?}: {rule} (the queue the job claims from: no job can be queued on it, \
                 so every claim would fail)"
            )
        );
        // The same words as the store's refusal of an enqueue on it.
        let refused = store.enqueue(queue, &serde_json::json!({}), &EnqueueOptions::default(), now()).await.unwrap_err();
        assert!(error.to_string().starts_with(&refused.to_string()), "{error} / {refused}");
    }
    // Every character the rule allows, and the longest name.
    for queue in ["billing:eu-west.v2_retry", &"q".repeat(128)] {
        let runner = JobRunner::builder("test.queue").spawn(Worker::new(store.clone(), queue, Echo)).unwrap();
        runner.dispose().await;
    }
}

#[tokio::test]
async fn a_runner_whose_stale_window_outlasts_its_workers_lease_is_refused() {
    // A worker whose claims stamp 1 s under a runner left at its 30 s window (renewals
    // every 10 s): the job's lease ran out between renewals, and a second worker took it
    // over while the first still worked on it, again at every renewal.
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let store = Store::connect(&url).await.unwrap();
    let short = Worker::new(store.clone(), "work", Echo).lease(Duration::from_secs(1));
    let error = JobRunner::builder("test.short").spawn(short).unwrap_err();
    assert!(
        matches!(error, leasehold::core::OptionError::StoreLeaseTooShort { store_lease_ms: 1_000, stale_after_ms: 30_000, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the job's claims stamp a lease of 1000ms in its store, shorter than stale_after (30000ms): other workers \
         would take over jobs this runner still works on (give the job a lease of at least stale_after, or a \
         shorter stale_after)"
    );
    let refused = Worker::new(store.clone(), "work", Echo).lease(Duration::from_millis(9_999));
    assert!(JobRunner::builder("test.short").stale_after(Duration::from_secs(10)).spawn(refused).is_err());
    // The same span, or a longer lease (safe: a crashed worker's jobs only wait longer).
    for lease in [Duration::from_secs(10), Duration::from_secs(15)] {
        let worker = Worker::new(store.clone(), "work", Echo).lease(lease);
        let runner = JobRunner::builder("test.fits").stale_after(Duration::from_secs(10)).spawn(worker).unwrap();
        runner.dispose().await;
    }
}
