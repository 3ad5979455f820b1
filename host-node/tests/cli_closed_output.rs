//! The command-line tool whose stderr or stdout is a pipe nobody reads any
//! more (a log collector that went away, `| head`): what it has to say is
//! dropped, and it goes on with its work instead of panicking on the write.

mod cli_support;

use cli_support::{Scratch, signal, wait_exit, wait_for_state};
use leasehold::store::JobState;
use rustix::process::Signal;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn work_with_a_closed_stderr_works_drains_and_exits_0() {
    let s = Scratch::new();
    // No database yet: `work` creates it and says so on stderr.
    let mut worker = s.spawn(&["work", "--concurrency", "1"]);
    drop(worker.stderr.take());
    let store = loop {
        if s.path("queue.db").exists() {
            break s.store().await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let id = s.enqueue(&[], "sleep 1");
    wait_for_state(&store, id, JobState::Running, Duration::from_secs(20)).await;
    // Said on stderr: stopping, finishing the running commands.
    signal(&worker, Signal::INT);
    let status = wait_exit(&mut worker, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status}");
    assert_eq!(store.job(id).await.unwrap().state, JobState::Succeeded);
}

#[test]
fn enqueue_with_a_closed_stdout_queues_the_job_and_exits_0() {
    let s = Scratch::new();
    s.enqueue(&[], "true");
    let mut child = s.spawn(&["enqueue", "--", "echo", "unread"]);
    drop(child.stdout.take());
    let status = wait_exit(&mut child, Duration::from_secs(20));
    let mut said = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut said).unwrap();
    assert_eq!(status.code(), Some(0), "{status}: {said}");
    assert!(!said.contains("panicked"), "{said}");
    let jobs = cli_support::stdout(&s, &["jobs"]);
    assert!(jobs.contains("echo unread"), "{jobs}");
}
