//! A settlement committed just before its worker is killed is listed by
//! `leasehold events`: the worker is SIGKILLed the moment its completion has
//! committed, before it can write anything else (no event log, no trace),
//! and the `job-done` is there all the same, because job events come from
//! the store's settlements journal, which the settle statement itself
//! appends to. The next worker's event log derives it from that journal
//! too. On SQLite and (when `LEASEHOLD_TEST_PG_URL` is set) PostgreSQL.

mod cli_support;
mod store_support;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use cli_support::Scratch;
use leasehold::store::{JobId, Store};
use rustix::process::{Signal, getpid, kill_process};
use serde_json::{Value, json};

/// Names the database the child works on; unset, the child test does nothing.
const CHILD_VAR: &str = "LEASEHOLD_TEST_SETTLE_THEN_DIE";

/// The worker, run as a child process of this test binary by
/// [`settle_then_die`]: claims the queue's one job, completes it, and
/// SIGKILLs itself as soon as the completion has committed.
#[tokio::test]
#[ignore = "the worker of settle_then_die, run as its child process"]
async fn worker_that_dies_right_after_its_commit() {
    let Ok(url) = std::env::var(CHILD_VAR) else { return };
    let store = Store::connect(&url).await.expect("the child reaches the database");
    let owner = leasehold::liveness::current_owner();
    let now = store_support::wall_now();
    let job = store.claim("default", &owner, now, Duration::from_secs(30)).await.unwrap().expect("a job to claim");
    let landed = store.complete(job.fence(), Some(&json!({"exitCode": 0})), now).await.unwrap();
    assert!(landed.is_updated());
    kill_process(getpid(), Signal::KILL).expect("SIGKILL to itself");
    unreachable!("SIGKILLed");
}

/// Queues one job on `s`, has a child process complete it and die by SIGKILL
/// right after the commit; answers the job.
fn settle_then_die(s: &Scratch) -> JobId {
    let id = s.enqueue(&[], "true");
    let status = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "worker_that_dies_right_after_its_commit", "--ignored", "--test-threads=1"])
        .env(CHILD_VAR, &s.url)
        .status()
        .expect("the child runs");
    assert_eq!(status.signal(), Some(9), "the child died by SIGKILL: {status:?}");
    id
}

/// The `job-done` events `leasehold events --json` lists for `job`.
fn job_done_events(s: &Scratch, job: JobId) -> Vec<Value> {
    let out = s.cmd(&["events", "--json"]).output().expect("events runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("one JSON event per line"))
        .filter(|e| e["type"] == "job-done" && e["body"]["job"] == job.0)
        .collect()
}

/// The `job-done` events the worker event logs in the events folder hold
/// for `job`.
fn logged_job_done_events(s: &Scratch, job: JobId) -> Vec<Value> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(s.path("events")).expect("the events folder").flatten() {
        if entry.path().extension().is_some_and(|x| x == "log") {
            let read = leasehold::eventlog::read_log(&entry.path(), 0).expect("the log reads");
            found.extend(
                read.records
                    .into_iter()
                    .filter(|r| r.event.kind == "job-done" && r.event.body["job"] == job.0)
                    .map(|r| serde_json::to_value(&r.event).expect("an event serialises")),
            );
        }
    }
    found
}

#[tokio::test]
async fn a_job_done_committed_just_before_its_worker_is_killed_reaches_the_next_workers_event_log() {
    let s = Scratch::new();
    let job = settle_then_die(&s);
    s.cmd(&["work", "--until-empty"]).assert().success();
    let logged = logged_job_done_events(&s, job);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["body"]["attempt"], 1);
    // The next run reopens the same log (slots are reused): nothing twice.
    s.cmd(&["work", "--until-empty"]).assert().success();
    assert_eq!(logged_job_done_events(&s, job).len(), 1);
}

#[tokio::test]
async fn a_job_done_committed_just_before_its_worker_is_killed_is_in_events_on_sqlite() {
    let s = Scratch::new();
    let job = settle_then_die(&s);
    let done = job_done_events(&s, job);
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0]["body"]["attempt"], 1);
    assert!(done[0]["identity"]["pid"].as_u64().is_some(), "names the worker that settled: {done:?}");
}

#[tokio::test]
async fn a_job_done_committed_just_before_its_worker_is_killed_is_in_events_on_postgres() {
    let Some(url) = store_support::pg_schema_url("cli_events_crash").await else { return };
    let s = Scratch::with_url(url);
    let job = settle_then_die(&s);
    assert_eq!(job_done_events(&s, job).len(), 1);
}
