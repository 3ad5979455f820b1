//! Seed 000 clauses through the tokio host, in virtual time: passes, items,
//! trace, backoff.

mod common;
use common::*;
use leasehold::core::{Event, Millis};
use leasehold::runner::{job_backoff, JobError, JobRunner, Observer, PassReport};
use std::time::Duration;

fn report(claimed: u32, performed: u32, failed: u32, claim_lost: u32) -> PassReport {
    PassReport { claimed, performed, failed, claim_lost }
}

#[tokio::test(start_paused = true)]
async fn one_pass_claims_until_nothing_is_left_and_traces_in_order() {
    let (job, counters) = TestJob::new(3, |_| Work::Sleep(5));
    let (events, sink) = recorder();
    let runner = JobRunner::builder("t.pass").on_event(sink).spawn(job).unwrap();
    assert_eq!(runner.tick().await, report(3, 3, 0, 0));
    assert_eq!(load(&counters.claims), 4);
    assert_eq!(types(&events), ["pass-start", "claimed", "performed", "claimed", "performed", "claimed", "performed", "pass-end"]);
    let durations: Vec<u64> = events.lock().unwrap().iter().filter_map(|e| match &e.event {
        Event::Performed { duration_ms, .. } => Some(*duration_ms),
        _ => None,
    }).collect();
    assert_eq!(durations, vec![5, 5, 5]);
    runner.dispose().await;
}

#[tokio::test(start_paused = true)]
async fn batch_limit_bounds_claim_attempts() {
    let (job, counters) = TestJob::new(100, |_| Work::Sleep(0));
    let runner = JobRunner::builder("t.batch").batch_limit(10).spawn(job).unwrap();
    assert_eq!(runner.tick().await.claimed, 10);
    assert_eq!(load(&counters.claims), 10);
    let (job, _) = TestJob::new(100, |_| Work::Sleep(0));
    let runner = JobRunner::builder("t.batch25").spawn(job).unwrap();
    assert_eq!(runner.tick().await.claimed, 25, "the default batch limit");
}

#[tokio::test(start_paused = true)]
async fn claims_stay_serialized_while_items_run_at_the_concurrency() {
    let (mut job, counters) = TestJob::new(30, |_| Work::Sleep(3));
    job.claim_delay_ms = 1;
    let runner = JobRunner::builder("t.conc").batch_limit(50).concurrency(16).spawn(job).unwrap();
    assert_eq!(runner.tick().await.performed, 30);
    assert_eq!(load(&counters.max_in_claim), 1);
    assert!(load(&counters.max_performing) > 1);
    assert!(load(&counters.max_performing) <= 16);
}

#[tokio::test(start_paused = true)]
async fn concurrency_is_reached_exactly() {
    let (job, counters) = TestJob::new(40, |_| Work::Sleep(2));
    let runner = JobRunner::builder("t.peak").batch_limit(100).concurrency(4).spawn(job).unwrap();
    assert_eq!(runner.tick().await.performed, 40);
    assert_eq!(load(&counters.max_performing), 4);
}

