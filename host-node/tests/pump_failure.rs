//! A pass that can not log (seed 004 `EventPump.pass` `catch`): the sources
//! stay dirty, the error is reported once and not once per retry, a retry
//! runs in the background after a second, and `flush` fails. Virtual time.

mod eventlog_support;

use std::time::Duration;

use leasehold::pump::PumpError;
use tokio::time::sleep;

use eventlog_support::{Captured, Fault, FaultyStorage, Journal, clock_at, contents, open_pump, pump_options, temp_log};

const REPORT: &str = "event log append failed";

#[tokio::test(start_paused = true)]
async fn a_failing_log_is_reported_once_retried_every_second_and_recovers() {
    let captured = Captured::global();
    let (_dir, path) = temp_log();
    let here = path.to_str().unwrap();
    let reports = || captured.count_all(&[REPORT, here]);
    let storage = FaultyStorage::new();
    let a = Journal::new(0);
    let pump = open_pump(pump_options(&path, 8, &storage, &clock_at(0)), &[("a", &a)]).await;

    a.grow(10);
    storage.fail_every_append(Fault::WriteNothing);
    let err = pump.flush().await.unwrap_err();
    assert!(matches!(err, PumpError::Log(_)), "{err}");
    assert_eq!(reports(), 1);
    let status = pump.status().await.unwrap();
    assert!(status.failing.is_some_and(|f| f.contains("injected")));
    assert_eq!(status.dirty, vec!["a".to_string()], "the source stays dirty");

    let attempts = storage.appends();
    sleep(Duration::from_millis(999)).await;
    pump.status().await.unwrap();
    assert_eq!(storage.appends(), attempts, "no retry before a second");
    sleep(Duration::from_millis(1)).await;
    pump.status().await.unwrap();
    assert_eq!(storage.appends(), attempts + 1, "the background retry ran");
    for _ in 0..5 {
        sleep(Duration::from_secs(1)).await;
    }
    pump.status().await.unwrap();
    assert_eq!(storage.appends(), attempts + 6, "one retry a second");
    assert_eq!(reports(), 1, "reported once, not once per retry");

    storage.heal();
    sleep(Duration::from_secs(1)).await;
    let status = pump.status().await.unwrap();
    assert_eq!(status.failing, None);
    assert!(status.dirty.is_empty());
    contents(&path).assert_complete("a", 10);

    // A new failure after the recovery is a new episode: reported again.
    a.grow(2);
    storage.fail_every_append(Fault::SyncFails);
    pump.flush().await.unwrap_err();
    assert_eq!(reports(), 2);
    storage.heal();
    pump.close().await.unwrap();
    contents(&path).assert_complete("a", 12);
}

#[tokio::test(start_paused = true)]
async fn a_failing_first_pass_does_not_fail_the_open() {
    let (_dir, path) = temp_log();
    let storage = FaultyStorage::new();
    // Create the log first, so only the pass's append fails.
    drop(open_pump(pump_options(&path, 8, &storage, &clock_at(0)), &[]).await);
    let a = Journal::new(5);
    storage.fail_every_append(Fault::WriteNothing);
    let pump = open_pump(pump_options(&path, 8, &storage, &clock_at(0)), &[("a", &a)]).await;
    assert!(pump.status().await.unwrap().failing.is_some());
    storage.heal();
    sleep(Duration::from_secs(1)).await;
    pump.status().await.unwrap();
    contents(&path).assert_complete("a", 5);
}

#[tokio::test(start_paused = true)]
async fn remove_source_keeps_a_source_whose_events_could_not_be_logged() {
    let (_dir, path) = temp_log();
    let storage = FaultyStorage::new();
    let a = Journal::new(0);
    let pump = open_pump(pump_options(&path, 8, &storage, &clock_at(0)), &[("a", &a)]).await;
    a.grow(4);
    storage.fail_every_append(Fault::WriteNothing);
    assert!(pump.remove_source("a").await.is_err());
    assert!(pump.status().await.unwrap().dirty.contains(&"a".to_string()), "still registered and dirty");
    storage.heal();
    pump.remove_source("a").await.unwrap();
    contents(&path).assert_complete("a", 4);
}

/// A journal whose `derive` panics on one entry while `broken` holds.
struct Panicky {
    journal: std::sync::Arc<Journal>,
    at: u64,
    broken: std::sync::atomic::AtomicBool,
}

impl leasehold::pump::EventSource for Panicky {
    fn committed_len(&self) -> u64 {
        self.journal.committed_len()
    }
    fn derive(&self, index: u64, out: &mut Vec<leasehold::pump::EventDraft>) {
        if index == self.at && self.broken.load(std::sync::atomic::Ordering::SeqCst) {
            panic!("entry {index} is unreadable");
        }
        self.journal.derive(index, out);
    }
}

#[tokio::test]
async fn a_source_that_panics_fails_the_pass_naming_it_and_the_others_are_logged() {
    use leasehold::pump::EventSource;
    let (_dir, path) = temp_log();
    let storage = FaultyStorage::new();
    let (a, b) = (Journal::new(0), Journal::new(0));
    let panicky = std::sync::Arc::new(Panicky {
        journal: std::sync::Arc::clone(&a),
        at: 3,
        broken: std::sync::atomic::AtomicBool::new(true),
    });
    let mut builder = leasehold::pump::Pump::builder(pump_options(&path, 4, &storage, &clock_at(0)));
    builder.source("a", std::sync::Arc::clone(&panicky) as std::sync::Arc<dyn EventSource>);
    builder.source("b", std::sync::Arc::clone(&b) as std::sync::Arc<dyn EventSource>);
    let pump = builder.open().await.unwrap();
    a.grow(6);
    b.grow(5);

    let err = pump.flush().await.unwrap_err();
    match &err {
        PumpError::SourcePanicked { source_name, index, message } => {
            assert_eq!((source_name.as_str(), *index), ("a", 3));
            assert!(message.contains("entry 3 is unreadable"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let logged = contents(&path);
    logged.assert_complete("b", 5);
    assert_eq!(logged.marks.get("a").copied(), Some(3), "a's watermark stops before the entry");
    assert_eq!(logged.count("a"), eventlog_support::total_drafts(3));
    assert!(pump.status().await.unwrap().dirty.contains(&"a".to_string()), "a stays dirty");

    // Mended, the next flush logs the rest; the pump kept working throughout.
    panicky.broken.store(false, std::sync::atomic::Ordering::SeqCst);
    pump.flush().await.unwrap();
    pump.close().await.unwrap();
    let after = contents(&path);
    after.assert_complete("a", 6);
    after.assert_complete("b", 5);
}
