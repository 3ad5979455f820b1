//! Schedules in the store, on SQLite and PostgreSQL, in virtual time (the
//! schedules take the caller's clock on both backends): each slot enqueued
//! once by competing workers, the catch-up policies across a restart, the
//! overlap policy with a long job, pause/resume/remove, and bad input
//! refused with nothing changed; and the drive task in short real time.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::Millis;
use leasehold::core::schedule::{CatchUp, Overlap};
use leasehold::schedule::Cadence;
use leasehold::store::{JobState, MAX_ROUND_SLOTS, ScheduleSpec, Store, StoreConfig, StoreError};
use serde_json::json;
use store_support::{TestDb, backend_test, backends, owner};

/// A virtual "now" whose slots are in the past for a PostgreSQL server's
/// clock, so their jobs are due there too. A whole minute.
const T0: u64 = 1_700_000_040_000;
const SEC: u64 = 1_000;
const MIN: u64 = 60 * SEC;

fn every(name: &str, period: Duration) -> ScheduleSpec {
    ScheduleSpec::new(name, "sched", Cadence::Every(period), json!({ "command": format!("echo {name}") }))
}

/// [`every`] with catch-up `all`: each slot is enqueued, whenever it is seen.
fn every_slot(name: &str, period: Duration) -> ScheduleSpec {
    ScheduleSpec { catch_up: CatchUp::All, ..every(name, period) }
}

/// The due times of the jobs of queue `sched`, oldest first.
async fn slots(store: &Store) -> Vec<u64> {
    let mut at: Vec<u64> = store
        .list_jobs(Some("sched"), None, 100_000)
        .await
        .unwrap()
        .iter()
        .map(|j| j.run_at.0)
        .collect();
    at.sort_unstable();
    at
}

#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn three_workers_enqueue_each_slot_exactly_once() {
    for db in backends("schedule_three_workers").await {
        let spec = every_slot("tick", Duration::from_secs(1));
        db.store.add_schedule(&spec, Millis(T0)).await.unwrap();
        let b = db.second_store(StoreConfig::default()).await;
        let c = db.second_store(StoreConfig::default()).await;
        // 400 rounds of three workers at once, time moving by uneven steps
        // (sometimes several slots per step), each worker's clock a little
        // off the others'.
        let mut now = T0;
        for round in 0..400u64 {
            now += [300, 700, 1_000, 2_300, 150][(round % 5) as usize];
            let (ra, rb, rc) = tokio::join!(
                db.store.run_due_schedules("sched", Millis(now)),
                b.run_due_schedules("sched", Millis(now + 40)),
                c.run_due_schedules("sched", Millis(now.saturating_sub(60))),
            );
            for r in [ra, rb, rc] {
                r.unwrap();
            }
        }
        let last = now + 40;
        let expected: Vec<u64> = (T0 / SEC + 1..=last / SEC).map(|s| s * SEC).collect();
        let got = slots(&db.store).await;
        let twice: Vec<&u64> = got.windows(2).filter(|w| w[0] == w[1]).map(|w| &w[0]).collect();
        assert!(twice.is_empty(), "{}: {} slots enqueued twice or more, first {:?}", db.label(), twice.len(), twice.first());
        assert_eq!(got, expected, "{}: every slot once", db.label());
    }
}

