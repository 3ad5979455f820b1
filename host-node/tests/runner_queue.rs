//! Queue scheduling through the tokio host: one runner is a worker pool on
//! a job queue (virtual time).

use leasehold::core::Millis;
use leasehold::runner::{AbortSignal, BoxError, Job, JobRunner, Scheduling};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// A queue the test fills while the runner works; item `n` runs `n` seconds.
#[derive(Clone, Default)]
struct Queue {
    jobs: Arc<Mutex<VecDeque<u64>>>,
    /// (item, when its perform started).
    started: Arc<Mutex<Vec<(u64, Instant)>>>,
    claims: Arc<Mutex<usize>>,
}

impl Job for Queue {
    type Item = u64;

    async fn claim(&self, _at: Millis) -> Result<Option<u64>, BoxError> {
        *self.claims.lock().unwrap() += 1;
        Ok(self.jobs.lock().unwrap().pop_front())
    }

    async fn perform(&self, item: u64, _signal: AbortSignal) -> Result<(), BoxError> {
        self.started.lock().unwrap().push((item, Instant::now()));
        tokio::time::sleep(Duration::from_secs(item)).await;
        Ok(())
    }
}

fn pool(queue: &Queue, concurrency: u32) -> JobRunner {
    JobRunner::builder("q.pool")
        .scheduling(Scheduling::Queue)
        .interval(Duration::from_secs(3600))
        .concurrency(concurrency)
        .spawn(queue.clone())
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_free_slot_takes_work_woken_in_while_another_slot_runs_a_long_item() {
    let queue = Queue::default();
    queue.jobs.lock().unwrap().push_back(60);
    let runner = pool(&queue, 2);
    runner.start();
    tokio::time::sleep(Duration::from_secs(1)).await;
    queue.jobs.lock().unwrap().push_back(1);
    let woken = Instant::now();
    runner.wake();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let started = queue.started.lock().unwrap().clone();
    assert_eq!(started.iter().map(|(item, _)| *item).collect::<Vec<_>>(), vec![60, 1]);
    assert_eq!(started[1].1, woken, "at once, while item 60 still runs");
}

#[tokio::test(start_paused = true)]
async fn idle_slots_poll_once_per_interval_for_the_whole_pool() {
    let queue = Queue::default();
    let runner = JobRunner::builder("q.idle")
        .scheduling(Scheduling::Queue)
        .interval(Duration::from_millis(500))
        .concurrency(16)
        .spawn(queue.clone())
        .unwrap();
    runner.start();
    tokio::time::sleep(Duration::from_millis(5_001)).await;
    assert_eq!(*queue.claims.lock().unwrap(), 11, "the start's claim and one every 500 ms, for 16 slots");
}

#[tokio::test(start_paused = true)]
async fn quiesce_ends_the_claims_and_waits_for_the_items_in_flight() {
    let queue = Queue::default();
    queue.jobs.lock().unwrap().extend([2, 2, 2, 2]);
    let runner = pool(&queue, 2);
    let started = Instant::now();
    runner.start();
    tokio::time::sleep(Duration::from_millis(10)).await;
    runner.quiesce().await;
    assert_eq!(started.elapsed(), Duration::from_secs(2), "the two items in flight ran to their end");
    assert_eq!(queue.started.lock().unwrap().len(), 2, "their slots claimed no more");
    assert_eq!(queue.jobs.lock().unwrap().len(), 2);
}
