//! Bad input: one clear line on stderr, a non-zero exit, no panic, and
//! nothing queued is lost.

mod cli_support;
mod store_support;

use cli_support::Scratch;
use leasehold::store::JobState;

/// Runs `args` and checks the failure: exit 2 and exactly one
/// `leasehold: …` line on stderr naming `what`.
fn fails_with(s: &Scratch, args: &[&str], what: &str) {
    let out = s.cmd(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line, got {stderr:?}");
    assert!(lines[0].starts_with("leasehold: "), "{args:?}: {stderr:?}");
    assert!(lines[0].contains(what), "{args:?}: {stderr:?} should name {what:?}");
    assert!(!stderr.contains("panicked"));
}

#[test]
fn an_unreadable_jobs_file_is_named() {
    fails_with(&Scratch::new(), &["run", "no-such-file.txt"], "cannot read the jobs file no-such-file.txt");
}

#[test]
fn a_malformed_database_url_is_named() {
    let s = Scratch::new();
    let out = assert_cmd::Command::cargo_bin("leasehold").unwrap().args(["--database", "mysql://db/x", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1);
    assert!(stderr.starts_with("leasehold: unsupported store URL"), "{stderr}");
    drop(s);
}

#[test]
fn an_unreachable_database_is_named() {
    for url in ["sqlite:///no/such/folder/q.db", "postgres://leasehold@127.0.0.1:1/none"] {
        let out = assert_cmd::Command::cargo_bin("leasehold").unwrap().args(["--database", url, "status"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{url}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        // A read-only command never creates a SQLite file: a missing one is named, down to
        // the folder that is missing.
        let expected = if url.starts_with("sqlite") { "leasehold: no folder /no/such/folder for the database" } else { "leasehold: cannot reach the database" };
        assert!(stderr.starts_with(expected), "{stderr}");
        if url.starts_with("postgres") {
            assert!(stderr.contains("Connection refused"), "the cause, not a pool timeout: {stderr}");
        }
    }
}

#[test]
fn an_unknown_job_id_is_named() {
    let s = Scratch::new();
    s.cmd(&["enqueue", "--", "true"]).assert().success();
    fails_with(&s, &["show", "999"], "unknown job id 999");
}

/// A job id that is no whole number from 1 is named as one, with what an id
/// looks like (it was the integer parser's "invalid digit found in string").
#[test]
fn a_job_id_that_is_not_a_number_is_named_with_what_an_id_is() {
    let s = Scratch::new();
    s.cmd(&["enqueue", "--", "true"]).assert().success();
    let expected = "is not a job id: a job id is a whole number from 1";
    fails_with(&s, &["show", "nine"], &format!("for '<JOB_ID>': \"nine\" {expected}"));
    fails_with(&s, &["show", "--", "-5"], &format!("\"-5\" {expected}"));
    fails_with(&s, &["show", "0"], &format!("\"0\" {expected}"));
    fails_with(&s, &["show", "99999999999999999999"], "\"99999999999999999999\" is too large for a job id");
    fails_with(&s, &["cancel", "1", "abc"], &format!("\"abc\" {expected}"));
    fails_with(&s, &["retry", "1.5"], &format!("\"1.5\" {expected}"));
    let said = String::from_utf8_lossy(&s.cmd(&["show", "abc"]).output().unwrap().stderr).into_owned();
    assert!(!said.contains("invalid digit"), "the parser's own words are not shown: {said}");
}

#[test]
fn a_duration_that_does_not_parse_is_named() {
    let s = Scratch::new();
    fails_with(&s, &["--stale-after", "3 parsecs", "status"], "\"3 parsecs\" is not a duration");
    fails_with(&s, &["enqueue", "--timeout", "soon", "--", "true"], "\"soon\" is not a duration");
    fails_with(&s, &["enqueue", "--at", "tomorrow-ish", "--", "true"], "is neither an RFC 3339 time");
    fails_with(&s, &["enqueue", "--at", "1000000000d", "--", "true"], "is after the year 9999");
    fails_with(&s, &["jobs", "--state", "sleeping"], "\"sleeping\" is not a state");
    // The states `status` counts and the state column shows are said to be listed as queued
    // (they were "not a state: queued, running, succeeded, dead or cancelled").
    for shown in ["scheduled", "retrying"] {
        fails_with(
            &s,
            &["jobs", "--state", shown],
            &format!("\"{shown}\" is listed with --state queued, which lists the scheduled and retrying jobs too"),
        );
    }
}

#[tokio::test]
async fn nothing_queued_is_lost_by_a_bad_command() {
    let s = Scratch::new();
    let id = s.enqueue(&[], "true");
    fails_with(&s, &["run", "missing.txt"], "cannot read");
    fails_with(&s, &["work", "--stale-after", "never"], "not a duration");
    let store = s.store().await;
    assert_eq!(store.job(id).await.unwrap().state, JobState::Queued);
}

#[test]
fn a_mistyped_enqueue_option_is_refused_not_queued_as_the_command() {
    let s = Scratch::new();
    fails_with(&s, &["enqueue", "--max-attemps", "5", "--", "true"], "--max-attemps");
    fails_with(&s, &["jobs"], "no database at");
}

#[test]
fn bad_lease_timings_are_refused_before_anything_is_queued() {
    let s = Scratch::new();
    let jobs = s.dir.path().join("jobs.txt");
    std::fs::write(&jobs, "true\n").unwrap();
    fails_with(&s, &["run", jobs.to_str().unwrap(), "--stale-after", "0s"], "nothing was queued");
    let out = s.cmd(&["jobs"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no database at"), "refused before the database was even made: {said}");
}

#[test]
fn lease_timings_out_of_bounds_are_refused_by_work_too() {
    let s = Scratch::new();
    s.cmd(&["enqueue", "--", "true"]).assert().success();
    // No cadence fits (it said to give "a the default heartbeat under 0ms").
    for (short, ms) in [("0s", 0), ("150ms", 150), ("200ms", 200)] {
        fails_with(
            &s,
            &["work", "--until-empty", "--stale-after", short],
            &format!(
                "invalid lease timings: --stale-after ({ms}ms) must be above 200ms: two renewals, at least 100ms apart \
                 (the shortest --heartbeat-every), must fit in it, and above 500ms with the default heartbeat"
            ),
        );
    }
    // The default cadence does not fit: the flag that sets it is named, once, with what fits.
    fails_with(
        &s,
        &["work", "--until-empty", "--stale-after", "400ms"],
        "invalid lease timings: --heartbeat-every (250ms, its default: the larger of 250ms and a third of --stale-after) \
         must be under half of --stale-after (400ms) so two renewals fit in the stale window: give a --heartbeat-every \
         under 200ms, or a --stale-after above 500ms",
    );
    fails_with(&s, &["work", "--until-empty", "--stale-after", "18446744073709551615s"], "--stale-after");
    fails_with(&s, &["work", "--until-empty", "--stale-after", "30days"], "must be at most 24days");
    fails_with(&s, &["work", "--until-empty", "--heartbeat-every", "0s"], "--heartbeat-every (0s) must be at least 100ms");
    let out = s.cmd(&["jobs"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("queued"), "the job is still queued");
}

#[test]
fn an_in_memory_sqlite_database_is_refused_rather_than_losing_the_job() {
    let s = Scratch::new();
    for url in ["sqlite://", "sqlite::memory:", "sqlite://:memory:", "sqlite://q.db?mode=memory"] {
        let out = assert_cmd::Command::cargo_bin("leasehold").unwrap().current_dir(s.dir.path()).args(["--database", url, "enqueue", "--", "true"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {stderr}");
        assert!(stderr.contains("in-memory SQLite database"), "{url}: {stderr}");
        assert!(out.stdout.is_empty(), "{url}: no job id printed");
    }
}

#[test]
fn an_argument_error_lists_what_is_missing_on_one_line() {
    let s = Scratch::new();
    fails_with(&s, &["enqueue"], "not provided: <COMMAND>...");
    fails_with(&s, &["enqueue", "--max-attempts", "4294967295", "--", "true"], "is not in 1..=2147483647");
}

#[test]
fn a_grace_too_long_is_refused_not_a_panic() {
    let s = Scratch::new();
    s.cmd(&["enqueue", "--", "true"]).assert().success();
    fails_with(&s, &["work", "--until-empty", "--grace", "18446744073709551615s"], "--grace");
}

#[test]
fn a_grace_that_does_not_fit_in_the_lease_is_refused_naming_both_options() {
    let s = Scratch::new();
    s.cmd(&["enqueue", "--", "true"]).assert().success();
    // At --stale-after 3s (renewals every 1s, skew allowance 500ms) 500ms fits.
    for args in [&["work", "--until-empty", "--stale-after", "3s", "--grace", "4s"][..], &["work", "--until-empty", "--stale-after", "3s", "--grace", "501ms"]] {
        fails_with(&s, args, "invalid lease timings: --grace (");
        fails_with(&s, args, "does not fit in --stale-after (3000ms)");
        fails_with(&s, args, "at most 500ms of grace fits (shorten --grace or lengthen --stale-after)");
    }
    let jobs = s.dir.path().join("jobs.txt");
    std::fs::write(&jobs, "true\n").unwrap();
    fails_with(&s, &["run", jobs.to_str().unwrap(), "--stale-after", "3s", "--grace", "5s"], "--grace (5000ms) does not fit in --stale-after (3000ms)");
    // With the defaults the 5s grace fits a 30s lease.
    s.cmd(&["work", "--until-empty", "--grace", "5s"]).assert().success();
    s.cmd(&["work", "--until-empty", "--stale-after", "3s", "--grace", "500ms"]).assert().success();
    let out = s.cmd(&["jobs"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("succeeded"), "the job ran once the timings fit");
}

#[test]
fn a_sqlite_database_of_something_else_is_refused_and_left_as_it_was() {
    let s = Scratch::new();
    let other = s.path("app.db");
    let status = std::process::Command::new("sqlite3").arg(&other).arg("CREATE TABLE people(name TEXT); INSERT INTO people VALUES('ada');").status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no sqlite3 command to make another application's database");
        return;
    }
    let before = std::fs::read(&other).unwrap();
    let on_other = Scratch::with_url(format!("sqlite://{}", other.display()));
    let commands: [&[&str]; 8] = [
        &["status"],
        &["jobs"],
        &["events"],
        &["enqueue", "--", "true"],
        &["work", "--until-empty"],
        &["purge", "--older-than", "1d"],
        &["pause", "default"],
        &["schedule", "add", "tick", "--every", "1m", "--", "true"],
    ];
    for args in commands {
        fails_with(&on_other, args, "is not a leasehold queue: it is another SQLite database (tables: people)");
        assert_eq!(std::fs::read(&other).unwrap(), before, "{args:?} changed the other application's database");
    }
}

#[test]
fn what_the_help_says_of_a_missing_sqlite_file_is_what_each_command_does() {
    // `ui --help` (as every command's) said the SQLite file was "created if missing",
    // which ui and the commands that only read or steer never do.
    let help = cli_support::stdout(&Scratch::new(), &["ui", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!help.contains("created if missing"), "{help}");
    assert!(
        help.contains(
            "A SQLite file that does not exist yet is created, in a folder that must exist, by run, enqueue, work and \
             schedule add only; every other command (ui included) refuses it rather than show an empty queue"
        ),
        "{help}"
    );
    let creates: [&[&str]; 4] = [
        &["enqueue", "--", "true"],
        &["schedule", "add", "nightly", "--every", "1d", "--", "true"],
        &["run", "jobs.txt"],
        &["work", "--until-empty"],
    ];
    for args in creates {
        let s = Scratch::new();
        s.jobs_file(&["true"]);
        cli_support::stdout(&s, args);
        assert!(s.path("queue.db").is_file(), "{args:?} created no database");
    }
    let refuses: [&[&str]; 12] = [
        &["ui"],
        &["ui", "--read-only"],
        &["status"],
        &["jobs"],
        &["show", "1"],
        &["events"],
        &["purge", "--older-than", "1d"],
        &["cancel", "1"],
        &["retry", "1"],
        &["pause", "q"],
        &["resume", "q"],
        &["schedule", "list"],
    ];
    for args in refuses {
        let s = Scratch::new();
        fails_with(&s, args, "no database at");
        assert!(!s.path("queue.db").exists(), "{args:?} created a database");
    }
}

#[test]
fn a_folder_or_a_missing_folder_given_as_the_database_is_named() {
    let s = Scratch::new();
    let folder = s.dir.path().display().to_string();
    let on_folder = Scratch::with_url(format!("sqlite://{folder}"));
    for args in [&["status"][..], &["enqueue", "--", "true"], &["work", "--until-empty"]] {
        fails_with(&on_folder, args, &format!("{folder} is a folder, not a database file"));
    }
    let in_missing_folder = Scratch::with_url(format!("sqlite://{folder}/missing/queue.db"));
    for args in [&["enqueue", "--", "true"][..], &["work", "--until-empty"]] {
        fails_with(&in_missing_folder, args, &format!("no folder {folder}/missing for the database"));
    }
}

#[test]
fn a_negative_number_or_duration_names_its_option() {
    let s = Scratch::new();
    s.cmd(&["enqueue", "--", "true"]).assert().success();
    fails_with(&s, &["work", "--until-empty", "--concurrency", "-1"], "--concurrency");
    fails_with(&s, &["work", "--until-empty", "--stale-after", "-5s"], "--stale-after");
    fails_with(&s, &["work", "--until-empty", "--grace", "-1s"], "--grace");
    fails_with(&s, &["purge", "--older-than", "-1d"], "--older-than");
    fails_with(&s, &["enqueue", "--max-attempts", "-2", "--", "true"], "--max-attempts");
    fails_with(&s, &["enqueue", "--at", "-5m", "--", "true"], "--at");
    fails_with(&s, &["jobs", "--limit", "-1"], "--limit");
    let out = s.cmd(&["jobs"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("queued"), "the job is still queued");
}

#[tokio::test]
async fn reading_a_database_that_holds_no_queue_says_so() {
    // An empty SQLite file, and (with LEASEHOLD_TEST_PG_URL) an empty schema.
    let empty = Scratch::new();
    std::fs::write(empty.path("queue.db"), b"").unwrap();
    let mut scratches = vec![empty];
    scratches.extend(store_support::pg_schema_url("cli_no_queue").await.map(Scratch::with_url));
    for s in &scratches {
        for args in [&["status"][..], &["jobs"], &["show", "1"], &["events"]] {
            fails_with(s, args, "holds no leasehold queue (nothing has been queued there yet)");
        }
    }
}

/// Runs the tool on `url` as a user the test's files are not writable by:
/// `nobody` (65534) when the test runs as root, which writes anything, or
/// the test's own user otherwise.
fn as_other_user(url: &str, args: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("leasehold"));
    cmd.env_remove("LEASEHOLD_DATABASE_URL").arg("--database").arg(url).args(args).current_dir("/");
    if rustix::process::geteuid().is_root() {
        cmd.uid(65534).gid(65534);
    }
    cmd.output().expect("leasehold runs")
}

#[tokio::test]
async fn a_sqlite_file_this_user_may_not_write_is_refused_saying_which_part_and_left_as_it_was() {
    // SQLite said "unable to open database file" or "attempt to write a readonly database",
    // the tool "cannot reach the database", naming neither the file nor what to do.
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    let s = Scratch::new();
    mode(s.dir.path(), 0o755);
    let queue_in = |name: &str| {
        let folder = s.path(name);
        std::fs::create_dir(&folder).unwrap();
        mode(&folder, 0o777);
        (Scratch::with_url(format!("sqlite://{}/queue.db", folder.display())), folder)
    };
    // The file read-only to the user; its -wal and -shm files those of another user's
    // open store; its folder read-only; a new file in a read-only folder.
    let (read_only, read_only_dir) = queue_in("read-only-file");
    let (held, held_dir) = queue_in("held-by-another");
    let (no_folder, no_folder_dir) = queue_in("read-only-folder");
    let (new_file, new_file_dir) = queue_in("read-only-new");
    let mut kept = Vec::new();
    for q in [&read_only, &held, &no_folder] {
        // Closed, so nothing of it waits in a -wal file.
        let store = q.store().await;
        let options = leasehold::store::EnqueueOptions::default();
        let payload = serde_json::json!({ "command": "echo kept" });
        kept.push(store.enqueue("kept", &payload, &options, leasehold::core::Millis(1)).await.unwrap());
        store.close().await;
    }
    for folder in [&read_only_dir, &no_folder_dir] {
        assert!(!folder.join("queue.db-wal").exists(), "a -wal file is there after the store closed");
    }
    mode(&read_only_dir.join("queue.db"), 0o444);
    mode(&held_dir.join("queue.db"), 0o666);
    let holder = held.store().await;
    // SQLite gives them the file's mode: as a store of a user with a narrower umask would leave them.
    for name in ["queue.db-wal", "queue.db-shm"] {
        mode(&held_dir.join(name), 0o644);
    }
    mode(&no_folder_dir.join("queue.db"), 0o666);
    mode(&no_folder_dir, 0o555);
    mode(&new_file_dir, 0o555);

    let cases = [
        (&read_only, "the file may not be written by this process"),
        (&held, "may not be written by this process (a process of another user made it)"),
        (&no_folder, "may not be written by this process, and SQLite writes its -wal and -shm files beside the file"),
        (&new_file, "may not be written by this process, so the file can not be created in it"),
    ];
    for (q, why) in cases {
        for args in [&["enqueue", "--queue", "kept", "--", "echo", "more"][..], &["work", "--queue", "kept", "--until-empty"]] {
            let out = as_other_user(&q.url, args);
            let said = String::from_utf8_lossy(&out.stderr);
            let path = q.url.trim_start_matches("sqlite://");
            assert_eq!(out.status.code(), Some(2), "{path} {args:?}: {said}");
            assert!(said.starts_with(&format!("leasehold: cannot write the SQLite database {path}: ")), "{path} {args:?}: {said}");
            assert!(said.contains(why) && said.contains("(nothing was changed)"), "{args:?}: {said} should say {why:?}");
            assert_eq!(said.lines().count(), 1, "{said}");
        }
    }
    assert!(!new_file_dir.join("queue.db").exists());
    // Nothing was lost, and the reading commands read it.
    for (q, id) in [&read_only, &held, &no_folder].into_iter().zip(kept) {
        let shown = as_other_user(&q.url, &["show", &id.to_string()]);
        assert!(shown.status.success(), "show: {}", String::from_utf8_lossy(&shown.stderr));
        assert!(String::from_utf8_lossy(&shown.stdout).contains("echo kept"));
        let job = q.store().await.job(id).await.unwrap();
        assert_eq!((job.state, job.attempts), (JobState::Queued, 0), "{job:?}");
    }
    drop(holder);
    mode(&no_folder_dir, 0o755);
    mode(&new_file_dir, 0o755);
}

#[test]
fn a_store_refusal_of_an_option_names_the_flag_the_user_typed() {
    // It said "invalid option `idempotency_key`" or "invalid option `timeout`", the
    // library's names, for flags given as --idempotency-key and --timeout.
    let s = Scratch::new();
    let key = "k".repeat(513);
    fails_with(&s, &["enqueue", "--idempotency-key", "", "--", "true"], "leasehold: --idempotency-key: must not be empty");
    fails_with(&s, &["enqueue", "--idempotency-key", &key, "--", "true"], "leasehold: --idempotency-key: longer than 512 bytes");
    fails_with(&s, &["enqueue", "--timeout", "1us", "--", "true"], "leasehold: --timeout: must be at least 1ms");
    let jobs = s.jobs_file(&["true"]);
    fails_with(&s, &["run", jobs.to_str().unwrap(), "--timeout", "500us"], "leasehold: --timeout: must be at least 1ms (nothing was queued)");
    fails_with(&s, &["schedule", "add", "t", "--every", "5m", "--timeout", "1us", "--", "true"], "leasehold: --timeout: must be at least 1ms");
    let listed = cli_support::stdout(&s, &["jobs"]);
    assert_eq!(listed.trim(), "no jobs");
    // The cancels alike: --reason, not "invalid option `reason`".
    let id = s.enqueue(&[], "true").to_string();
    let long = "r".repeat(4097);
    fails_with(&s, &["cancel", &id, "--reason", &long], "leasehold: --reason: at most 4096 bytes");
    fails_with(&s, &["cancel", "--queue", "default", "--state", "queued", "--yes", "--reason", &long], "leasehold: --reason: at most 4096 bytes");
    assert!(cli_support::stdout(&s, &["jobs"]).contains("queued"), "the job was not cancelled");
}

#[test]
fn a_due_time_without_an_offset_is_read_as_utc_as_the_help_says() {
    // --at took 2030-01-01T09:00:00 as UTC while --help spoke of Z and offsets only, so
    // a user who meant the local time had the job due hours off without a word.
    let s = Scratch::new();
    let help = cli_support::stdout(&s, &["enqueue", "--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("a time with neither is read as UTC, not as this machine's local time"), "{help}");
    let id = s.enqueue(&["--at", "2030-01-01T09:00:00"], "true");
    let shown = cli_support::stdout(&s, &["show", &id.to_string()]);
    assert!(shown.contains("due:       2030-01-01T09:00:00"), "{shown}");
}

#[test]
fn a_command_not_queued_because_its_key_is_held_by_another_command_is_said() {
    // The second command was dropped without a word: enqueue printed the first job's id.
    let s = Scratch::new();
    let first = s.enqueue(&["--idempotency-key", "nightly"], "echo a");
    let out = s.cmd(&["enqueue", "--idempotency-key", "nightly", "--", "echo", "b"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), first.to_string());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!("leasehold: job {first}, queued earlier with --idempotency-key \"nightly\", runs \"echo a\": this command (\"echo b\") was not queued")
    );
    // The same command again is what a key is for: nothing to say.
    let again = s.cmd(&["enqueue", "--idempotency-key", "nightly", "--", "echo", "a"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), first.to_string());
    assert!(again.stderr.is_empty(), "{}", String::from_utf8_lossy(&again.stderr));
}

#[test]
fn events_from_an_event_log_folder_that_is_not_there_say_the_passes_are_left_out() {
    // A mistyped --events printed the settlements alone, as if no runner had made a pass.
    let s = Scratch::new();
    s.enqueue(&[], "true");
    cli_support::stdout(&s, &["work", "--until-empty"]);
    let all = cli_support::stdout(&s, &["events"]);
    assert!(all.contains("job-done") && all.contains("pass-end"), "{all}");
    let missing = s.path("no-such-events");
    let out = s.cmd(&["events"]).arg("--events").arg(&missing).output().unwrap();
    assert!(out.status.success());
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("job-done") && !shown.contains("pass-end"), "{shown}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!(
            "leasehold: no event log folder at {} (no worker has logged there yet, or the workers were given another \
             --events): the runners' passes come from there, so only the settlements are shown",
            missing.display()
        )
    );
    let logged = s.cmd(&["events"]).output().unwrap();
    assert!(logged.stderr.is_empty(), "{}", String::from_utf8_lossy(&logged.stderr));
}

#[test]
fn an_event_log_folder_that_is_a_file_is_named_as_one() {
    // It said "cannot create the event log folder F: File exists (os error 17)".
    let s = Scratch::new();
    s.enqueue(&[], "true");
    let file = s.jobs_file(&["true"]);
    let out = s.cmd(&["work", "--until-empty"]).arg("--events").arg(&file).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert_eq!(
        said.trim_end(),
        format!("leasehold: the event log folder {} is a file, not a folder: give --events a folder (made if missing)", file.display())
    );
    assert!(cli_support::stdout(&s, &["jobs"]).contains("queued"), "the job was left queued");
}

#[test]
fn a_command_given_without_dashes_is_told_where_it_goes_and_nothing_is_queued() {
    let s = Scratch::new();
    fails_with(&s, &["enqueue", "echo", "hi"], "the command to queue goes after `--`: leasehold enqueue [OPTIONS] -- COMMAND…");
    fails_with(&s, &["enqueue", "echo", "hi"], "(see leasehold enqueue --help)");
    fails_with(&s, &["schedule", "add", "nightly", "--every", "1d", "./backup.sh"], "leasehold schedule add [OPTIONS] -- COMMAND…");
    fails_with(&s, &["schedule", "add", "nightly", "--every", "1d", "./backup.sh"], "(see leasehold schedule add --help)");
    // A misspelt option before `--` is only that.
    let out = s.cmd(&["enqueue", "--max-atempts", "3", "--", "true"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'--max-attempts'") && !stderr.contains("goes after"), "{stderr}");
    assert!(!s.path("queue.db").exists(), "nothing was queued");
}

#[test]
fn a_command_lists_the_options_only_some_commands_read_apart_from_its_own() {
    // `pause --help` listed --stale-after, --heartbeat-every, --events and --otlp-endpoint
    // among its own options, though it reads none of them.
    let help = cli_support::stdout(&Scratch::new(), &["pause", "--help"]);
    let (own, apart) = help.split_once("Options some commands read (each says which):").expect("a section of their own");
    for flag in ["--stale-after", "--heartbeat-every", "--events", "--otlp-endpoint"] {
        assert!(!own.contains(flag) && apart.contains(flag), "{flag}: {help}");
    }
    assert!(own.contains("--database"), "{help}");
}
