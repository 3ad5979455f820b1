//! The pump's passes (seed 004 `EventPump`): kicks batched after a delay,
//! derivation only past the watermarks across restarts, chunks with their
//! watermarks, backfill of a replaced log, close, and a task that ends with
//! its handles. Virtual time (`tokio::time::pause`).

mod eventlog_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use leasehold::pump::{EventSource, Pump, PumpError};
use tokio::time::sleep;

use eventlog_support::{FaultyStorage, Journal, clock_at, contents, frame_sizes, open_pump, pump_options, temp_log, total_drafts};

async fn records(pump: &Pump) -> u64 {
    pump.status().await.unwrap().head.unwrap().records
}

#[tokio::test(start_paused = true)]
async fn a_kick_derives_after_the_delay_and_not_before() {
    let (_dir, path) = temp_log();
    let a = Journal::new(0);
    let pump = open_pump(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)), &[("a", &a)]).await;
    a.grow(3);
    pump.kick("a");
    sleep(Duration::from_millis(49)).await;
    assert_eq!(records(&pump).await, 0, "nothing before 50 ms");
    sleep(Duration::from_millis(1)).await;
    assert_eq!(records(&pump).await, total_drafts(3) as u64);
}

#[tokio::test(start_paused = true)]
async fn kicks_within_the_delay_make_one_pass() {
    let (_dir, path) = temp_log();
    let (a, b) = (Journal::new(0), Journal::new(0));
    let pump = open_pump(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)), &[("a", &a), ("b", &b)]).await;
    let passes_before = a.reads.load(Ordering::SeqCst);
    for step in 0..5 {
        a.grow(1);
        b.grow(2);
        pump.kick("a");
        pump.kick("b");
        sleep(Duration::from_millis(9)).await;
        assert_eq!(records(&pump).await, 0, "step {step}: still batching");
    }
    sleep(Duration::from_millis(10)).await;
    assert_eq!(a.reads.load(Ordering::SeqCst) - passes_before, 1, "one pass for five kicks");
    assert_eq!(frame_sizes(&path).len(), 1, "one append");
    let logged = contents(&path);
    logged.assert_complete("a", 5);
    logged.assert_complete("b", 10);
}

#[tokio::test(start_paused = true)]
async fn open_derives_every_source_past_its_watermark_only() {
    let (_dir, path) = temp_log();
    let a = Journal::new(10);
    let options = pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0));
    let pump = open_pump(options.clone(), &[("a", &a)]).await;
    assert!(pump.status().await.unwrap().backfilled, "a new log is a backfill");
    pump.close().await.unwrap();
    assert_eq!(contents(&path).count("a"), total_drafts(10));

    a.grow(5);
    let pump = open_pump(options, &[("a", &a)]).await;
    assert!(!pump.status().await.unwrap().backfilled);
    pump.close().await.unwrap();
    let logged = contents(&path);
    assert_eq!(logged.count("a"), total_drafts(15), "each event once: derived only past the watermark");
    logged.assert_complete("a", 15);
}

#[tokio::test(start_paused = true)]
async fn a_corrupt_log_is_replaced_and_every_source_derived_again() {
    let (_dir, path) = temp_log();
    let a = Journal::new(6);
    let options = pump_options(&path, 2, &FaultyStorage::new(), &clock_at(0));
    let pump = open_pump(options.clone(), &[("a", &a)]).await;
    pump.close().await.unwrap();
    let first = contents(&path).epoch;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[40] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();

    let pump = open_pump(options, &[("a", &a)]).await;
    let status = pump.status().await.unwrap();
    assert!(status.backfilled);
    assert_ne!(status.head.unwrap().epoch, first);
    pump.close().await.unwrap();
    contents(&path).assert_complete("a", 6);
}

