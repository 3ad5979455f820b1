//! Prometheus metrics, scraped and read back with an independent parser of
//! the text format: the queue's from the store (jobs by state, settlements
//! by outcome, lease health from the workers table), and a worker process's
//! own (durations and counters).
#![cfg(all(feature = "sqlite", feature = "metrics"))]

mod store_support;

use std::time::Duration;

use leasehold::metrics::{WorkerMetrics, render_store};
use leasehold::runner::{AbortSignal, BoxError, JobRunner};
use leasehold::store::{ClaimedJob, EnqueueOptions, WorkerCounters};
use leasehold::worker::{Handler, Worker};
use prometheus_parse::{Sample, Scrape, Value};
use serde_json::json;
use store_support::{attempts, backend_test, owner, wall_now};

fn scrape(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text parses")
}

/// The sample of `metric` whose labels are exactly `labels`.
fn sample<'a>(scraped: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<&'a Sample> {
    scraped.samples.iter().find(|s| {
        s.metric == metric && labels.len() == s.labels.len() && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
    })
}

/// A counter's or gauge's value.
fn value(scraped: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    match sample(scraped, metric, labels).map(|s| &s.value) {
        Some(Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v)) => *v,
        other => panic!("{metric}{labels:?}: {other:?}"),
    }
}

/// How many observations a histogram holds (its `+Inf` bucket).
fn observations(scraped: &Scrape, metric: &str, queue: &str) -> f64 {
    match sample(scraped, metric, &[("queue", queue)]).map(|s| &s.value) {
        Some(Value::Histogram(buckets)) => {
            buckets.iter().find(|b| b.less_than.is_infinite()).map(|b| b.count).expect("a +Inf bucket")
        }
        other => panic!("{metric}: {other:?}"),
    }
}

backend_test! {
    async fn the_store_metrics_count_jobs_by_state_settlements_by_outcome_and_lease_health(db) {
        let s = &db.store;
        let once = attempts(1);
        for n in 0..3 {
            s.enqueue("mail", &json!(n), &once, db.now()).await.unwrap();
        }
        s.enqueue("video", &json!(0), &EnqueueOptions::default(), db.now()).await.unwrap();
        let later = EnqueueOptions { delay: Some(Duration::from_secs(3_600)), ..EnqueueOptions::default() };
        s.enqueue("video", &json!(1), &later, db.now()).await.unwrap();
        let me = owner("h", "a");
        // Failed once with attempts left: retrying (its backoff is not due yet).
        s.enqueue("retry", &json!(0), &EnqueueOptions::default(), db.now()).await.unwrap();
        let again = s.claim("retry", &me, db.now(), Duration::from_secs(30)).await.unwrap().unwrap();
        s.fail(again.fence(), "flaky", None, db.now()).await.unwrap();
        let done = s.claim("mail", &me, db.now(), Duration::from_secs(30)).await.unwrap().unwrap();
        s.complete(done.fence(), None, db.now()).await.unwrap();
        let dead = s.claim("mail", &me, db.now(), Duration::from_secs(30)).await.unwrap().unwrap();
        s.fail(dead.fence(), "boom", None, db.now()).await.unwrap();
        s.pause_queue("video", "ops", db.now()).await.unwrap();
        let counted = |lapses, losses, steals| WorkerCounters { renewals: 7, lapses, losses, steals, ..Default::default() };
        s.record_worker("mail", &owner("h", "w1"), &counted(1, 2, 3), false, db.now()).await.unwrap();
        s.record_worker("mail", &owner("h", "w2"), &counted(10, 20, 30), true, db.now()).await.unwrap();

        let text = render_store(s, db.now()).await.unwrap();
        let m = scrape(&text);
        let jobs = |queue, state| value(&m, "leasehold_jobs", &[("queue", queue), ("state", state)]);
        assert_eq!(
            [jobs("mail", "queued"), jobs("mail", "succeeded"), jobs("mail", "dead"), jobs("mail", "running")],
            [1.0, 1.0, 1.0, 0.0],
            "{}: {text}",
            db.label()
        );
        assert_eq!(
            [jobs("video", "queued"), jobs("video", "scheduled"), jobs("video", "retrying")],
            [1.0, 1.0, 0.0],
            "a job not due yet is scheduled, not queued: {text}"
        );
        assert_eq!(
            [jobs("retry", "queued"), jobs("retry", "scheduled"), jobs("retry", "retrying")],
            [0.0, 0.0, 1.0],
            "a job failed with attempts left is retrying: {text}"
        );
        assert_eq!(value(&m, "leasehold_queue_paused", &[("queue", "video")]), 1.0);
        assert!(sample(&m, "leasehold_queue_paused", &[("queue", "mail")]).is_none(), "mail is not paused");
        let settled = |outcome| value(&m, "leasehold_settled_total", &[("queue", "mail"), ("outcome", outcome)]);
        assert_eq!([settled("done"), settled("dead")], [1.0, 1.0], "{}: {text}", db.label());
        let lease = |name| value(&m, name, &[("queue", "mail")]);
        assert_eq!(
            [
                lease("leasehold_lease_renewals_total"),
                lease("leasehold_lease_lapses_total"),
                lease("leasehold_lease_losses_total"),
                lease("leasehold_lease_steals_total")
            ],
            [14.0, 11.0, 22.0, 33.0],
            "{}: summed over the workers, stopped or not: {text}",
            db.label()
        );
        assert!(m.docs.contains_key("leasehold_jobs"), "each family has its help line");
    }
}

