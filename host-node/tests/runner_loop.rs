//! Seed 000 loop clauses through the tokio host: tick joins, wake coalesces,
//! start/stop, quiesce, dispose, and the task's lifetime.

mod common;
use common::*;
use leasehold::runner::{JobRunner, PassReport};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn tick_during_a_pass_joins_that_pass() {
    let (job, counters) = TestJob::new(1, |_| Work::Sleep(100));
    let runner = JobRunner::builder("l.join").spawn(job).unwrap();
    let (a, b) = tokio::join!(runner.tick(), async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        runner.tick().await
    });
    assert_eq!(a, b);
    assert_eq!(load(&counters.claims), 2, "one pass: one item, one empty answer");
}

#[tokio::test(start_paused = true)]
async fn wakes_during_a_pass_coalesce_into_one_follow_up() {
    let (job, counters) = TestJob::new(1, |_| Work::Sleep(100));
    let runner = JobRunner::builder("l.wake").interval(Duration::from_secs(3600)).spawn(job).unwrap();
    let pass = runner.tick();
    let waker = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        for _ in 0..5 {
            runner.wake();
        }
    };
    tokio::join!(pass, waker);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(load(&counters.claims), 3, "the first pass (2 claims) and one follow-up (1 claim)");
}

#[tokio::test(start_paused = true)]
async fn start_runs_a_pass_at_once_then_one_per_interval_until_stopped() {
    let (job, counters) = TestJob::new(0, |_| Work::Sleep(0));
    let runner = JobRunner::builder("l.start").interval(Duration::from_millis(20)).spawn(job).unwrap();
    runner.start();
    runner.start();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(load(&counters.claims), 1);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(load(&counters.claims), 6);
    runner.stop();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(load(&counters.claims), 6);
}

#[tokio::test(start_paused = true)]
async fn quiesce_waits_for_the_pass_in_flight_and_the_loop_can_start_again() {
    let (job, counters) = TestJob::new(2, |_| Work::Sleep(100));
    let runner = JobRunner::builder("l.quiesce").batch_limit(1).interval(Duration::from_secs(3600)).spawn(job).unwrap();
    runner.start();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let started = tokio::time::Instant::now();
    runner.quiesce().await;
    assert_eq!(started.elapsed(), Duration::from_millis(95));
    runner.start();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(load(&counters.claims), 2);
    runner.dispose().await;
}

#[tokio::test(start_paused = true)]
async fn after_dispose_start_tick_and_wake_do_nothing() {
    let (job, counters) = TestJob::new(5, |_| Work::Sleep(0));
    let runner = JobRunner::builder("l.dispose").spawn(job).unwrap();
    runner.dispose().await;
    runner.dispose().await;
    runner.start();
    runner.wake();
    assert_eq!(runner.tick().await, PassReport::default());
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(load(&counters.claims), 0);
}

struct Tracked(Arc<AtomicUsize>);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

struct OwnedJob {
    _tracked: Tracked,
    inner: TestJob,
}

impl leasehold::runner::Job for OwnedJob {
    type Item = u64;
    async fn claim(&self, at: leasehold::core::Millis) -> Result<Option<u64>, leasehold::BoxError> {
        self.inner.claim(at).await
    }
    async fn perform(&self, item: u64, signal: leasehold::AbortSignal) -> Result<(), leasehold::BoxError> {
        self.inner.perform(item, signal).await
    }
}

#[tokio::test(start_paused = true)]
async fn dropping_the_last_handle_stops_the_loop_and_ends_the_task() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (inner, counters) = TestJob::new(0, |_| Work::Sleep(0));
    let job = OwnedJob { _tracked: Tracked(drops.clone()), inner };
    let runner = JobRunner::builder("l.drop").interval(Duration::from_millis(10)).spawn(job).unwrap();
    runner.start();
    tokio::time::sleep(Duration::from_millis(25)).await;
    let seen = load(&counters.claims);
    drop(runner);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(load(&counters.claims), seen);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the task ended and dropped the job");
}

#[test]
fn a_runner_never_keeps_the_runtime_from_shutting_down() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let runner = rt.block_on(async {
        let (job, _) = TestJob::new(1, |_| Work::Forever);
        let runner = JobRunner::builder("l.shutdown").spawn(job).unwrap();
        runner.start();
        tokio::time::sleep(Duration::from_millis(10)).await;
        runner
    });
    // A perform that never ends, a handle still alive: the runtime still shuts down.
    rt.shutdown_timeout(Duration::from_millis(100));
    drop(runner);
}
