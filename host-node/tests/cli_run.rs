//! `leasehold run`, `enqueue`, `work --until-empty`, `show`, `jobs`,
//! `events` end to end through the built binary on a SQLite file.

mod cli_support;
mod store_support;

use cli_support::{Scratch, examples, succeeded_attempts, summary};
use leasehold::store::JobState;
use predicates::prelude::*;
use std::process::Command;

#[tokio::test]
async fn run_works_the_example_workload_and_every_output_verifies() {
    let s = Scratch::new();
    let work = s.path("work");
    let made = Command::new(examples().join("make-workload.sh")).arg(&work).arg("12").status().unwrap();
    assert!(made.success());
    let out = s.cmd(&["run", work.join("jobs.txt").to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let sum = summary(&out.stdout);
    assert_eq!(sum["jobs"], "24");
    assert_eq!(sum["done"], "24");
    assert_eq!(sum["dead-lettered"], "0");
    assert_eq!(sum["failed then retried"], "0");
    assert!(sum["time taken"].ends_with('s'));
    let verified = Command::new(examples().join("verify-workload.sh")).arg(&work).status().unwrap();
    assert!(verified.success(), "every .gz and checksum the jobs wrote is right");
    // Not a terminal: plain progress lines, no bar.
    assert!(String::from_utf8_lossy(&out.stderr).contains("progress: "));
}

#[tokio::test]
async fn a_failing_line_is_retried_then_dead_lettered_and_run_exits_1() {
    let s = Scratch::new();
    let jobs = s.jobs_file(&["# a comment", "", "echo fine", "sh -c 'echo broken >&2; exit 3'"]);
    let out = s.cmd(&["run", jobs.to_str().unwrap(), "--max-attempts", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let sum = summary(&out.stdout);
    assert_eq!((sum["jobs"].as_str(), sum["done"].as_str()), ("2", "1"));
    assert_eq!(sum["failed then retried"], "1", "the first failure was retried");
    assert_eq!(sum["dead-lettered"], "1", "the second, on the last attempt, dead-lettered");

    let store = s.store().await;
    let dead = store.list_jobs(None, Some(JobState::Dead), 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].last_error.as_deref(), Some("exit code 3"));
    s.cmd(&["show", &dead[0].id.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains("state:     dead"))
        .stdout(predicate::str::contains("exit:    3"))
        .stdout(predicate::str::contains("broken"))
        .stdout(predicate::str::contains("attempt 2: failed"));
}

#[tokio::test]
async fn enqueue_then_work_until_empty_runs_it_and_show_prints_its_output() {
    let s = Scratch::new();
    let id = s.enqueue(&["--queue", "q1", "--timeout", "1m"], "echo hello from leasehold");
    let again = s.enqueue(&["--queue", "q1", "--idempotency-key", "k"], "echo once");
    let dup = s.enqueue(&["--queue", "q1", "--idempotency-key", "k"], "echo once");
    assert_eq!(again, dup, "the same idempotency key queues nothing new");
    let out = s.cmd(&["work", "--queue", "q1", "--until-empty", "--concurrency", "3"]).timeout(std::time::Duration::from_secs(30)).output().unwrap();
    assert!(out.status.success());
    // A worker started in a terminal says it works, once: it prints nothing per job.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.contains("working queue")).collect::<Vec<_>>(),
        ["leasehold: working queue q1, 3 commands at a time; stops claiming when the queue is empty, or at Ctrl-C (`leasehold status` and `jobs` show the queue)"]
    );

    let store = s.store().await;
    let job = store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(succeeded_attempts(&job), 1);
    assert_eq!(store.results(id).await.unwrap()[0].1["output"], "hello from leasehold\n");
    let [worker] = store.workers().await.unwrap().try_into().expect("the worker recorded itself, its slots as one");
    assert_eq!((worker.queue.as_str(), worker.counters.claimed, worker.counters.succeeded), ("q1", 2, 2), "{worker:?}");
    assert!(worker.stopped_at.is_some(), "it said it stopped: {worker:?}");
    s.cmd(&["show", &id.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains("hello from leasehold"))
        .stdout(predicate::str::contains("exit:    0"))
        .stdout(predicate::str::contains("timeout:   1m"));
    s.cmd(&["jobs", "--state", "succeeded", "--queue", "q1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("echo hello from leasehold"));
    s.cmd(&["status"]).assert().success().stdout(predicate::str::contains("q1"));
}

#[tokio::test]
async fn a_command_whose_output_holds_nul_bytes_succeeds_with_u_fffd_in_their_place() {
    // On every store the command's output is kept as its result, which may not hold NUL;
    // on PostgreSQL the completion was refused at every try and the job never settled.
    let mut scratches = vec![Scratch::new()];
    scratches.extend(store_support::pg_schema_url("cli_run_nul_output").await.map(Scratch::with_url));
    for s in scratches {
        let id = s.enqueue(&["--max-attempts", "1"], r"printf 'a\000b'");
        s.cmd(&["work", "--until-empty"]).timeout(std::time::Duration::from_secs(30)).assert().success();
        let store = s.store().await;
        let job = store.job(id).await.unwrap();
        assert_eq!((job.state, job.last_error.as_deref()), (JobState::Succeeded, None));
        assert_eq!(store.results(id).await.unwrap()[0].1["output"], "a\u{FFFD}b");
    }
}

#[tokio::test]
async fn work_delete_succeeded_deletes_the_jobs_that_succeed_and_keeps_the_dead() {
    let s = Scratch::new();
    let done = s.enqueue(&["--queue", "q1"], "echo gone");
    let dead = s.enqueue(&["--queue", "q1", "--max-attempts", "1"], "sh -c 'exit 5'");
    s.cmd(&["work", "--queue", "q1", "--until-empty", "--delete-succeeded"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .success();
    s.cmd(&["show", &done.to_string()])
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!("unknown job id {done}")))
        .stderr(predicate::str::contains("work --delete-succeeded"));
    let store = s.store().await;
    assert_eq!(store.job(dead).await.unwrap().state, JobState::Dead);
    let counts = store.counts(store_support::wall_now()).await.unwrap();
    assert_eq!(counts.iter().map(|c| (c.succeeded, c.dead)).collect::<Vec<_>>(), [(0, 1)]);
    // The event log still says it was done.
    let out = s.cmd(&["events"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("job-done          job {done} attempt 1")), "{text}");
}

#[tokio::test]
async fn enqueue_at_a_later_time_leaves_the_job_queued_until_due() {
    let s = Scratch::new();
    let id = s.enqueue(&["--at", "1h"], "true");
    let store = s.store().await;
    let job = store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Queued);
    assert!(job.run_at.since(job.created_at) >= 3_599_000, "due an hour after it was queued");
}

#[tokio::test]
async fn events_shows_each_job_settlement_by_id() {
    let s = Scratch::new();
    let jobs = s.jobs_file(&["true", "sh -c 'exit 4'"]);
    s.cmd(&["run", jobs.to_str().unwrap(), "--max-attempts", "1"]).assert().code(1);
    let out = s.cmd(&["events", "--json"]).output().unwrap();
    assert!(out.status.success());
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).cloned().collect::<Vec<_>>();
    let done = of("job-done");
    let dead = of("job-dead-lettered");
    assert_eq!(done.len(), 1, "{events:?}");
    assert_eq!(dead.len(), 1, "{events:?}");
    assert_eq!(dead[0]["body"]["error"], "exit code 4");
    assert_eq!(dead[0]["body"]["attempt"], 1);
    let ids: Vec<u64> = [&done[0], &dead[0]].iter().map(|e| e["body"]["job"].as_u64().expect("a job id")).collect();
    assert_ne!(ids[0], ids[1]);
    assert_eq!(done[0]["identity"]["pid"].as_u64(), dead[0]["identity"]["pid"].as_u64(), "{events:?}");
    assert!(done[0]["identity"]["pid"].as_u64().is_some(), "a settlement names the worker that settled it: {:?}", done[0]);
    // The runner's trace is there too, by position in the pass.
    assert_eq!(of("claimed").len(), 2);
    let text = s.cmd(&["events"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("job-done          job {} attempt 1 (pid ", ids[0])), "{text}");
    assert!(text.lines().any(|l| l.contains("leasehold.default  job-done")), "{text}");
    assert!(text.lines().any(|l| l.contains("leasehold.default  pass-end")), "one runner for the pool: {text}");
    assert!(text.contains(&format!("job-dead-lettered job {} attempt 1: exit code 4", ids[1])), "{text}");
    assert!(!text.contains(" claimed "), "lines leave out the item events: {text}");
}

#[tokio::test]
async fn work_until_empty_waits_for_a_job_due_later_as_its_help_says() {
    // A job due later counts as queued: the help said only "no queued or running jobs",
    // which status and jobs tell apart from scheduled ones.
    let s = Scratch::new();
    let help = cli_support::stdout(&s, &["work", "--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Jobs due later count as queued"), "{help}");
    let id = s.enqueue(&["--at", "2s"], "true");
    let started = std::time::Instant::now();
    s.cmd(&["work", "--until-empty"]).timeout(std::time::Duration::from_secs(30)).assert().success();
    assert!(started.elapsed() >= std::time::Duration::from_millis(1500), "it waited for the job: {:?}", started.elapsed());
    assert_eq!(s.store().await.job(id).await.unwrap().state, JobState::Succeeded);
}

#[tokio::test]
async fn show_read_by_a_reader_that_went_away_ends_quietly() {
    // `leasehold show ID | head -3`: the pipe is closed before show writes.
    let s = Scratch::new();
    let id = s.enqueue(&[], "echo one; echo two; echo three");
    s.cmd(&["work", "--until-empty"]).timeout(std::time::Duration::from_secs(30)).assert().success();
    for args in [vec!["show", &*id.to_string()], vec!["jobs"], vec!["status"], vec!["events"]] {
        let mut child = s.spawn(&args);
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.is_empty(), "{args:?}: {:?} {stderr}", out.status);
    }
}

#[tokio::test]
async fn a_worker_started_again_on_its_event_log_says_nothing_of_its_watermark_and_logs_the_new_settlement() {
    // The second worker takes the first one's log (its slot) with the
    // settlements watermark the first left in it; that is where its
    // settlements source starts, not a journal cut back.
    let s = Scratch::new();
    let mut ids = Vec::new();
    for round in 0..2 {
        ids.push(s.enqueue(&[], "true"));
        let out = s.cmd(&["work", "--until-empty"]).timeout(std::time::Duration::from_secs(30)).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "round {round}: {stderr}");
        assert!(!stderr.contains("watermark"), "round {round}: {stderr}");
    }
    let log = leasehold::eventlog::read_log(&s.path("events").join("worker-0.log"), 0).unwrap();
    let done: Vec<i64> = log
        .records
        .iter()
        .filter(|r| r.event.kind == "job-done" && r.event.source == "settlements")
        .map(|r| r.event.body["job"].as_i64().unwrap())
        .collect();
    assert_eq!(done, ids.iter().map(|id| id.0).collect::<Vec<_>>(), "each settlement logged once, in the one log");
}

/// A `claim-failed` event of source "other" at `at` ms naming `n`, as a
/// worker's runner logs one.
fn claim_failed(at: u64, n: u64) -> leasehold::eventlog::EventRecord {
    leasehold::eventlog::EventRecord {
        source: "other".to_owned(),
        at,
        kind: "claim-failed".to_owned(),
        identity: Default::default(),
        body: serde_json::json!({ "error": format!("failure {n}") }),
    }
}

#[tokio::test]
async fn events_of_the_other_logs_show_when_one_worker_log_is_damaged() {
    let s = Scratch::new();
    let jobs = s.jobs_file(&["true", "true", "true"]);
    s.cmd(&["run", jobs.to_str().unwrap()]).assert().success();
    let folder = s.path("events");
    // A second worker's log, damaged in its first frame (another follows).
    let damaged = folder.join("worker-7.log");
    let mut log = leasehold::eventlog::EventLog::open(&damaged, Default::default()).unwrap().log;
    for n in 0..2u64 {
        log.append(&[claim_failed(n, 999)], [("other", n + 1)]).unwrap();
    }
    drop(log);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[20 + 12 + 8] ^= 0x01;
    std::fs::write(&damaged, &bytes).unwrap();

    let out = s.cmd(&["events", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("\"job-done\"").count(), 3, "the journal's events still show: {stdout}");
    assert!(stdout.matches("\"pass-end\"").count() >= 1, "the whole log's events still show: {stdout}");
    assert!(!stdout.contains("failure 999"), "the damaged log's events do not: {stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("worker-7.log") && stderr.contains("corrupt"), "{stderr}");
}

/// A log damaged in its middle still shows the events of its whole frames
/// before the damage; what follows it is said not to be shown.
#[tokio::test]
async fn events_of_a_log_damaged_midway_show_up_to_the_damage() {
    let s = Scratch::new();
    s.enqueue(&["--at", "1h"], "true"); // the database events reads
    let folder = s.path("events");
    std::fs::create_dir_all(&folder).unwrap();
    let damaged = folder.join("worker-7.log");
    let mut log = leasehold::eventlog::EventLog::open(&damaged, Default::default()).unwrap().log;
    let mut second_frame = 0;
    for n in 0..3u64 {
        log.append(&[claim_failed(n, 900 + n)], [("other", n + 1)]).unwrap();
        if n == 0 {
            second_frame = log.head().len as usize;
        }
    }
    drop(log);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[second_frame + 12 + 8] ^= 0x01;
    std::fs::write(&damaged, &bytes).unwrap();

    let out = s.cmd(&["events", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("failure 900"), "the frame before the damage shows: {stdout}");
    assert!(!stdout.contains("failure 901") && !stdout.contains("failure 902"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("worker-7.log") && stderr.contains("the events after it are not shown"), "{stderr}");
}

#[tokio::test]
async fn jobs_says_when_more_rows_than_the_limit_exist() {
    let s = Scratch::new();
    for _ in 0..3 {
        s.enqueue(&[], "true");
    }
    let out = s.cmd(&["jobs", "--limit", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(the newest 2 shown; more with --limit)"), "{text}");
    let out = s.cmd(&["jobs", "--limit", "3"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("more with --limit"), "all shown");
    s.cmd(&["jobs", "--limit", "0"]).assert().code(2);
}

#[tokio::test]
async fn a_job_that_signals_its_own_process_group_is_not_ended_by_its_guard() {
    let s = Scratch::new();
    let lines: Vec<String> = ["USR1", "HUP", "USR2", "ALRM", "TERM"]
        .iter()
        // The line is the shell's own script (it runs as `sh -c LINE`), so
        // the shell that traps is the one in the group with the guard.
        .map(|sig| format!("trap 'echo caught-{sig}' {sig}; kill -{sig} 0; sleep 0.3; echo finished-normally"))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let jobs = s.jobs_file(&lines);
    let out = s.cmd(&["run", jobs.to_str().unwrap(), "--max-attempts", "1"]).output().unwrap();
    let summary = summary(&out.stdout);
    assert_eq!(summary.get("done").map(String::as_str), Some("5"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn purge_deletes_succeeded_jobs_then_with_dead_the_dead_letters_too() {
    let s = Scratch::new();
    let jobs = s.jobs_file(&["echo fine", "echo also fine", "sh -c 'exit 3'"]);
    let out = s.cmd(&["run", jobs.to_str().unwrap(), "--max-attempts", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "one line dead-lettered");
    let waiting = s.enqueue(&["--at", "1h"], "true");

    // Nothing finished more than a day ago.
    s.cmd(&["purge", "--older-than", "1d", "--dead"]).assert().success().stdout(
        "purged 0 jobs: succeeded or dead-lettered more than 1day ago\npurged 0 settlements from the events journal: settled more than 1day ago\npurged 0 worker records: not seen for more than 1day\n",
    );
    s.cmd(&["purge", "--older-than", "0s", "--queue", "other"]).assert().success().stdout(
        "purged 0 jobs on queue other: succeeded more than 0s ago\npurged 0 settlements from the events journal: settled more than 0s ago\npurged 0 worker records: not seen for more than 0s\n",
    );
    s.cmd(&["purge", "--older-than", "0s"]).assert().success().stdout(
        "purged 2 jobs: succeeded more than 0s ago\npurged 3 settlements from the events journal: settled more than 0s ago\npurged 1 worker record: not seen for more than 0s\n",
    );
    let store = s.store().await;
    assert!(store.list_jobs(None, Some(JobState::Succeeded), 10).await.unwrap().is_empty());
    assert_eq!(store.list_jobs(None, Some(JobState::Dead), 10).await.unwrap().len(), 1, "dead letters are kept without --dead");
    s.cmd(&["purge", "--older-than", "0s", "--dead"]).assert().success().stdout(predicate::str::starts_with("purged 1 job: "));
    let left = store.list_jobs(None, None, 10).await.unwrap();
    assert_eq!(left.iter().map(|j| (j.id, j.state)).collect::<Vec<_>>(), [(waiting, JobState::Queued)], "a queued job is never purged");

    s.cmd(&["purge"]).assert().code(2).stderr(predicate::str::contains("--older-than"));
}

#[tokio::test]
async fn a_program_that_cannot_start_is_named_in_the_error() {
    let s = Scratch::new();
    std::fs::write(s.path("not-executable.sh"), "echo hi\n").unwrap();
    let jobs = s.jobs_file(&["no-such-program-xyz --flag", "./not-executable.sh"]);
    let out = s.cmd(&["run", jobs.to_str().unwrap(), "--max-attempts", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let store = s.store().await;
    let mut errors: Vec<String> =
        store.list_jobs(None, Some(JobState::Dead), 10).await.unwrap().into_iter().filter_map(|j| j.last_error).collect();
    errors.sort();
    assert_eq!(
        errors,
        [
            "could not start ./not-executable.sh: Permission denied (os error 13)",
            "could not start no-such-program-xyz: No such file or directory (os error 2)",
        ]
    );
}

#[tokio::test]
async fn status_counts_each_queue_by_the_states_the_dashboard_shows() {
    let s = Scratch::new();
    s.enqueue(&["--queue", "mail"], "echo done");
    s.enqueue(&["--queue", "mail", "--max-attempts", "1"], "false");
    s.cmd(&["work", "--queue", "mail", "--until-empty"]).assert().success();
    s.enqueue(&["--queue", "mail"], "echo due");
    s.enqueue(&["--queue", "mail", "--at", "1h"], "echo later");
    let text = cli_support::stdout(&s, &["status"]);
    let header = text.lines().find(|l| l.contains("queue")).map(cells).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(header, ["queue", "queued", "scheduled", "retrying", "running", "succeeded", "dead", "cancelled", "paused"]);
    let mail = text.lines().find(|l| l.contains("mail")).map(cells).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(mail, ["mail", "1", "1", "0", "0", "1", "1", "0"], "the job due in an hour is scheduled, not queued: {text}");
}

/// The cells of one row of a table the tool prints.
fn cells(line: &str) -> Vec<String> {
    line.split(['│', '┆']).map(str::trim).filter(|c| !c.is_empty()).map(str::to_owned).collect()
}

#[tokio::test]
async fn jobs_and_show_name_a_queued_job_by_the_state_status_counts_it_under() {
    let s = Scratch::new();
    let due = s.enqueue(&["--queue", "q"], "echo due");
    let later = s.enqueue(&["--queue", "q", "--at", "1h"], "echo later");
    let again = s.enqueue(&["--queue", "q"], "echo again");
    // Queued again after a failed attempt, as a worker's failure leaves a job.
    let pool = sqlx::SqlitePool::connect(&s.url).await.unwrap();
    sqlx::query("UPDATE leasehold_jobs SET attempts = 1 WHERE id = ?").bind(again.0).execute(&pool).await.unwrap();
    pool.close().await;
    let listed = cli_support::stdout(&s, &["jobs"]);
    let state = |id: leasehold::store::JobId| {
        let row = listed.lines().map(cells).find(|c| c.first() == Some(&id.to_string()));
        row.unwrap_or_else(|| panic!("job {id} not listed: {listed}"))[2].clone()
    };
    assert_eq!([state(due), state(later), state(again)], ["queued", "scheduled", "retrying"], "{listed}");
    let status = cli_support::stdout(&s, &["status"]);
    let q = status.lines().find(|l| l.contains(" q ")).map(cells).unwrap_or_else(|| panic!("{status}"));
    assert_eq!(q[1..4], ["1", "1", "1"], "status counts the same three: {status}");
    for (id, name) in [(due, "queued"), (later, "scheduled"), (again, "retrying")] {
        let shown = cli_support::stdout(&s, &["show", &id.to_string()]);
        assert!(shown.contains(&format!("state:     {name}\n")), "{shown}");
        assert!(shown.contains("due:"), "a queued job's page says when it is due: {shown}");
    }
    let queued = cli_support::stdout(&s, &["jobs", "--state", "queued"]);
    assert_eq!(queued.lines().filter(|l| l.contains("echo ")).count(), 3, "--state queued lists all three: {queued}");
}

#[tokio::test]
async fn show_prints_the_result_of_a_job_another_kind_of_worker_completed() {
    use leasehold::runner::Clock as _;
    let s = Scratch::new();
    let id = s.enqueue(&["--queue", "mail"], "echo not run by this tool");
    // Completed as a leasehold/postgres handler or a Rust service would: its answer, no exit code.
    let store = s.store().await;
    let owner = leasehold::liveness::current_owner();
    let now = leasehold::runner::TokioClock::new().now();
    let job = store.claim("mail", &owner, now, std::time::Duration::from_secs(30)).await.unwrap().expect("the job");
    let answer = serde_json::json!({ "sent": true, "to": "ada@example.com" });
    assert!(store.complete(job.fence(), Some(&answer), now).await.unwrap().is_updated());
    let shown = cli_support::stdout(&s, &["show", &id.to_string()]);
    assert!(shown.contains(r#"  result:  {"sent":true,"to":"ada@example.com"}"#), "{shown}");
    assert!(!shown.contains("exit:") && !shown.contains("output:"), "no exit code or output it never had: {shown}");
    // Queued by another kind of producer: JSON of its own, which is no command line.
    let other = store.enqueue("mail", &serde_json::json!({ "to": "ada" }), &Default::default(), now).await.unwrap();
    let shown = cli_support::stdout(&s, &["show", &other.to_string()]);
    assert!(shown.contains("\npayload:   {\"to\":\"ada\"}\n") && !shown.contains("command:"), "{shown}");
}

/// An upgrade replaces the binary at its path while a worker runs (`cargo
/// install`, a package manager, a deploy: a new file renamed over the old).
/// The worker starts each command under a guard that is this binary run
/// again; it must keep doing so from the file it runs, not from its path,
/// where the old file is gone (the path then reads "… (deleted)" to it, and
/// every command failed to start until its job was dead-lettered).
#[tokio::test]
async fn a_worker_whose_binary_was_replaced_at_its_path_keeps_running_commands() {
    let s = Scratch::new();
    let copy = s.path("leasehold-copy");
    std::fs::copy(assert_cmd::cargo::cargo_bin("leasehold"), &copy).expect("binary copied");
    let worker = |args: &[&str]| {
        Command::new(&copy)
            .env_remove("LEASEHOLD_DATABASE_URL")
            .args(["--database", &s.url, "--events"])
            .arg(s.path("events"))
            .args(args)
            .current_dir(s.dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the copy starts")
    };
    let first = s.enqueue(&["--max-attempts", "1"], "echo before");
    let mut child = worker(&["work", "--concurrency", "1"]);
    let store = s.store().await;
    cli_support::wait_for_state(&store, first, JobState::Succeeded, std::time::Duration::from_secs(20)).await;
    // The upgrade: a new file renamed over the one the worker runs.
    let next = s.path("leasehold-next");
    std::fs::copy(&copy, &next).expect("new binary written");
    std::fs::rename(&next, &copy).expect("renamed over the running one");
    let second = s.enqueue(&["--max-attempts", "1"], "echo after");
    let job = cli_support::wait_for_state(&store, second, JobState::Succeeded, std::time::Duration::from_secs(20)).await;
    cli_support::signal(&child, rustix::process::Signal::INT);
    cli_support::wait_exit(&mut child, std::time::Duration::from_secs(20));
    assert_eq!(succeeded_attempts(&job), 1, "{job:?}");
}
