//! Ctrl-C on `leasehold work`: the first interrupt drains the jobs in flight
//! and exits 0; a second one ends the running commands.

mod cli_support;

use cli_support::{Scratch, signal, wait_exit, wait_for_state};
use leasehold::store::{AttemptOutcome, JobId, JobState, Store};
use rustix::process::Signal;
use std::process::{Child, ExitStatus};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn the_first_interrupt_lets_the_running_command_finish_then_exits_0() {
    let s = Scratch::new();
    let id = s.enqueue(&[], "sh -c 'sleep 1; echo finished'");
    let later = s.enqueue(&["--at", "1s"], "true");
    let mut worker = s.spawn(&["work", "--concurrency", "1"]);
    let store = s.store().await;
    wait_for_state(&store, id, JobState::Running, Duration::from_secs(20)).await;
    signal(&worker, Signal::INT);
    let status = wait_exit(&mut worker, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "a drained worker exits 0");

    let job = store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded, "the job in flight finished");
    assert_eq!(store.results(id).await.unwrap()[0].1["output"], "finished\n");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(store.job(later).await.unwrap().state, JobState::Queued, "no claims after the interrupt");
}

/// `sleep 60` enqueued on `s` and running under `work --concurrency
/// CONCURRENCY --grace 1s`: its id, the worker and a store on the queue.
async fn sleeping_under_work(s: &Scratch, concurrency: &str) -> (JobId, Child, Store) {
    let id = s.enqueue(&[], "sleep 60");
    let worker = s.spawn(&["work", "--concurrency", concurrency, "--grace", "1s"]);
    let store = s.store().await;
    wait_for_state(&store, id, JobState::Running, Duration::from_secs(20)).await;
    (id, worker, store)
}

/// Interrupts `worker` twice, 300 ms apart (SIGINT, then SIGTERM), and
/// answers how it exited.
async fn interrupt_twice(worker: &mut Child) -> ExitStatus {
    signal(worker, Signal::INT);
    tokio::time::sleep(Duration::from_millis(300)).await;
    signal(worker, Signal::TERM);
    wait_exit(worker, Duration::from_secs(10))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_interrupt_ends_the_running_command_and_its_attempt_fails() {
    let s = Scratch::new();
    let (id, mut worker, store) = sleeping_under_work(&s, "1").await;
    assert_eq!(interrupt_twice(&mut worker).await.code(), Some(0));

    let job = store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Queued, "the ended attempt is retried later, not lost");
    let attempt = &job.attempt_log[0];
    assert_eq!(attempt.outcome, AttemptOutcome::Failed);
    assert_eq!(attempt.error.as_deref(), Some("stopped by a second interrupt"));
}

/// A free slot takes work that arrives while another slot runs a long
/// command: each slot claims on its own, not only once the long command ends.
#[tokio::test(flavor = "multi_thread")]
async fn a_free_slot_starts_a_job_queued_while_a_long_one_runs() {
    let s = Scratch::new();
    let (long, mut worker, store) = sleeping_under_work(&s, "2").await;
    // Let the queue be seen empty, then add a job.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let quick = s.enqueue(&[], "true");
    let done = wait_for_state(&store, quick, JobState::Succeeded, Duration::from_secs(5)).await;
    assert_eq!(done.state, JobState::Succeeded);
    assert_eq!(store.job(long).await.unwrap().state, JobState::Running, "the long one still runs");
    assert_eq!(interrupt_twice(&mut worker).await.code(), Some(0));
}