#[tokio::test(start_paused = true)]
async fn a_pass_appends_chunks_of_at_most_the_chunk_size() {
    let (_dir, path) = temp_log();
    let a = Journal::new(0);
    let pump = open_pump(pump_options(&path, 3, &FaultyStorage::new(), &clock_at(0)), &[("a", &a)]).await;
    a.grow(20);
    pump.flush().await.unwrap();
    let sizes = frame_sizes(&path);
    assert!(sizes.iter().all(|n| *n <= 3), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<u32>() as usize, total_drafts(20));
    assert!(a.logged.lock().unwrap().windows(2).all(|w| w[0] < w[1]), "watermarks grow chunk by chunk");
    assert_eq!(a.logged.lock().unwrap().last(), Some(&20));
}

#[tokio::test(start_paused = true)]
async fn close_records_watermarks_that_moved_without_events() {
    let (_dir, path) = temp_log();
    // Entries 0..3 derive events; entry 3 derives none.
    assert_eq!(eventlog_support::drafts_of(3), 0);
    let a = Journal::new(3);
    let pump = open_pump(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)), &[("a", &a)]).await;
    a.grow(1);
    pump.kick("a");
    sleep(Duration::from_millis(50)).await;
    assert_eq!(pump.status().await.unwrap().marks.get("a"), Some(&4), "moved in memory");
    assert_eq!(contents(&path).marks.get("a"), Some(&3), "not written: no events to carry it");
    pump.close().await.unwrap();
    assert_eq!(contents(&path).marks.get("a"), Some(&4), "close records it");
    assert!(matches!(pump.flush().await, Err(PumpError::Closed)));
    pump.close().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_task_ends_when_every_handle_is_dropped_even_with_a_timer_armed() {
    let (_dir, path) = temp_log();
    let a = Journal::new(0);
    let mut builder = Pump::builder(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)));
    let kicker = builder.kicker();
    builder.source("a", Arc::clone(&a) as Arc<dyn EventSource>);
    let pump = builder.open().await.unwrap();
    assert_eq!(Arc::strong_count(&a), 2, "the task holds the source");
    a.grow(1);
    pump.kick("a");
    drop(pump);
    // No time passes: the armed 50 ms timer does not keep the task.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(Arc::strong_count(&a), 1, "the task ended and let its sources go");
    kicker.kick("a"); // a kicker outliving the pump does nothing
}

#[tokio::test(start_paused = true)]
async fn a_source_added_after_open_is_derived_and_a_removed_one_forgotten() {
    let (_dir, path) = temp_log();
    let a = Journal::new(2);
    let pump = open_pump(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)), &[("a", &a)]).await;
    let b = Journal::new(4);
    pump.add_source("b", Arc::clone(&b) as Arc<dyn EventSource>).await.unwrap();
    sleep(Duration::from_millis(50)).await;
    pump.status().await.unwrap(); // after the pass the timer ran
    contents(&path).assert_complete("b", 4);

    a.grow(3);
    pump.remove_source("a").await.unwrap();
    let status = pump.status().await.unwrap();
    assert!(!status.marks.contains_key("a"), "forgotten");
    contents(&path).assert_complete("a", 5);
    assert_eq!(Arc::strong_count(&a), 1, "its journal may go now");
}

/// An older copy of the log put in its place after the last append: `flush`
/// does not answer that the events are logged (they are not in the file the
/// path names), and the next flush derives every source into a new log.
#[tokio::test(start_paused = true)]
async fn a_flush_after_the_log_was_swapped_for_an_older_copy_fails_then_backfills() {
    let (_dir, path) = temp_log();
    let a = Journal::new(0);
    let pump = open_pump(pump_options(&path, 4, &FaultyStorage::new(), &clock_at(0)), &[("a", &a)]).await;
    a.grow(3);
    pump.flush().await.unwrap();
    let early = std::fs::read(&path).unwrap();
    let epoch = contents(&path).epoch;
    a.grow(3);
    pump.flush().await.unwrap();
    let copy = path.with_extension("old");
    std::fs::write(&copy, &early).unwrap();
    std::fs::rename(&copy, &path).unwrap();

    let err = pump.flush().await.unwrap_err();
    assert!(matches!(err, PumpError::Log(_)), "{err}");
    pump.flush().await.unwrap();
    let logged = contents(&path);
    assert_ne!(logged.epoch, epoch, "a new log: readers start over");
    logged.assert_complete("a", 6);
    pump.close().await.unwrap();
}
