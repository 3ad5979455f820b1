//! A worker stopped (SIGSTOP) while its command runs: the command's guard,
//! which keeps running, ends the command's process group by the lease's exit
//! deadline, before any other worker may reclaim the job; without it the
//! command would run on beside the job's next owner.

mod cli_support;

use cli_support::Scratch;
use rustix::process::{Pid, Signal};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Whether any process of group `pgid` still runs. A zombie has ended (it
/// only waits to be reaped, by init for an orphan), so it does not count:
/// `kill(-pgid, 0)` would.
fn group_running(pgid: i32) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else { return false };
    procs.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { return false };
        // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else { return false };
        let mut fields = rest.split_whitespace();
        let (state, _ppid, pgrp) = (fields.next(), fields.next(), fields.next());
        state != Some("Z") && pgrp.and_then(|p| p.parse().ok()) == Some(pgid)
    })
}

/// Kills (and so resumes) the worker however the test ends: a stopped
/// process never outlives it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_workers_command_is_ended_by_its_guard_before_the_job_may_be_reclaimed() {
    stopped_worker(false).await;
}

/// The same with the worker leading a pid namespace of its own (as when its
/// owner id names another host, so no peer's pid probe can speak for it): its
/// process group is then one its guard cannot name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_in_its_own_pid_namespace_has_its_command_ended_too() {
    if !std::process::Command::new("unshare").args(["--pid", "--fork", "--mount-proc", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: unshare --pid --fork --mount-proc is not allowed here (it needs root)");
        return;
    }
    stopped_worker(true).await;
}

/// A worker stopped for good on the same host as its peers: the peers' pid
/// probe sees a process that still exists, but a stopped one does no work and
/// renews nothing, so a peer reclaims the job once its lease expires and
/// finishes it (before, the job stayed `running` for as long as the worker
/// stayed stopped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_on_the_same_host_reclaims_the_job_of_a_worker_stopped_for_good() {
    let s = Scratch::new();
    let marker = s.path("first-attempt-started");
    // The first attempt sleeps long; the next one finishes at once.
    let id = s.enqueue(&[], &format!("if [ -e {m} ]; then exit 0; fi; touch {m}; exec sleep 60", m = marker.display()));
    let stale = ["--stale-after", "3s", "work", "--concurrency", "1"];
    let stopped = KillOnDrop(s.spawn(&stale));
    let start = Instant::now();
    while !marker.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "the first attempt never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    rustix::process::kill_process(Pid::from_raw(stopped.0.id() as i32).unwrap(), Signal::STOP).expect("stopped");
    let _peer = KillOnDrop(s.spawn(&stale));
    let store = s.store().await;
    let job = cli_support::wait_for_state(&store, id, leasehold::store::JobState::Succeeded, Duration::from_secs(20)).await;
    assert_eq!(cli_support::succeeded_attempts(&job), 1, "{:?}", job.attempt_log);
    let first = &job.attempt_log[0];
    assert_eq!(first.owner.pid, stopped.0.id(), "the stopped worker held the first attempt");
    assert_ne!(job.attempt_log.last().unwrap().owner.pid, stopped.0.id(), "a peer finished the job");
}

/// The pid of the guard whose command line names `marker`.
fn guard_of(marker: &str) -> i32 {
    let procs = std::fs::read_dir("/proc").expect("/proc");
    procs
        .flatten()
        .find_map(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            (cmdline.contains("__guard") && cmdline.contains(marker)).then(|| entry.file_name().to_str()?.parse().ok())?
        })
        .expect("the command's guard")
}

/// The worker `unshare` forked: its pid.
fn child_of(parent: u32) -> i32 {
    let start = Instant::now();
    loop {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).unwrap_or_default();
        if let Some(pid) = children.split_whitespace().next().and_then(|p| p.parse().ok()) {
            return pid;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "unshare started no worker");
        std::thread::sleep(Duration::from_millis(10));
    }
}