#[tokio::test(start_paused = true)]
async fn a_failing_item_is_isolated_counted_and_traced() {
    let (job, _) = TestJob::new(4, |i| if i == 1 { Work::Fail(1) } else { Work::Sleep(1) });
    let (events, sink) = recorder();
    let runner = JobRunner::builder("t.iso").on_event(sink).spawn(job).unwrap();
    assert_eq!(runner.tick().await, report(4, 3, 1, 0));
    let failed: Vec<String> = events.lock().unwrap().iter().filter_map(|e| match &e.event {
        Event::ItemFailed { error, item, .. } => Some(format!("{item}: {error}")),
        _ => None,
    }).collect();
    assert_eq!(failed, vec!["1: item 1 failed"]);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_perform_counts_as_a_failed_item() {
    let (job, _) = TestJob::new(2, |i| if i == 0 { Work::Panic } else { Work::Sleep(1) });
    let runner = JobRunner::builder("t.panic").spawn(job).unwrap();
    assert_eq!(runner.tick().await, report(2, 1, 1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_raising_claim_ends_the_pass_and_backs_off() {
    let (mut job, counters) = TestJob::new(10, |_| Work::Sleep(0));
    job.fail_claim_at = Some(3);
    let (events, sink) = recorder();
    let runner = JobRunner::builder("t.claimfail")
        .interval(Duration::from_millis(100))
        .backoff(job_backoff(100.0))
        .on_event(sink)
        .spawn(job)
        .unwrap();
    assert_eq!(runner.tick().await, report(2, 2, 0, 0));
    assert_eq!(load(&counters.claims), 3);
    let ev = events.lock().unwrap();
    assert!(ev.iter().any(|e| matches!(&e.event, Event::ClaimFailed { error, .. } if error.to_string() == "db down")));
    assert!(matches!(ev.last().map(|e| &e.event), Some(Event::PassEnd { next_delay_ms: 100, .. })));
}

#[tokio::test(start_paused = true)]
async fn a_throwing_sink_costs_the_pass_nothing() {
    let (job, _) = TestJob::new(3, |_| Work::Sleep(0));
    let runner = JobRunner::builder("t.sink").on_event(|_| panic!("sink")).spawn(job).unwrap();
    assert_eq!(runner.tick().await.performed, 3);
}

struct Panicking;

impl Observer for Panicking {
    fn observe(&self, _runner: &str, _event: &Event<JobError>) {
        panic!("observer");
    }
}

#[tokio::test(start_paused = true)]
async fn a_panicking_observer_costs_the_pass_and_the_next_observer_nothing() {
    let (job, _) = TestJob::new(3, |_| Work::Sleep(0));
    let (events, sink) = recorder();
    let runner = JobRunner::builder("t.obs").observe(Arc::new(Panicking)).on_event(sink).spawn(job).unwrap();
    assert_eq!(runner.tick().await.performed, 3);
    assert_eq!(types(&events).len(), 8, "the sink after it still hears every event");
}

#[tokio::test(start_paused = true)]
async fn events_serialise_with_the_js_type_strings_and_field_names() {
    let (job, _) = TestJob::new(1, |_| Work::Sleep(7));
    let (events, sink) = recorder();
    let runner = JobRunner::builder("t.json").interval(Duration::from_millis(250)).on_event(sink).spawn(job).unwrap();
    runner.tick().await;
    let ev = events.lock().unwrap();
    let performed = serde_json::to_value(&ev[2]).unwrap();
    assert_eq!(performed["type"], "performed");
    assert_eq!(performed["name"], "t.json");
    assert_eq!(performed["durationMs"], 7);
    assert_eq!(performed["item"], 0);
    let end = serde_json::to_value(ev.last().unwrap()).unwrap();
    assert_eq!(end["type"], "pass-end");
    assert_eq!(end["nextDelayMs"], 250);
    assert_eq!(end["report"], serde_json::json!({"claimed": 1, "performed": 1, "failed": 0, "claimLost": 0}));
}

#[tokio::test(start_paused = true)]
async fn bad_options_are_refused_with_an_error_naming_the_option() {
    let (job, _) = TestJob::new(0, |_| Work::Sleep(0));
    let err = JobRunner::builder("t.bad").heartbeat_every(Duration::from_secs(20)).spawn(RenewingJob {
        inner: job,
        renew: |_| Some(Ok(true)),
        renew_ms: 0,
    });
    let err = err.unwrap_err();
    assert!(err.to_string().starts_with("heartbeat_every (20000ms) must be under half of stale_after (30000ms)"), "{err}");
}

/// A clock the test moves by hand (seed conformance: "times come from now()").
#[derive(Clone, Default)]
struct HandClock(Arc<std::sync::atomic::AtomicU64>);

impl leasehold::runner::Clock for HandClock {
    fn now(&self) -> leasehold::core::Millis {
        leasehold::core::Millis(self.0.load(std::sync::atomic::Ordering::SeqCst))
    }
}

struct Stepping {
    clock: HandClock,
    left: std::sync::Mutex<u32>,
}

impl leasehold::runner::Job for Stepping {
    type Item = u32;
    async fn claim(&self, _at: leasehold::core::Millis) -> Result<Option<u32>, leasehold::BoxError> {
        let mut left = self.left.lock().unwrap();
        Ok((*left > 0).then(|| {
            *left -= 1;
            *left
        }))
    }
    async fn perform(&self, _item: u32, _signal: leasehold::AbortSignal) -> Result<(), leasehold::BoxError> {
        self.clock.0.fetch_add(7, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

use std::sync::Arc;

#[tokio::test(start_paused = true)]
async fn pass_end_carries_the_report_and_next_delay_and_times_come_from_the_clock() {
    let clock = HandClock::default();
    clock.0.store(1_000, std::sync::atomic::Ordering::SeqCst);
    let (events, sink) = recorder();
    let runner = JobRunner::builder("conf")
        .interval(Duration::from_millis(250))
        .clock(clock.clone())
        .on_event(sink)
        .spawn(Stepping { clock, left: std::sync::Mutex::new(2) })
        .unwrap();
    runner.tick().await;
    let ev = events.lock().unwrap();
    assert!(matches!(&ev[0].event, Event::PassStart { at: Millis(1_000) }));
    let durations: Vec<u64> = ev.iter().filter_map(|e| match &e.event {
        Event::Performed { duration_ms, .. } => Some(*duration_ms),
        _ => None,
    }).collect();
    assert_eq!(durations, vec![7, 7]);
    assert!(matches!(ev.last().map(|e| &e.event), Some(Event::PassEnd { at: Millis(1_014), next_delay_ms: 250, report }) if *report == report_of(2, 2)));
}

fn report_of(claimed: u32, performed: u32) -> PassReport {
    PassReport { claimed, performed, failed: 0, claim_lost: 0 }
}