/// A schedule added at T0, every minute, under `catch_up`, whose workers
/// were down from T0 until `back` (10 minutes and 30 s later, or more).
async fn restart_after_downtime(db: &TestDb, catch_up: CatchUp, back: u64) -> Vec<u64> {
    let name = format!("down-{}", catch_up.as_str());
    let mut spec = every(&name, Duration::from_secs(60));
    spec.queue = name.clone();
    spec.catch_up = catch_up;
    db.store.add_schedule(&spec, Millis(T0)).await.unwrap();
    let round = db.store.run_due_schedules(&name, Millis(T0 + back)).await.unwrap();
    assert_eq!(round.next_due, Some(Millis(T0 + (back / MIN + 1) * MIN)));
    // Back to normal: the next slot is enqueued on time, once.
    let after = T0 + (back / MIN + 1) * MIN + 200;
    db.store.run_due_schedules(&name, Millis(after)).await.unwrap();
    db.store.run_due_schedules(&name, Millis(after + 500)).await.unwrap();
    let mut at: Vec<u64> =
        db.store.list_jobs(Some(&name), None, 1000).await.unwrap().iter().map(|j| (j.run_at.0 - T0) / MIN).collect();
    at.sort_unstable();
    at
}

backend_test! {
    async fn a_restart_across_missed_slots_follows_the_catch_up_policy(db) {
        let back = 10 * MIN + 30 * SEC;
        // all: each of the 10 missed slots, then the 11th on time.
        assert_eq!(restart_after_downtime(&db, CatchUp::All, back).await, (1..=11).collect::<Vec<_>>());
        // one (the default): one catch-up run for the latest missed slot.
        assert_eq!(restart_after_downtime(&db, CatchUp::One, back).await, vec![10, 11]);
        // none: the missed slots are skipped; the schedule resumes on time.
        assert_eq!(restart_after_downtime(&db, CatchUp::None, back).await, vec![11]);
    }
}

backend_test! {
    async fn catch_up_all_after_a_long_downtime_enqueues_every_slot_in_one_round(db) {
        let spec = every_slot("burst", Duration::from_secs(1));
        db.store.add_schedule(&spec, Millis(T0)).await.unwrap();
        // 250 slots: more than one decision's burst limit (100).
        let round = db.store.run_due_schedules("sched", Millis(T0 + 250 * SEC)).await.unwrap();
        assert_eq!(round.enqueued.len(), 250);
        assert_eq!(slots(&db.store).await, (1..=250).map(|s| T0 + s * SEC).collect::<Vec<_>>());
    }
}

backend_test! {
    async fn a_longer_backlog_goes_on_in_the_next_rounds_without_holding_up_other_schedules(db) {
        let spec = every_slot("backlog", Duration::from_secs(1));
        db.store.add_schedule(&spec, Millis(T0)).await.unwrap();
        let other = every_slot("other", Duration::from_secs(60));
        db.store.add_schedule(&other, Millis(T0)).await.unwrap();
        let now = Millis(T0 + 1_500 * SEC);
        let first = db.store.run_due_schedules("sched", now).await.unwrap();
        let per = |round: &leasehold::store::ScheduleRound, name: &str| round.enqueued.iter().filter(|j| j.schedule == name).count();
        assert_eq!((per(&first, "backlog"), per(&first, "other")), (MAX_ROUND_SLOTS, 25));
        assert_eq!(first.next_due, Some(Millis(T0 + (MAX_ROUND_SLOTS as u64 + 1) * SEC)), "more is due");
        let second = db.store.run_due_schedules("sched", now).await.unwrap();
        assert_eq!(per(&second, "backlog"), 1_500 - MAX_ROUND_SLOTS);
        assert_eq!(slots(&db.store).await.len(), 1_525);
    }
}

