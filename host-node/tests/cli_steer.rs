//! `leasehold cancel`, `retry`, `pause`, `resume` end to end: bad input
//! exits 2 and changes nothing (a repeated pause or resume is no mistake); a cancelled running command is stopped by
//! its worker and `show` says who cancelled it and why (SQLite, and
//! PostgreSQL when configured); a paused queue is not worked until resumed.

mod cli_support;
mod store_support;

use std::time::{Duration, Instant};

use cli_support::{Scratch, refused, stdout, signal, wait_exit, wait_for_state};
use leasehold::store::{JobId, JobState};

/// Without USER (a service, cron, a container), a cancel records the name
/// of the user it runs as, not `unknown`.
#[tokio::test]
async fn a_cancel_without_user_in_the_environment_names_the_user_it_runs_as() {
    let s = Scratch::new();
    let id = s.enqueue(&["--queue", "q"], "true").to_string();
    s.cmd(&["cancel", &id]).env_remove("USER").assert().success();
    let me = std::process::Command::new("id").arg("-un").output().expect("id -un runs");
    let me = String::from_utf8_lossy(&me.stdout).trim().to_owned();
    let shown = stdout(&s, &["show", &id]);
    assert!(shown.contains(&format!(" by {me}@")), "{shown}");
    assert!(!shown.contains("unknown@"), "{shown}");
}

#[tokio::test]
async fn bad_steering_exits_2_naming_the_mistake_and_changes_nothing() {
    let s = Scratch::new();
    refused(&s, &["cancel", "1"], "no database");
    let queued = s.enqueue(&["--queue", "q"], "true");
    let done = s.enqueue(&["--queue", "q", "--max-attempts", "1"], "false");
    let store = s.store().await;
    store.cancel(&[done], None, "test", leasehold::core::Millis(1)).await.unwrap();
    let (q, d) = (queued.to_string(), done.to_string());
    refused(&s, &["cancel"], "required");
    refused(&s, &["cancel", &q, "--queue", "q", "--state", "queued"], "cannot be used with");
    refused(&s, &["cancel", "--queue", "q"], "--state");
    refused(&s, &["cancel", "--queue", "q", "--state", "dead"], "cannot be cancelled");
    refused(&s, &["cancel", &q, "999"], "unknown job id 999");
    refused(&s, &["cancel", &q, &d], &format!("job {d} is cancelled"));
    refused(&s, &["cancel", "--queue", "nowhere", "--state", "queued", "--yes"], "unknown queue");
    refused(&s, &["cancel", "--queue", "q", "--state", "queued"], "give --yes");
    refused(&s, &["retry", &q], &format!("job {q} is queued"));
    // Said as `leasehold jobs` shows it: a job not yet due is scheduled.
    let later = s.enqueue(&["--queue", "q", "--at", "1h"], "true").to_string();
    refused(&s, &["retry", &later], &format!("job {later} is scheduled"));
    refused(&s, &["retry", "--dead", "--queue", "nowhere"], "unknown queue");
    refused(&s, &["retry", "--queue", "q"], "--dead");
    refused(&s, &["pause", "nowhere"], "unknown queue");
    refused(&s, &["resume", "nowhere"], "unknown queue");
    assert_eq!(store.job(queued).await.unwrap().state, JobState::Queued, "nothing changed");
    assert_eq!(store.job(done).await.unwrap().state, JobState::Cancelled);
    assert!(store.paused_queues().await.unwrap().is_empty());
}

