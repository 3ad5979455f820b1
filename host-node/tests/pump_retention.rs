//! Compaction through the pump (seed 004 `EventPump.compact`): at open and at
//! most hourly, with the caller's retention window and each source's quiet
//! predicate; events of sources that are not quiet stay. Virtual time for
//! the schedule, an injected wall clock for the cutoff.

mod eventlog_support;

use std::time::Duration;

use tokio::time::sleep;

use eventlog_support::{FaultyStorage, Journal, clock_at, contents, open_pump, pump_options, temp_log, total_drafts};

/// Journal events are stamped `1_000 + i` ms; this wall clock makes them a
/// day old.
const A_DAY_LATER: u64 = 86_400_000;

#[tokio::test(start_paused = true)]
async fn compaction_at_open_drops_old_events_of_quiet_and_gone_sources_only() {
    let (_dir, path) = temp_log();
    let clock = clock_at(A_DAY_LATER);
    let (quiet, busy, gone) = (Journal::new(8), Journal::new(8), Journal::new(8));
    let mut options = pump_options(&path, 1024, &FaultyStorage::new(), &clock);
    options.retention = Duration::from_secs(3_600);
    let pump = open_pump(options.clone(), &[("quiet", &quiet), ("busy", &busy), ("gone", &gone)]).await;
    pump.close().await.unwrap();
    assert_eq!(contents(&path).count("gone"), total_drafts(8));

    quiet.set_quiet(true);
    let pump = open_pump(options, &[("quiet", &quiet), ("busy", &busy)]).await;
    let status = pump.status().await.unwrap();
    assert_eq!(status.head.unwrap().dropped, 2 * total_drafts(8) as u64);
    assert_eq!(status.marks.get("quiet"), Some(&8), "its watermark stays: nothing is derived again");
    pump.close().await.unwrap();
    let logged = contents(&path);
    assert_eq!(logged.count("quiet"), 0);
    assert_eq!(logged.count("gone"), 0);
    logged.assert_complete("busy", 8);
}

#[tokio::test(start_paused = true)]
async fn recent_events_stay_even_for_a_quiet_source() {
    let (_dir, path) = temp_log();
    // The wall clock is a minute after the events: inside the window.
    let clock = clock_at(61_000);
    let a = Journal::new(6);
    a.set_quiet(true);
    let mut options = pump_options(&path, 1024, &FaultyStorage::new(), &clock);
    options.retention = Duration::from_secs(3_600);
    let pump = open_pump(options, &[("a", &a)]).await;
    assert_eq!(pump.compact().await.unwrap(), 0);
    pump.close().await.unwrap();
    assert_eq!(contents(&path).count("a"), total_drafts(6));
}

#[tokio::test(start_paused = true)]
async fn compaction_runs_after_a_pass_at_most_hourly() {
    let (_dir, path) = temp_log();
    let clock = clock_at(A_DAY_LATER);
    let a = Journal::new(4);
    let b = Journal::new(0);
    let mut options = pump_options(&path, 1024, &FaultyStorage::new(), &clock);
    options.retention = Duration::from_secs(3_600);
    let pump = open_pump(options, &[("a", &a), ("b", &b)]).await;
    // Open compacted before the first pass logged anything; now `a` goes quiet.
    a.set_quiet(true);
    let passes = || async {
        b.grow(1);
        pump.kick("b");
        sleep(Duration::from_millis(50)).await;
        pump.status().await.unwrap().head.unwrap().dropped
    };
    assert_eq!(passes().await, 0);
    sleep(Duration::from_secs(30 * 60)).await;
    assert_eq!(passes().await, 0, "half an hour after open: not yet");
    sleep(Duration::from_secs(30 * 60)).await;
    assert_eq!(passes().await, total_drafts(4) as u64, "an hour after open: the pass compacts");
    pump.close().await.unwrap();
    assert_eq!(contents(&path).count("a"), 0);
    assert!(contents(&path).count("b") > 0, "b is not quiet");
}

#[tokio::test(start_paused = true)]
async fn a_compaction_broken_after_its_rename_is_reopened_by_the_next_pass_without_a_backfill() {
    let (_dir, path) = temp_log();
    let clock = clock_at(A_DAY_LATER);
    let storage = FaultyStorage::new();
    let (quiet, busy) = (Journal::new(5), Journal::new(5));
    let mut options = pump_options(&path, 1024, &storage, &clock);
    options.retention = Duration::from_secs(3_600);
    let pump = open_pump(options, &[("quiet", &quiet), ("busy", &busy)]).await;
    let epoch = pump.status().await.unwrap().head.unwrap().epoch;
    quiet.set_quiet(true);
    storage.fail_dir_sync();
    let err = pump.compact().await.unwrap_err();
    assert!(err.to_string().contains("fsync directory"), "{err}");

    busy.grow(3);
    pump.flush().await.unwrap();
    assert_eq!(pump.status().await.unwrap().head.unwrap().epoch, epoch, "the same log, reopened");
    pump.close().await.unwrap();
    let logged = contents(&path);
    assert_eq!(logged.count("quiet"), 0, "the compaction took effect");
    assert_eq!(logged.count("busy"), total_drafts(8), "nothing derived twice: no backfill after the reopen");
    logged.assert_complete("busy", 8);
    assert_eq!(logged.marks.get("quiet"), Some(&5));
}
