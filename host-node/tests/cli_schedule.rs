//! `leasehold schedule` end to end: bad input refused with exit status 2
//! and nothing changed, the add/list/pause/resume/remove round trip, and
//! `work` driving a schedule in short real time — two workers enqueue each
//! slot once (SQLite, and PostgreSQL when configured), and `--no-overlap`
//! never lets a long job's runs overlap.

mod cli_support;
mod store_support;

use std::time::Duration;

use cli_support::{Scratch, refused, stdout, signal, wait_exit};
use leasehold::store::Store;

#[test]
fn bad_schedules_exit_2_naming_the_mistake_and_create_no_database() {
    let s = Scratch::new();
    let cases: &[(&[&str], &str)] = &[
        (&["schedule", "add", "a", "--every", "500ms", "--", "true"], "--every"),
        (&["schedule", "add", "a", "--every", "400d", "--", "true"], "366 days"),
        (&["schedule", "add", "a", "--every", "0s", "--", "true"], "(given: 0s)"),
        (&["schedule", "add", "a", "--every", "soon", "--", "true"], "not a duration"),
        (
            &["schedule", "add", "a", "--cron", "0 25 * * *", "--", "true"],
            "--cron: \"0 25 * * *\" is not a cron expression: its hour field (2nd of 5: minute hour day-of-month month \
             day-of-week), 25, is out of range: hours go from 0 to 23",
        ),
        (&["schedule", "add", "a", "--cron", "0 0 0 * 13 * 2030", "--", "true"], "its month field (5th of 7: second minute hour day-of-month month day-of-week year), 13, is out of range: months go from 1 to 12"),
        (&["schedule", "add", "a", "--cron", "*/0 * * * *", "--", "true"], "its minute field (1st of 5: minute hour day-of-month month day-of-week), */0, has a step of 0"),
        (&["schedule", "add", "a", "--cron", "0 0 * * * 9", "--", "true"], "its day-of-week field (6th of 6: second minute hour day-of-month month day-of-week), 9, is out of range: days of the week go from 0 to 7"),
        (&["schedule", "add", "a", "--cron", "0 0 * *", "--", "true"], "it has 4 fields; give 5 (minute hour day-of-month month day-of-week)"),
        (&["schedule", "add", "a", "--cron", "@dayly", "--", "true"], "the nicknames are @yearly"),
        // A valid expression whose every slot is past: refused before the database is made.
        (&["schedule", "add", "a", "--cron", "0 0 0 * * * 1999", "--", "true"], "has no slot after now"),
        (&["schedule", "add", "a", "--cron", "0 3 * * *", "--tz", "Europe/Atlantis", "--", "true"], "--tz"),
        (&["schedule", "add", "a", "--", "true"], "--every"),
        (&["schedule", "add", "a", "--every", "1m", "--cron", "* * * * *", "--", "true"], "cannot be used with"),
        (&["schedule", "add", "a", "--every", "1m", "--tz", "Europe/Berlin", "--", "true"], "'--every <EVERY>' cannot be used with '--tz <TZ>'"),
        (&["schedule", "add", "a b", "--every", "1m", "--", "true"], "schedule name"),
        (&["schedule", "add", "a", "--every", "1m", "--catch-up", "some", "--", "true"], "--catch-up"),
        (&["schedule", "add", "a", "--every", "1m", "--queue", "no queue", "--", "true"], "queue name"),
        (&["schedule", "list"], "no database"),
        (&["schedule", "remove", "a"], "no database"),
    ];
    for (args, what) in cases {
        refused(&s, args, what);
        assert!(!s.path("queue.db").exists(), "{args:?} created the database");
    }
}

#[test]
fn a_duplicate_or_unknown_name_exits_2_and_changes_nothing() {
    let s = Scratch::new();
    stdout(&s, &["schedule", "add", "nightly", "--cron", "0 3 * * *", "--", "backup"]);
    let before = stdout(&s, &["schedule", "list"]);
    refused(&s, &["schedule", "add", "nightly", "--every", "1m", "--", "other"], "exists already");
    refused(&s, &["schedule", "add", "n2", "--every", "0s", "--", "other"], "--every");
    for action in ["remove", "pause", "resume"] {
        refused(&s, &["schedule", action, "daily"], "unknown schedule \"daily\"");
    }
    assert_eq!(stdout(&s, &["schedule", "list"]), before);
}

