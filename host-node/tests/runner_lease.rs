//! Seed 000 heartbeat clauses and our supervised renewals and abort grace,
//! through the tokio host in virtual time.

mod common;
use common::*;
use leasehold::core::Event;
use leasehold::runner::{JobRunner, PassReport};
use std::sync::Arc;
use std::time::Duration;

fn report(claimed: u32, performed: u32, failed: u32, claim_lost: u32) -> PassReport {
    PassReport { claimed, performed, failed, claim_lost }
}

/// S = 3000, I = 250 (so K = 125) and a 250 ms abort grace, which leaves a
/// write tolerance of W = 3000 − 250 − 125 − 250 − 1 = 2374 ms.
fn builder(name: &str) -> leasehold::runner::JobRunnerBuilder {
    plain(name).abort_grace(Duration::from_millis(250))
}

/// As [`builder`] with the default abort grace.
fn plain(name: &str) -> leasehold::runner::JobRunnerBuilder {
    JobRunner::builder(name).stale_after(Duration::from_millis(3_000)).heartbeat_every(Duration::from_millis(250))
}

#[tokio::test(start_paused = true)]
async fn renewals_that_land_trace_heartbeats_and_keep_the_work_going() {
    let (inner, counters) = TestJob::new(1, |_| Work::Sleep(1_000));
    let (events, sink) = recorder();
    let job = RenewingJob { inner, renew: |_| Some(Ok(true)), renew_ms: 10 };
    let runner = builder("t.beat").on_event(sink).spawn(job).unwrap();
    assert_eq!(runner.tick().await, report(1, 1, 0, 0));
    // The renewal due at 1000 ms, as the work ends, is started first: the
    // runner carries out what its timers decide before it polls the work.
    assert_eq!(load(&counters.renewals), 4, "at 250, 500, 750 and 1000 ms");
    assert_eq!(types(&events).iter().filter(|t| **t == "heartbeat").count(), 3, "the last one abandoned as the work ended");
}

#[tokio::test(start_paused = true)]
async fn a_renewal_answering_false_aborts_the_signal_with_claim_lost() {
    let (inner, counters) = TestJob::new(1, |_| Work::UntilAborted);
    let (events, sink) = recorder();
    let job = RenewingJob { inner, renew: |_| Some(Ok(false)), renew_ms: 0 };
    let runner = builder("t.lost").on_event(sink).spawn(job).unwrap();
    assert_eq!(runner.tick().await, report(1, 0, 0, 1));
    assert_eq!(*counters.reasons.lock().unwrap(), vec![(0, false)]);
    assert!(events.lock().unwrap().iter().any(|e| matches!(&e.event, Event::ClaimLost { lapsed: false, .. })));
    assert!(!types(&events).contains(&"item-failed"), "a lost claim is not a failure");
}

#[tokio::test(start_paused = true)]
async fn renewals_that_hang_lapse_the_claim_before_a_peer_could_reclaim_it() {
    let (inner, counters) = TestJob::new(1, |_| Work::UntilAborted);
    let (events, sink) = recorder();
    let job = RenewingJob { inner, renew: |_| None, renew_ms: 0 };
    let runner = builder("t.lapse").on_event(sink).spawn(job).unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(runner.tick().await, report(1, 0, 0, 1));
    // W = 2374, then the reconfirm bound of 250 ms: lapsed at 2624, so the
    // perform is dropped by 2874, before a peer 125 ms ahead may reclaim at
    // 2875.
    assert_eq!(started.elapsed(), Duration::from_millis(2_624));
    assert_eq!(*counters.reasons.lock().unwrap(), vec![(0, true)]);
    let ev = events.lock().unwrap();
    assert!(ev.iter().any(|e| matches!(&e.event, Event::ClaimLost { lapsed: true, unconfirmed_ms: 2_624, .. })));
}

#[tokio::test(start_paused = true)]
async fn a_perform_that_ignores_the_abort_is_dropped_after_the_grace_period() {
    let (inner, counters) = TestJob::new(1, |_| Work::Forever);
    let job = RenewingJob { inner, renew: |_| Some(Ok(false)), renew_ms: 0 };
    let runner = builder("t.grace").abort_grace(Duration::from_millis(500)).spawn(job).unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(runner.tick().await, report(1, 0, 0, 1));
    assert_eq!(started.elapsed(), Duration::from_millis(750), "lost at 250 ms, dropped 500 ms later");
    assert_eq!(load(&counters.dropped), 1, "the perform future was dropped");
}

