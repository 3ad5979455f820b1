//! One writer per log: a second open of a log that is open for writing is
//! refused with a clear error and touches nothing; closing or dropping the
//! first lets the next one in.

mod eventlog_support;

use std::fs;

use leasehold::eventlog::{EventLog, EventRecord, LogError, LogOptions, read_log};
use leasehold::pump::{Pump, PumpError, PumpOptions};
use serde_json::json;

use eventlog_support::temp_log;

fn event(n: u64) -> EventRecord {
    EventRecord { source: "s".to_owned(), at: n, kind: "step".to_owned(), identity: Default::default(), body: json!(n) }
}

#[test]
fn a_second_writer_is_refused_and_changes_nothing() {
    let (_dir, path) = temp_log();
    let mut first = EventLog::open(&path, LogOptions::default()).unwrap().log;
    first.append(&[event(0), event(1)], [("s", 2)]).unwrap();
    let before = fs::read(&path).unwrap();

    let err = EventLog::open(&path, LogOptions::default()).map(|_| ()).unwrap_err();
    assert!(matches!(err, LogError::InUse { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()) && text.contains("one writer per log"), "{text}");
    assert_eq!(fs::read(&path).unwrap(), before, "the refused open touched the log");

    // The first writer goes on as if nothing happened.
    first.append(&[event(2)], [("s", 3)]).unwrap();
    assert_eq!(read_log(&path, 0).unwrap().records.len(), 3);
}

#[test]
fn closing_or_dropping_the_writer_lets_the_next_one_open() {
    let (_dir, path) = temp_log();
    let mut first = EventLog::open(&path, LogOptions::default()).unwrap().log;
    first.append(&[event(0)], [("s", 1)]).unwrap();
    first.close();
    let mut second = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(!second.created, "the closed log is reopened, not replaced");
    second.log.append(&[event(1)], [("s", 2)]).unwrap();
    drop(second);
    let third = EventLog::open(&path, LogOptions::default()).unwrap().log;
    assert_eq!(third.marks().get("s"), Some(&2));
}

#[tokio::test]
async fn a_second_pump_on_the_same_log_is_refused() {
    let (_dir, path) = temp_log();
    let first = Pump::builder(PumpOptions::new(&path)).open().await.unwrap();
    let err = Pump::builder(PumpOptions::new(&path)).open().await.map(|_| ()).unwrap_err();
    assert!(matches!(err, PumpError::Log(LogError::InUse { .. })), "{err:?}");
    first.close().await.unwrap();
    Pump::builder(PumpOptions::new(&path)).open().await.unwrap().close().await.unwrap();
}

#[cfg(unix)]
#[test]
fn a_second_writer_through_a_symbolic_or_hard_link_is_refused() {
    let (dir, path) = temp_log();
    let mut first = EventLog::open(&path, LogOptions::default()).unwrap().log;
    first.append(&[event(0)], [("s", 1)]).unwrap();
    let symbolic = dir.path().join("symbolic.log");
    std::os::unix::fs::symlink(&path, &symbolic).unwrap();
    let hard = dir.path().join("hard.log");
    fs::hard_link(&path, &hard).unwrap();
    for alias in [&symbolic, &hard] {
        let err = EventLog::open(alias, LogOptions::default()).map(|_| ()).unwrap_err();
        assert!(matches!(err, LogError::InUse { .. }), "{}: {err:?}", alias.display());
    }
    first.append(&[event(1)], [("s", 2)]).unwrap();
    assert_eq!(read_log(&path, 0).unwrap().records.len(), 2);
}