#[test]
fn schedules_are_added_listed_paused_resumed_and_removed() {
    let s = Scratch::new();
    let added = stdout(
        &s,
        &["schedule", "add", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--catch-up", "all", "--no-overlap",
          "--queue", "ops", "--max-attempts", "5", "--timeout", "10m", "--", "backup.sh", "--full"],
    );
    assert!(added.starts_with("added schedule nightly (cron \"30 2 * * *\" Europe/Berlin), next run "), "{added}");
    stdout(&s, &["schedule", "add", "tick", "--every", "5m", "--", "echo hi"]);
    let list = stdout(&s, &["schedule", "list"]);
    for expected in ["nightly", "ops", "Europe/Berlin", "catch-up all, no overlap", "backup.sh --full", "tick", "every 5m", "catch-up one", "never"] {
        assert!(list.contains(expected), "{expected:?} in {list}");
    }
    assert_eq!(stdout(&s, &["schedule", "pause", "tick"]).trim(), "schedule tick paused");
    assert_eq!(stdout(&s, &["schedule", "pause", "tick"]).trim(), "schedule tick was paused already");
    assert!(stdout(&s, &["schedule", "list"]).contains("paused since"));
    assert_eq!(stdout(&s, &["schedule", "resume", "tick"]).trim(), "schedule tick resumed");
    assert!(!stdout(&s, &["schedule", "list"]).contains("paused since"));
    assert_eq!(stdout(&s, &["schedule", "remove", "tick"]).trim(), "removed schedule tick (the jobs it queued stay)");
    let list = stdout(&s, &["schedule", "list"]);
    assert!(list.contains("nightly") && !list.contains("tick"), "{list}");
}

/// Runs `workers` workers of the default queue for `span`, then stops them
/// with SIGINT and waits for them.
fn work_for(s: &Scratch, workers: usize, span: Duration) {
    let mut children: Vec<_> = (0..workers).map(|_| s.spawn(&["work", "--concurrency", "4"])).collect();
    std::thread::sleep(span);
    for child in &mut children {
        signal(child, rustix::process::Signal::INT);
        assert!(wait_exit(child, Duration::from_secs(20)).success());
    }
}

/// The due times of the schedule's jobs, in whole seconds, oldest first.
async fn slot_seconds(store: &Store) -> Vec<u64> {
    let mut at: Vec<u64> = store.list_jobs(None, None, 10_000).await.unwrap().iter().map(|j| j.run_at.0 / 1000).collect();
    at.sort_unstable();
    at
}

async fn two_workers_enqueue_each_slot_once(s: &Scratch) {
    // Every slot (catch-up all), so a round delayed past the next slot by a
    // busy machine changes nothing: each second from the add on, once.
    stdout(s, &["schedule", "add", "tick", "--every", "1s", "--catch-up", "all", "--", "true"]);
    work_for(s, 2, Duration::from_millis(4_500));
    let at = slot_seconds(&s.store().await).await;
    assert!(at.len() >= 3, "a slot a second for 4.5 s: {at:?}");
    let consecutive: Vec<u64> = (at[0]..at[0] + at.len() as u64).collect();
    assert_eq!(at, consecutive, "each second once, none twice, none missed");
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_two_workers_enqueue_each_slot_once() {
    two_workers_enqueue_each_slot_once(&Scratch::new()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_two_workers_enqueue_each_slot_once() {
    let Some(url) = store_support::pg_schema_url("cli_schedule").await else { return };
    two_workers_enqueue_each_slot_once(&Scratch::with_url(url)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_overlap_never_runs_a_long_job_twice_at_once() {
    let s = Scratch::new();
    stdout(&s, &["schedule", "add", "long", "--every", "1s", "--no-overlap", "--", "sleep 2.5"]);
    work_for(&s, 1, Duration::from_millis(6_500));
    let store = s.store().await;
    let jobs = store.list_jobs(None, None, 100).await.unwrap();
    assert!((1..=3).contains(&jobs.len()), "a 2.5 s job every second without overlap: {} jobs", jobs.len());
    // Each job's attempt ended before the next job's began.
    let mut spans = Vec::new();
    for job in &jobs {
        for attempt in store.job(job.id).await.unwrap().attempt_log {
            spans.push((attempt.started_at.0, attempt.ended_at.map_or(u64::MAX, |at| at.0)));
        }
    }
    spans.sort_unstable();
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "attempts overlap: {spans:?}");
    }
}