#[tokio::test(start_paused = true)]
async fn the_default_grace_is_the_smaller_of_five_seconds_and_what_fits_in_the_lease() {
    let (inner, _) = TestJob::new(1, |_| Work::Forever);
    let job = RenewingJob { inner, renew: |_| Some(Ok(false)), renew_ms: 0 };
    let runner = plain("t.grace-default").spawn(job).unwrap();
    let started = tokio::time::Instant::now();
    runner.tick().await;
    // The grace that fits in 3 s is 3000 − 125 − 2 · 250 = 2375 ms, which
    // leaves W = 249: the renewal at 249 ms answers that the claim is lost,
    // and the perform is dropped 2375 ms later.
    assert_eq!(started.elapsed(), Duration::from_millis(249 + 2_375));
    let (inner, _) = TestJob::new(1, |_| Work::Forever);
    let job = RenewingJob { inner, renew: |_| Some(Ok(false)), renew_ms: 0 };
    let long = JobRunner::builder("t.grace-5s").stale_after(Duration::from_secs(60)).heartbeat_every(Duration::from_millis(250));
    let runner = long.spawn(job).unwrap();
    let started = tokio::time::Instant::now();
    runner.tick().await;
    assert_eq!(started.elapsed(), Duration::from_millis(250 + 5_000), "5 s where it fits");
}