/// Enqueues a command that writes its pid and sleeps, works it, cancels it
/// once running; the command's process must end and `show` say why.
async fn a_cancelled_command_is_stopped(s: &Scratch) {
    let pid_file = s.path("pid");
    let line = format!("echo $$ > {} && exec sleep 60", pid_file.display());
    let id = s.enqueue(&["--queue", "c"], &line);
    let mut worker = s.spawn(&["work", "--queue", "c", "--stale-after", "6s", "--grace", "1s", "--concurrency", "1"]);
    let store = s.store().await;
    wait_for_state(&store, id, JobState::Running, Duration::from_secs(20)).await;
    let started = Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
            break rustix::process::Pid::from_raw(pid).expect("a pid");
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let said = stdout(s, &["cancel", &id.to_string(), "--reason", "not needed"]);
    assert!(said.contains(&format!("cancelled {id}")), "{said}");
    let cancelled = Instant::now();
    while rustix::process::test_kill_process(pid).is_ok() {
        assert!(cancelled.elapsed() < Duration::from_secs(30), "the cancelled command still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let shown = stdout(s, &["show", &id.to_string()]);
    assert!(shown.contains("state:     cancelled"), "{shown}");
    assert!(shown.contains("cancelled: ") && shown.contains(": not needed"), "{shown}");
    assert!(shown.contains("lease-lost") && shown.contains("cancelled by "), "{shown}");
    assert_eq!(store.results(id).await.unwrap(), vec![], "nothing of the attempt is kept");
    signal(&worker, rustix::process::Signal::TERM);
    assert!(wait_exit(&mut worker, Duration::from_secs(20)).success());
    assert_eq!(store.job(id).await.unwrap().state, JobState::Cancelled);
}

#[tokio::test]
async fn a_cancelled_running_command_is_stopped_on_sqlite() {
    a_cancelled_command_is_stopped(&Scratch::new()).await;
}

#[tokio::test]
async fn a_cancelled_running_command_is_stopped_on_postgres() {
    let Some(url) = store_support::pg_schema_url("cli_steer_cancel").await else { return };
    a_cancelled_command_is_stopped(&Scratch::with_url(url)).await;
}

/// A second pause and a second resume are both no mistake: each exits 0 and
/// says the queue already was paused, or was not (a second resume exited 2
/// where a second pause exited 0).
#[tokio::test]
async fn pausing_a_paused_queue_and_resuming_a_running_one_exit_0_saying_so() {
    let s = Scratch::new();
    s.enqueue(&["--queue", "q"], "true");
    let said = stdout(&s, &["resume", "q"]);
    assert_eq!(said, "queue q was not paused: its jobs are claimed as usual (nothing to resume)\n");
    assert!(stdout(&s, &["pause", "q"]).starts_with("paused queue q"));
    assert_eq!(stdout(&s, &["pause", "q"]), "queue q was paused already\n");
    let store = s.store().await;
    assert_eq!(store.paused_queues().await.unwrap().len(), 1, "still paused once");
    assert_eq!(stdout(&s, &["resume", "q"]), "resumed queue q\n");
    assert_eq!(stdout(&s, &["resume", "q"]), "queue q was not paused: its jobs are claimed as usual (nothing to resume)\n");
    assert!(store.paused_queues().await.unwrap().is_empty());
}

/// `show` of a job waiting in a paused queue says the queue is paused, by
/// whom and since when, and that the job is not claimed until it is resumed
/// (it showed the job as due, nothing more); once resumed it says nothing of it.
#[tokio::test]
async fn show_says_that_a_queued_job_waits_for_its_paused_queue() {
    let s = Scratch::new();
    let id = s.enqueue(&["--queue", "q"], "true").to_string();
    let other = s.enqueue(&["--queue", "elsewhere"], "true").to_string();
    stdout(&s, &["pause", "q"]);
    let shown = stdout(&s, &["show", &id]);
    let line = shown.lines().find(|l| l.starts_with("paused:")).unwrap_or_else(|| panic!("no pause said: {shown}"));
    assert!(line.contains("queue q is paused (since ") && line.contains(" by "), "{line}");
    assert!(line.ends_with("so this job is not claimed until `leasehold resume q`"), "{line}");
    assert!(!stdout(&s, &["show", &other]).contains("paused"), "another queue's job is not paused");
    stdout(&s, &["resume", "q"]);
    assert!(!stdout(&s, &["show", &id]).contains("paused"), "resumed");
}

/// A job cancelled while it ran is due only when that attempt's lease ends;
/// `retry` says when, as the store answered it (it said "queued again" as if
/// due at once), and on SQLite that a worker first watches that lease for
/// its window.
async fn a_retry_says_when_a_job_cancelled_while_it_ran_is_due(s: &Scratch) {
    use leasehold::runner::Clock as _;
    let id = s.enqueue(&["--queue", "r"], "true");
    let store = s.store().await;
    let owner = leasehold::liveness::current_owner();
    let now = leasehold::runner::TokioClock::new().now();
    store.claim("r", &owner, now, Duration::from_secs(20)).await.unwrap().expect("due");
    stdout(s, &["cancel", &id.to_string()]);
    let wall = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let before = wall();
    let said = stdout(s, &["retry", &id.to_string()]);
    let after = wall();
    let due_at = store.job(id).await.unwrap().run_at.0;
    let rest = said.strip_prefix(&format!("queued again {id}, due in ")).unwrap_or_else(|| panic!("no due time: {said}"));
    let (seconds, rest) = rest.split_once(" s ").unwrap_or_else(|| panic!("{said}"));
    let said_ms = (seconds.parse::<f64>().unwrap_or_else(|e| panic!("{seconds:?}: {e}")) * 1000.0).round() as u64;
    // What the store set, seen from the retry's clock (tenths rounded up).
    assert!(said_ms + 100 >= due_at - after && said_ms <= due_at - before + 100, "{said} (due at {due_at}, retried in {before}..{after})");
    assert!(said_ms > 10_000, "most of the 20 s lease is ahead: {said}");
    assert!(rest.starts_with("(when the lease of its cancelled attempt ends; that attempt's command is stopped by then)"), "{said}");
    let watched = "on SQLite, a worker claims it only once it has itself seen the lease of its cancelled attempt unrenewed \
                   for that lease's window (20 s), so not sooner than that from now\n";
    if s.url.starts_with("sqlite") {
        assert!(rest.ends_with(watched), "{said}");
    } else {
        assert!(!said.contains("SQLite") && said.ends_with(")\n"), "{said}");
    }
    // A job that waits for nothing is said to be queued again, nothing more.
    let done = s.enqueue(&["--queue", "r", "--max-attempts", "1"], "false");
    store.cancel(&[done], None, "test", now).await.unwrap();
    assert_eq!(stdout(s, &["retry", &done.to_string()]), format!("queued again {done}\n"));
}

/// `events` numbers a retried job's attempts as `show` does, one number per
/// attempt: it showed attempt 1, 0 (the cancel of the queued job), 1 where
/// `show` listed attempts 1 and 2, as it counted the attempts of each fresh
/// budget. A cancel of a job that was not running ended no attempt, and
/// says none.
#[tokio::test]
async fn events_and_show_number_a_retried_jobs_attempts_alike() {
    let s = Scratch::new();
    let id = s.enqueue(&["--queue", "n", "--max-attempts", "1"], "false").to_string();
    stdout(&s, &["work", "--queue", "n", "--until-empty"]);
    stdout(&s, &["retry", &id]);
    stdout(&s, &["cancel", &id]);
    stdout(&s, &["retry", &id]);
    stdout(&s, &["work", "--queue", "n", "--until-empty"]);

    // `attempt N: failed (fencing token T)`, as `show` numbers them.
    let shown = stdout(&s, &["show", &id]);
    let by_show: Vec<(u64, u64)> = shown
        .lines()
        .filter_map(|l| l.strip_prefix("attempt "))
        .map(|l| {
            let (n, rest) = l.split_once(':').expect("attempt N: …");
            let token = rest.rsplit_once("fencing token ").expect("a token").1.trim_end_matches(')');
            (n.parse().unwrap(), token.parse().unwrap())
        })
        .collect();
    assert_eq!(by_show.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 2], "{shown}");

    let job = format!("job {id}");
    let events = stdout(&s, &["events"]);
    let said: Vec<(&str, Option<&str>)> = events
        .lines()
        .filter(|l| l.contains(&format!("{job} ")) || l.contains(&format!("{job}:")))
        .map(|l| {
            let kind = l.split_whitespace().nth(2).expect("a type");
            (kind, l.split_once(&format!("{job} attempt ")).map(|(_, rest)| rest.split(':').next().unwrap()))
        })
        .collect();
    assert_eq!(
        said,
        [("job-dead-lettered", Some("1")), ("job-cancelled", None), ("job-dead-lettered", Some("2"))],
        "{events}"
    );
    // The JSON's attempt is show's for the same fencing token.
    let json = stdout(&s, &["events", "--json"]);
    let by_events: Vec<(u64, u64)> = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .filter(|e| e["type"] == "job-dead-lettered")
        .map(|e| (e["body"]["attempt"].as_u64().expect("an attempt"), e["body"]["token"].as_u64().expect("a token")))
        .collect();
    assert_eq!(by_events, by_show, "{json}");
}

/// On SQLite, then on PostgreSQL when configured.
#[tokio::test]
async fn a_retry_says_when_a_job_cancelled_while_it_ran_is_due_on_either_store() {
    a_retry_says_when_a_job_cancelled_while_it_ran_is_due(&Scratch::new()).await;
    if let Some(url) = store_support::pg_schema_url("cli_steer_retry_due").await {
        a_retry_says_when_a_job_cancelled_while_it_ran_is_due(&Scratch::with_url(url)).await;
    }
}

#[tokio::test]
async fn a_paused_queue_waits_for_resume_and_retry_dead_runs_its_jobs_again() {
    let s = Scratch::new();
    let flag = s.path("flag");
    let line = format!("test -e {}", flag.display());
    let id = s.enqueue(&["--queue", "p", "--max-attempts", "1"], &line);
    stdout(&s, &["work", "--queue", "p", "--until-empty"]);
    let store = s.store().await;
    assert_eq!(store.job(id).await.unwrap().state, JobState::Dead);

    let said = stdout(&s, &["pause", "p"]);
    assert!(said.contains("paused queue p"), "{said}");
    let status = stdout(&s, &["status"]);
    assert!(status.contains("paused") && status.contains("since "), "{status}");
    std::fs::write(&flag, "").unwrap();
    let said = stdout(&s, &["retry", "--dead", "--queue", "p"]);
    assert!(said.contains(&format!("queued again 1 job(s) on queue p: {id}")), "{said}");
    let mut worker = s.spawn(&["work", "--queue", "p"]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(store.job(id).await.unwrap().state, JobState::Queued, "not claimed while paused");
    stdout(&s, &["resume", "p"]);
    let record = wait_for_state(&store, id, JobState::Succeeded, Duration::from_secs(20)).await;
    assert_eq!(record.attempt_log.len(), 2, "the dead attempt stays in the history");
    signal(&worker, rustix::process::Signal::TERM);
    assert!(wait_exit(&mut worker, Duration::from_secs(20)).success());
    assert_eq!(JobId(id.0), record.id);
}