backend_test! {
    async fn no_overlap_skips_slots_while_the_long_job_is_queued_or_running(db) {
        let mut spec = every("long", Duration::from_secs(1));
        spec.overlap = Overlap::Skip;
        db.store.add_schedule(&spec, Millis(T0)).await.unwrap();
        db.store.run_due_schedules("sched", Millis(T0 + SEC)).await.unwrap();
        // Slot 2 while the first job is still queued: skipped.
        let round = db.store.run_due_schedules("sched", Millis(T0 + 2 * SEC)).await.unwrap();
        assert_eq!((round.enqueued.len(), round.skipped), (0, 1));
        let claimed = db
            .store
            .claim("sched", &owner("h", "n"), Millis(T0 + 2 * SEC + 100), Duration::from_secs(60))
            .await
            .unwrap()
            .expect("the first job is due");
        // Slots 3..=6 while it runs: skipped, however they come.
        for s in 3..=6 {
            db.store.run_due_schedules("sched", Millis(T0 + s * SEC)).await.unwrap();
        }
        assert_eq!(slots(&db.store).await, vec![T0 + SEC]);
        let record = db.store.schedule("long").await.unwrap();
        assert_eq!(record.last_run.unwrap().state, Some(JobState::Running));
        db.store.complete(claimed.fence(), None, Millis(T0 + 6 * SEC + 500)).await.unwrap();
        // Slot 7 after it ended: enqueued.
        db.store.run_due_schedules("sched", Millis(T0 + 7 * SEC)).await.unwrap();
        assert_eq!(slots(&db.store).await, vec![T0 + SEC, T0 + 7 * SEC]);
    }
}

backend_test! {
    async fn overlap_is_allowed_by_default(db) {
        db.store.add_schedule(&every("busy", Duration::from_secs(1)), Millis(T0)).await.unwrap();
        for s in 1..=3 {
            db.store.run_due_schedules("sched", Millis(T0 + s * SEC)).await.unwrap();
        }
        assert_eq!(slots(&db.store).await.len(), 3);
    }
}

backend_test! {
    async fn a_paused_schedule_enqueues_nothing_and_resumes_from_the_resume(db) {
        let s = &db.store;
        s.add_schedule(&every("p", Duration::from_secs(60)), Millis(T0)).await.unwrap();
        assert!(s.pause_schedule("p", Millis(T0 + 10 * SEC)).await.unwrap());
        assert!(!s.pause_schedule("p", Millis(T0 + 11 * SEC)).await.unwrap(), "paused already");
        s.run_due_schedules("sched", Millis(T0 + 5 * MIN)).await.unwrap();
        assert!(slots(s).await.is_empty());
        assert_eq!(s.schedule("p").await.unwrap().paused_at, Some(Millis(T0 + 10 * SEC)));
        assert!(s.resume_schedule("p", Millis(T0 + 5 * MIN + 30 * SEC)).await.unwrap());
        assert!(!s.resume_schedule("p", Millis(T0 + 5 * MIN + 31 * SEC)).await.unwrap(), "running already");
        // The slots of the pause are skipped; the next one after the resume runs.
        s.run_due_schedules("sched", Millis(T0 + 5 * MIN + 40 * SEC)).await.unwrap();
        assert!(slots(s).await.is_empty());
        s.run_due_schedules("sched", Millis(T0 + 6 * MIN)).await.unwrap();
        assert_eq!(slots(s).await, vec![T0 + 6 * MIN]);
        let record = s.schedule("p").await.unwrap();
        assert_eq!((record.paused_at, record.next_slot), (None, Some(Millis(T0 + 7 * MIN))));
        let last = record.last_run.unwrap();
        assert_eq!((last.slot, last.state), (Millis(T0 + 6 * MIN), Some(JobState::Queued)));
    }
}

backend_test! {
    async fn a_removed_schedule_stops_and_keeps_its_jobs(db) {
        let s = &db.store;
        s.add_schedule(&every("gone", Duration::from_secs(1)), Millis(T0)).await.unwrap();
        s.run_due_schedules("sched", Millis(T0 + SEC)).await.unwrap();
        s.remove_schedule("gone").await.unwrap();
        s.run_due_schedules("sched", Millis(T0 + 5 * SEC)).await.unwrap();
        assert_eq!(slots(s).await, vec![T0 + SEC]);
        assert!(matches!(s.remove_schedule("gone").await, Err(StoreError::UnknownSchedule(_))));
        assert!(matches!(s.pause_schedule("gone", Millis(T0)).await, Err(StoreError::UnknownSchedule(_))));
        assert!(s.schedules().await.unwrap().is_empty());
    }
}