#[tokio::test(start_paused = true)]
async fn an_abort_grace_that_does_not_fit_in_the_lease_is_refused_naming_both_builder_methods() {
    let (inner, _) = TestJob::new(1, |_| Work::Forever);
    let job = RenewingJob { inner, renew: |_| Some(Ok(true)), renew_ms: 0 };
    let error = plain("t.grace-long").abort_grace(Duration::from_millis(2_376)).spawn(job).unwrap_err();
    let text = error.to_string();
    assert!(text.starts_with("abort_grace (2376ms) does not fit in stale_after (3000ms)"), "{text}");
    assert!(text.contains("at most 2375ms of grace fits"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_renewal_that_raises_traces_heartbeat_failed_and_keeps_the_lease() {
    let (inner, _) = TestJob::new(1, |_| Work::Sleep(600));
    let (events, sink) = recorder();
    let job = RenewingJob { inner, renew: |_| Some(Err(())), renew_ms: 5 };
    let runner = builder("t.hbfail").on_event(sink).spawn(job).unwrap();
    assert_eq!(runner.tick().await, report(1, 1, 0, 0));
    assert_eq!(types(&events).iter().filter(|t| **t == "heartbeat-failed").count(), 2);
}

/// A job whose one item records its signal's deadline at the start and after
/// each of `moves` deadline moves.
struct DeadlineJob {
    claimed: std::sync::atomic::AtomicBool,
    seen: std::sync::Mutex<Vec<Option<tokio::time::Instant>>>,
    moves: usize,
}

impl leasehold::runner::Job for DeadlineJob {
    type Item = u64;
    const HEARTBEAT: bool = true;

    async fn claim(&self, _at: leasehold::core::Millis) -> Result<Option<u64>, leasehold::runner::BoxError> {
        Ok((!self.claimed.swap(true, std::sync::atomic::Ordering::SeqCst)).then_some(1))
    }

    async fn perform(&self, _item: u64, signal: leasehold::runner::AbortSignal) -> Result<(), leasehold::runner::BoxError> {
        let mut deadline = signal.deadline();
        self.seen.lock().unwrap().push(deadline);
        for _ in 0..self.moves {
            deadline = signal.deadline_moved(deadline).await;
            self.seen.lock().unwrap().push(deadline);
        }
        Ok(())
    }

    async fn heartbeat(&self, _item: u64, _at: leasehold::core::Millis) -> Result<bool, leasehold::runner::BoxError> {
        Ok(true)
    }
}

#[tokio::test(start_paused = true)]
async fn the_signal_shows_the_exit_deadline_and_each_confirmed_renewal_moves_it() {
    let job = Arc::new(DeadlineJob { claimed: Default::default(), seen: Default::default(), moves: 2 });
    let started = tokio::time::Instant::now();
    let runner = builder("t.deadline").spawn(ArcJob(job.clone())).unwrap();
    assert_eq!(runner.tick().await, report(1, 1, 0, 0));
    let seen = job.seen.lock().unwrap().clone();
    // W + I + G = 2374 + 250 + 250 = 2874 after the claim, then after the
    // renewals sent at 250 and 500 ms.
    let at = |ms| Some(started + Duration::from_millis(ms));
    assert_eq!(seen, vec![at(2_874), at(250 + 2_874), at(500 + 2_874)]);
}

/// Shares a job between the runner and the test.
struct ArcJob<J>(Arc<J>);

impl<J: leasehold::runner::Job> leasehold::runner::Job for ArcJob<J> {
    type Item = J::Item;
    const HEARTBEAT: bool = J::HEARTBEAT;

    async fn claim(&self, at: leasehold::core::Millis) -> Result<Option<J::Item>, leasehold::runner::BoxError> {
        self.0.claim(at).await
    }

    async fn perform(&self, item: J::Item, signal: leasehold::runner::AbortSignal) -> Result<(), leasehold::runner::BoxError> {
        self.0.perform(item, signal).await
    }

    async fn heartbeat(&self, item: J::Item, at: leasehold::core::Millis) -> Result<bool, leasehold::runner::BoxError> {
        self.0.heartbeat(item, at).await
    }
}

#[tokio::test(start_paused = true)]
async fn a_job_that_does_not_renew_has_no_deadline() {
    let (inner, _) = TestJob::new(1, |_| Work::Sleep(10));
    struct Check(TestJob);
    impl leasehold::runner::Job for Check {
        type Item = u64;
        async fn claim(&self, at: leasehold::core::Millis) -> Result<Option<u64>, leasehold::runner::BoxError> {
            self.0.claim(at).await
        }
        async fn perform(&self, item: u64, signal: leasehold::runner::AbortSignal) -> Result<(), leasehold::runner::BoxError> {
            assert_eq!(signal.deadline(), None);
            self.0.perform(item, signal).await
        }
    }
    let runner = builder("t.no-deadline").spawn(Check(inner)).unwrap();
    assert_eq!(runner.tick().await, report(1, 1, 0, 0));
}

/// A job that keeps the lease policy spawn tells it.
struct Bound(Arc<std::sync::Mutex<Option<leasehold::core::lease::LeasePolicy>>>);

impl leasehold::runner::Job for Bound {
    type Item = u64;
    const HEARTBEAT: bool = true;

    fn bind_lease(&self, policy: &leasehold::core::lease::LeasePolicy) {
        *self.0.lock().unwrap() = Some(*policy);
    }

    async fn claim(&self, _at: leasehold::core::Millis) -> Result<Option<u64>, leasehold::runner::BoxError> {
        Ok(None)
    }

    async fn perform(&self, _item: u64, _signal: leasehold::runner::AbortSignal) -> Result<(), leasehold::runner::BoxError> {
        Ok(())
    }

    async fn heartbeat(&self, _item: u64, _at: leasehold::core::Millis) -> Result<bool, leasehold::runner::BoxError> {
        Ok(true)
    }
}

#[tokio::test(start_paused = true)]
async fn spawn_tells_a_renewing_job_its_lease_policy_so_a_page_is_handed_over_within_half_the_skew() {
    // A worker hands a page's jobs over unrenewed only within the policy's claim age
    // tolerance: at a 150 ms cadence (K = 75 ms) that is 37 ms, not a fixed 100 ms.
    let told = Arc::new(std::sync::Mutex::new(None));
    let runner = JobRunner::builder("bound")
        .stale_after(Duration::from_millis(600))
        .heartbeat_every(Duration::from_millis(150))
        .spawn(Bound(told.clone()))
        .unwrap();
    let policy = told.lock().unwrap().expect("spawn told the job its lease policy");
    assert_eq!((policy.stale_after_ms, policy.heartbeat_interval_ms, policy.skew_allowance_ms), (600, 150, 75));
    assert_eq!(policy.claim_age_tolerance_ms(), 37);
    runner.dispose().await;
}

/// Renews at once; each perform does a step of work every 100 ms, noting
/// when and the exit deadline its signal showed then, and stops on its
/// signal unless `ignores_signal`. A step may first hold the thread for
/// `block` (a blocking call) on the step numbered `block_at`.
struct Stepping {
    steps: std::sync::Mutex<Vec<(tokio::time::Instant, Option<tokio::time::Instant>)>>,
    claimed: std::sync::atomic::AtomicBool,
    ignores_signal: bool,
    block: Option<(usize, Duration)>,
}

impl Stepping {
    fn new(ignores_signal: bool, block: Option<(usize, Duration)>) -> Arc<Self> {
        Arc::new(Stepping { steps: Default::default(), claimed: Default::default(), ignores_signal, block })
    }

    /// The steps taken at or after the exit deadline their signal showed.
    fn late_steps(&self) -> usize {
        self.steps.lock().unwrap().iter().filter(|(at, deadline)| deadline.is_none_or(|d| *at >= d)).count()
    }
}

impl leasehold::runner::Job for Stepping {
    type Item = u64;
    const HEARTBEAT: bool = true;

    async fn claim(&self, _at: leasehold::core::Millis) -> Result<Option<u64>, leasehold::runner::BoxError> {
        Ok((!self.claimed.swap(true, std::sync::atomic::Ordering::SeqCst)).then_some(0))
    }

    async fn perform(&self, _item: u64, signal: leasehold::runner::AbortSignal) -> Result<(), leasehold::runner::BoxError> {
        for n in 0.. {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if let Some((at, block)) = self.block
                && n == at
            {
                std::thread::sleep(block);
            }
            if !self.ignores_signal {
                signal.check()?;
            }
            self.steps.lock().unwrap().push((tokio::time::Instant::now(), signal.deadline()));
        }
        Ok(())
    }

    async fn heartbeat(&self, _item: u64, _at: leasehold::core::Millis) -> Result<bool, leasehold::runner::BoxError> {
        Ok(true)
    }
}

/// Runs a `Stepping` job for 1 s, freezes the whole runtime for 10 s (as a
/// SIGSTOP of the process does: nothing is polled while time passes), then
/// lets it run 1 s more. Answers the job.
async fn frozen_for_ten_seconds(name: &str, ignores_signal: bool) -> Arc<Stepping> {
    let job = Stepping::new(ignores_signal, None);
    let runner = builder(name).spawn(ArcJob(job.clone())).unwrap();
    runner.start();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert!(job.steps.lock().unwrap().len() >= 9, "the work went on while renewals landed");
    // advance moves the clock without polling anything until it yields:
    // the runner and the work wake together, 10 s on.
    tokio::time::advance(Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    runner.dispose().await;
    job
}

#[tokio::test(start_paused = true)]
async fn work_woken_after_a_freeze_past_its_exit_deadline_finds_its_signal_fired() {
    // The runner's timer and the work's wake-up came due together: the
    // lapse was decided, but the work was polled before the abort was
    // carried out and took a step 10 s after its deadline.
    let job = frozen_for_ten_seconds("t.frozen", false).await;
    assert_eq!(job.late_steps(), 0, "a step was taken at or after its exit deadline");
}

#[tokio::test(start_paused = true)]
async fn work_that_ignores_its_signal_is_dropped_at_once_after_a_freeze_past_its_exit_deadline() {
    // A grace (250 ms) counted from the late lapse would let the work take
    // three steps after its deadline, though it was spent before the freeze
    // ended: the drop is due by the exit deadline (Job::GUARDED is false).
    let job = frozen_for_ten_seconds("t.frozen-deaf", true).await;
    assert_eq!(job.late_steps(), 0, "a step was taken at or after its exit deadline");
}

#[tokio::test]
async fn work_that_held_the_thread_past_its_exit_deadline_reads_its_signal_fired() {
    // Real time: S = 600 ms, I = 100 ms, so the exit deadline is 549 ms
    // after the last confirmed renewal. The work blocks the thread (the
    // runner's too) for 1.2 s, then checks its signal before its next step:
    // the runner had not had the thread to fire it.
    let job = Stepping::new(false, Some((2, Duration::from_millis(1_200))));
    let runner = JobRunner::builder("t.blocked")
        .stale_after(Duration::from_millis(600))
        .heartbeat_every(Duration::from_millis(100))
        .spawn(ArcJob(job.clone()))
        .unwrap();
    runner.start();
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    runner.dispose().await;
    let steps = job.steps.lock().unwrap().len();
    assert_eq!(steps, 2, "two steps before the block, none after it");
    assert_eq!(job.late_steps(), 0, "a step was taken at or after its exit deadline");
}
