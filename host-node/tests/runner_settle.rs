//! The settle phase through the tokio host, in virtual time: a job that
//! opts in (`Job::SETTLES`) has each outcome its perform reached written by
//! `settle`, tried again while it raises, through a lapse, and waited for by
//! `dispose`.

use leasehold::core::Millis;
use leasehold::runner::{AbortSignal, BoxError, Job, JobError, JobRunner, PassReport, Settled};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One item; renewals always raise (the store is away), so supervision
/// lapses; `settle` raises `unavailable` times, then answers `then`.
struct Settling {
    claimed: AtomicU32,
    unavailable: u32,
    then: Settled,
    /// When each settle was called, in ms since the runner started.
    settles: Arc<Mutex<Vec<(u64, bool)>>>,
    stop_on_signal: bool,
    start: tokio::time::Instant,
}

impl Job for Settling {
    type Item = u32;
    const HEARTBEAT: bool = true;
    const SETTLES: bool = true;

    async fn claim(&self, _at: Millis) -> Result<Option<u32>, BoxError> {
        Ok((self.claimed.fetch_add(1, Ordering::SeqCst) == 0).then_some(7))
    }

    async fn perform(&self, _item: u32, signal: AbortSignal) -> Result<(), BoxError> {
        if self.stop_on_signal {
            return Err(signal.aborted().await.into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok(())
    }

    async fn heartbeat(&self, _item: u32, _at: Millis) -> Result<bool, BoxError> {
        Err("the database is away".into())
    }

    async fn settle(&self, _item: u32, outcome: Result<(), JobError>) -> Result<Settled, BoxError> {
        let mut settles = self.settles.lock().unwrap();
        settles.push((self.start.elapsed().as_millis() as u64, outcome.is_ok()));
        if settles.len() as u32 <= self.unavailable {
            return Err("the database is away".into());
        }
        Ok(self.then)
    }
}

fn job(unavailable: u32, then: Settled, stop_on_signal: bool) -> (Settling, Arc<Mutex<Vec<(u64, bool)>>>) {
    let settles = Arc::new(Mutex::new(Vec::new()));
    let job = Settling {
        claimed: AtomicU32::new(0),
        unavailable,
        then,
        settles: settles.clone(),
        stop_on_signal,
        start: tokio::time::Instant::now(),
    };
    (job, settles)
}

fn runner(job: Settling) -> JobRunner {
    JobRunner::builder("t.settle").stale_after(Duration::from_secs(3)).heartbeat_every(Duration::from_millis(250)).spawn(job).unwrap()
}

#[tokio::test(start_paused = true)]
async fn an_outcome_is_settled_through_a_lapse_until_the_store_answers() {
    // 100 ms doubling to 1.5 s: the 12th try is about 12 s in, well past
    // the lapse (under 3 s) and its grace.
    let (job, settles) = job(11, Settled::Landed, false);
    let report = runner(job).tick().await;
    assert_eq!(report, PassReport { claimed: 1, performed: 1, failed: 0, claim_lost: 0 });
    let settles = settles.lock().unwrap();
    assert_eq!(settles.len(), 12);
    assert!(settles.iter().all(|(_, ok)| *ok), "each try gets the outcome the perform reached");
    assert!(settles.last().unwrap().0 > 10_000, "{settles:?}");
}

#[tokio::test(start_paused = true)]
async fn a_refused_fence_counts_a_lost_claim() {
    let (job, settles) = job(2, Settled::FenceRefused, false);
    let report = runner(job).tick().await;
    assert_eq!(report, PassReport { claimed: 1, performed: 0, failed: 0, claim_lost: 1 });
    assert_eq!(settles.lock().unwrap().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_perform_that_stops_on_its_signal_settles_nothing() {
    let (job, settles) = job(0, Settled::Landed, true);
    let report = runner(job).tick().await;
    assert_eq!(report, PassReport { claimed: 1, performed: 0, failed: 0, claim_lost: 1 });
    assert!(settles.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn dispose_waits_for_the_settle_to_land() {
    let (job, settles) = job(6, Settled::Landed, false);
    let runner = runner(job);
    runner.start();
    tokio::time::sleep(Duration::from_millis(50)).await;
    runner.dispose().await;
    runner.dispose().await;
    assert_eq!(settles.lock().unwrap().len(), 7, "dispose resolved only once the settle landed");
}