backend_test! {
    async fn bad_schedules_are_refused_naming_the_mistake_and_nothing_changes(db) {
        let s = &db.store;
        let original = s.add_schedule(&every("taken", Duration::from_secs(5)), Millis(T0)).await.unwrap();
        let cases: Vec<(ScheduleSpec, &str)> = vec![
            (every("fast", Duration::from_millis(500)), "every"),
            (every("slow", Duration::from_secs(400 * 86_400)), "every"),
            (ScheduleSpec::new("c", "sched", Cadence::cron("61 * * * *", None), json!({})), "cron"),
            (ScheduleSpec::new("z", "sched", Cadence::cron("0 3 * * *", Some("Mars/Olympus")), json!({})), "time_zone"),
            (every("bad name", Duration::from_secs(5)), "name"),
            (ScheduleSpec { max_attempts: 0, ..every("zero", Duration::from_secs(5)) }, "max_attempts"),
        ];
        for (spec, option) in cases {
            match s.add_schedule(&spec, Millis(T0)).await {
                Err(StoreError::InvalidOption { option: named, .. }) => assert_eq!(named, option, "{}", spec.name),
                other => panic!("{}: {other:?}", spec.name),
            }
        }
        let mut twin = every("taken", Duration::from_secs(60));
        twin.queue = "elsewhere".into();
        assert!(matches!(s.add_schedule(&twin, Millis(T0 + 1)).await, Err(StoreError::DuplicateSchedule(n)) if n == "taken"));
        assert_eq!(s.schedules().await.unwrap(), vec![original]);
    }
}

backend_test! {
    async fn a_schedule_reads_back_as_added(db) {
        let mut spec = ScheduleSpec::new("nightly", "sched", Cadence::cron("0 3 * * *", Some("Europe/Berlin")), json!({"command": "backup"}));
        spec.max_attempts = 7;
        spec.timeout = Some(Duration::from_secs(90));
        spec.catch_up = CatchUp::None;
        spec.overlap = Overlap::Skip;
        let record = db.store.add_schedule(&spec, Millis(T0)).await.unwrap();
        assert_eq!(record.spec, spec);
        assert_eq!(record.created_at, Millis(T0));
        // T0 is 2023-11-14T22:14:00Z; 03:00 in Berlin (UTC+1) is 02:00Z the next day.
        assert_eq!(record.next_slot, Some(Millis(1_700_013_600_000)));
        assert_eq!(record.last_run, None);
    }
}

backend_test! {
    async fn the_drive_task_enqueues_due_slots_by_the_system_clock(db) {
        let spec = every_slot("driven", Duration::from_secs(1));
        let added = db.store.add_schedule(&spec, store_support::wall_now()).await.unwrap();
        let task = tokio::spawn(leasehold::schedule::drive(db.store.clone(), "sched".to_owned()));
        tokio::time::sleep(Duration::from_millis(2_600)).await;
        task.abort();
        let at = slots(&db.store).await;
        let first = added.next_slot.unwrap().0;
        assert!(at.len() >= 2, "{}: a slot a second for 2.6 s: {at:?}", db.label());
        assert_eq!(at, (0..at.len() as u64).map(|i| first + i * SEC).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn the_drive_task_refuses_a_queue_no_store_accepts_at_once() {
    // It ran on, each round refused by the store and said once in the logs.
    let dir = tempfile::tempdir().unwrap();
    let store = leasehold::store::Store::connect(&format!("sqlite://{}", dir.path().join("q.db").display())).await.unwrap();
    let drive = leasehold::schedule::drive(store, "bad name".to_owned());
    let ended = tokio::time::timeout(Duration::from_secs(3), drive).await.expect("it ended at once");
    assert_eq!(
        ended.unwrap_err().to_string(),
        "invalid queue name \"bad name\": only A-Z a-z 0-9 _ - . : are allowed"
    );
}