async fn stopped_worker(namespaced: bool) {
    let s = Scratch::new();
    let pid_file = s.path("command.pid");
    let id = s.enqueue(&[], &format!("echo $$ > {}; exec sleep 30", pid_file.display()));
    // S = 3 s: renewals every 1 s, skew allowance 500 ms, grace 500 ms.
    let args = ["--database", &s.url, "--events", &s.path("events").display().to_string(), "--stale-after", "3s", "work", "--concurrency", "1"]
        .map(str::to_owned);
    let bin = assert_cmd::cargo::cargo_bin("leasehold");
    let launched = if namespaced {
        std::process::Command::new("unshare")
            .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
            .arg(&bin)
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("unshare starts")
    } else {
        std::process::Command::new(&bin).args(&args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().expect("leasehold starts")
    };
    let worker_pid = namespaced.then(|| child_of(launched.id()));
    let worker = KillOnDrop(launched);
    let target = worker_pid.unwrap_or(worker.0.id() as i32);
    let start = Instant::now();
    // Started once it wrote its pid (its own namespace's, when the worker has one).
    let _: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse().ok()) {
            break pid;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The group the guard leads, by the guard's pid as this process sees it.
    let group = guard_of(&pid_file.display().to_string());
    assert!(group_running(group));
    // Let renewals confirm for a while, then stop the worker.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    rustix::process::kill_process(Pid::from_raw(target).unwrap(), Signal::STOP).expect("stopped");
    let stopped = wall_ms();
    // The last renewal the store holds: a peer may reclaim once it is more
    // than S old (on a clock up to K ahead, S − K after it on ours).
    let store = s.store().await;
    let renewed = store.job(id).await.unwrap().lease.expect("leased").heartbeat_at.expect("renewed").0;
    let ended = loop {
        if !group_running(group) {
            break wall_ms();
        }
        assert!(wall_ms() < stopped + 10_000, "the stopped worker's command still runs 10 s later");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let _ = rustix::process::kill_process(Pid::from_raw(target).unwrap(), Signal::CONT);
    drop(worker);
    let (stale_ms, skew_ms) = (3_000, 500);
    eprintln!(
        "the command's group ended {} ms after the stop, {} ms before the earliest reclaim (last renewal + S − K), \
         {} ms before a peer with the same clock may reclaim (last renewal + S)",
        ended as i64 - stopped as i64,
        (renewed + stale_ms - skew_ms) as i64 - ended as i64,
        (renewed + stale_ms) as i64 - ended as i64
    );
    assert!(ended < renewed + stale_ms - skew_ms, "ended at {ended}, last renewal {renewed}");
}

/// Starts a worker (S = 3 s, one slot), waits until `started` exists (the
/// command creates it), lets it run `before` more, then stops the worker
/// (SIGSTOP) for `stopped` and resumes it. Answers the worker.
async fn stop_and_resume(s: &Scratch, started: &std::path::Path, before: Duration, stopped: Duration) -> KillOnDrop {
    let worker = KillOnDrop(s.spawn(&["--stale-after", "3s", "work", "--concurrency", "1"]));
    let start = Instant::now();
    while !started.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(before).await;
    let pid = Pid::from_raw(worker.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, Signal::STOP).expect("stopped");
    tokio::time::sleep(stopped).await;
    rustix::process::kill_process(pid, Signal::CONT).expect("resumed");
    worker
}

/// A worker stopped past its lease's exit deadline, then resumed with no peer
/// to take its job over: the attempt its guard ended is recorded as failed,
/// saying why, and the job runs again. (The worker, resumed, fires its
/// signal before it reads the guard's report, and the attempt must still say
/// what happened to it rather than vanish as a lost lease.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_resumed_past_its_exit_deadline_records_that_the_guard_ended_the_attempt() {
    let s = Scratch::new();
    let marker = s.path("first-attempt-started");
    let id = s.enqueue(&[], &format!("if [ -e {m} ]; then exit 0; fi; touch {m}; exec sleep 60", m = marker.display()));
    // Stopped 4 s, past the exit deadline (the last renewal + 2.5 s): the
    // guard ends the command meanwhile.
    let _worker = stop_and_resume(&s, &marker, Duration::from_millis(1_000), Duration::from_millis(4_000)).await;
    let store = s.store().await;
    let job = cli_support::wait_for_state(&store, id, leasehold::store::JobState::Succeeded, Duration::from_secs(30)).await;
    let first = &job.attempt_log[0];
    assert_eq!(first.outcome, leasehold::store::AttemptOutcome::Failed, "{:?}", job.attempt_log);
    let error = first.error.as_deref().unwrap_or_default();
    assert!(error.contains("the lease's exit deadline passed"), "{error}");
}

/// A command that finished while its worker was stopped, the worker resumed
/// once the job's lease had gone stale, with no peer to take the job over:
/// the success is recorded and the command never runs again. (Resumed, the
/// worker fired the signal before the runtime had told it of the command's
/// exit, so it took the command for stopped, its slot came free, and its
/// next claim took the stale job over from itself: the command ran twice.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_finished_while_its_worker_was_stopped_is_recorded_once_and_not_run_again() {
    let s = Scratch::new();
    let runs = s.path("runs");
    let id = s.enqueue(&[], &format!("echo run >> {r}; sleep 1; exit 0", r = runs.display()));
    // The command ends 0.7 s into the stop; the lease is stale 3 s after the
    // last renewal.
    let _worker = stop_and_resume(&s, &runs, Duration::from_millis(300), Duration::from_millis(5_000)).await;
    let store = s.store().await;
    let job = cli_support::wait_for_state(&store, id, leasehold::store::JobState::Succeeded, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let ran = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!((ran, job.attempt_log.len()), (1, 1), "{:?}", job.attempt_log);
}