/// Answers at once, except job 2, which takes long enough to be renewed.
struct Nap;

impl Handler for Nap {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        if job.payload == json!(2) {
            tokio::time::sleep(Duration::from_millis(600)).await;
        }
        Ok(None)
    }
}

#[tokio::test]
async fn a_worker_process_times_its_claims_performs_and_renewals_and_counts_what_it_did() {
    let db = store_support::sqlite_db(Default::default()).await;
    for n in 0..4 {
        db.store.enqueue("q", &json!(n), &EnqueueOptions::default(), wall_now()).await.unwrap();
    }
    let metrics = WorkerMetrics::new();
    let worker = Worker::new(db.store.clone(), "q", Nap).metrics(&metrics).record_every(None);
    let runner = JobRunner::builder("test.metrics")
        .stale_after(Duration::from_secs(10))
        .heartbeat_every(Duration::from_millis(250))
        .spawn(worker)
        .unwrap();
    let report = runner.tick().await;
    runner.dispose().await;
    assert_eq!(report.performed, 4);

    let m = scrape(&metrics.render());
    assert_eq!(observations(&m, "leasehold_perform_duration_seconds", "q"), 4.0);
    assert!(observations(&m, "leasehold_claim_duration_seconds", "q") >= 5.0, "4 that found work and 1 that did not");
    let renewals = value(&m, "leasehold_worker_renewals_total", &[("queue", "q")]);
    assert!(renewals >= 1.0, "the 600 ms job was renewed every 250 ms");
    assert_eq!(observations(&m, "leasehold_renewal_duration_seconds", "q"), renewals, "each renewal timed");
    assert_eq!(value(&m, "leasehold_worker_claimed_total", &[("queue", "q")]), 4.0);
    assert_eq!(value(&m, "leasehold_worker_succeeded_total", &[("queue", "q")]), 4.0);
    assert_eq!(value(&m, "leasehold_worker_lapses_total", &[("queue", "q")]), 0.0);

    // A service registers the same metrics into its own registry.
    let mut registry = prometheus_client::registry::Registry::default();
    metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).unwrap();
    let theirs = scrape(&text);
    assert_eq!(value(&theirs, "leasehold_worker_claimed_total", &[("queue", "q")]), 4.0);
}
