//! Compaction of the event log (seed 004 `EventLog.compact`): old records of
//! quiet sources go, the rest and the watermarks stay; a compaction
//! interrupted before the rename leaves the log as it was, one interrupted
//! after it leaves the log broken until the next append reopens it.

mod eventlog_support;

use std::fs;
use std::sync::Arc;

use leasehold::core::Millis;
use leasehold::eventlog::{EventLog, EventRecord, LogError, LogOptions, read_log};
use serde_json::json;

use eventlog_support::{FaultyStorage, temp_log};

fn event(source: &str, at: u64) -> EventRecord {
    EventRecord { source: source.to_owned(), at, kind: "step".to_owned(), identity: Default::default(), body: json!(at) }
}

fn faulty_log(path: &std::path::Path, storage: &FaultyStorage) -> EventLog {
    let options = LogOptions { storage: Arc::new(storage.clone()), ..LogOptions::default() };
    let mut log = EventLog::open(path, options).unwrap().log;
    log.append(&[event("old", 10), event("busy", 20), event("old", 30)], [("old", 2), ("busy", 1)]).unwrap();
    log.append(&[event("old", 500), event("busy", 600)], [("old", 3), ("busy", 2)]).unwrap();
    log
}

/// Drops records before 100 of sources other than `busy`.
/// A [`faulty_log`] in a fresh temp folder over storage that has not failed
/// yet: the folder (kept alive), the log's path, the storage (to make its
/// next writes fail) and the log.
fn fresh_log() -> (tempfile::TempDir, std::path::PathBuf, FaultyStorage, EventLog) {
    let (dir, path) = temp_log();
    let storage = FaultyStorage::new();
    let log = faulty_log(&path, &storage);
    (dir, path, storage, log)
}

fn old_and_quiet(source: &str, at: Millis) -> bool {
    at < Millis(100) && source != "busy"
}

fn sources_and_times(path: &std::path::Path) -> Vec<(String, u64, u64)> {
    read_log(path, 0).unwrap().records.into_iter().map(|r| (r.event.source, r.event.at, r.seq)).collect()
}

#[test]
fn compaction_drops_old_records_of_quiet_sources_and_keeps_the_rest() {
    let (_dir, path, _storage, mut log) = fresh_log();
    let epoch = log.head().epoch;
    let dropped = log.compact(old_and_quiet, [("old", 3u64), ("busy", 2)]).unwrap();
    assert_eq!(dropped, 2);
    assert_eq!(
        sources_and_times(&path),
        vec![("busy".into(), 20, 1), ("old".into(), 500, 3), ("busy".into(), 600, 4)],
        "records of a source that is not quiet stay however old; sequence numbers stay"
    );
    let head = log.head();
    assert_eq!((head.epoch, head.records, head.dropped), (epoch, 3, 2));
    drop(log);
    let reopened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(!reopened.created);
    assert_eq!(reopened.log.head().epoch, epoch);
    assert_eq!(reopened.log.marks().get("old"), Some(&3));
    assert_eq!(reopened.log.marks().get("busy"), Some(&2));
}

#[test]
fn compaction_with_nothing_to_drop_leaves_the_file_untouched() {
    let (_dir, path) = temp_log();
    let mut log = faulty_log(&path, &FaultyStorage::new());
    let before = fs::read(&path).unwrap();
    assert_eq!(log.compact(|_, _| false, [("old", 9u64)]).unwrap(), 0);
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn compaction_dropping_everything_keeps_the_watermarks() {
    let (_dir, path) = temp_log();
    let mut log = faulty_log(&path, &FaultyStorage::new());
    assert_eq!(log.compact(|_, _| true, [("old", 3u64), ("busy", 2)]).unwrap(), 5);
    drop(log);
    let reopened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert_eq!(reopened.log.head().records, 0);
    assert_eq!(reopened.log.marks().get("busy"), Some(&2));
}

#[test]
fn compaction_interrupted_before_the_rename_leaves_the_log_as_it_was() {
    for fail in ["temp fsync", "rename"] {
        let (_dir, path, storage, mut log) = fresh_log();
        let before = fs::read(&path).unwrap();
        match fail {
            "temp fsync" => storage.fail_temp_sync(),
            _ => storage.fail_rename(),
        }
        let err = log.compact(old_and_quiet, [("old", 3u64), ("busy", 2)]).unwrap_err();
        assert!(matches!(err, LogError::Io { .. }), "{fail}: {err}");
        assert_eq!(fs::read(&path).unwrap(), before, "{fail}: the log is untouched");
        assert!(!path.with_file_name("events.log.compact").exists(), "{fail}: no temp file left");
        assert!(!log.is_broken(), "{fail}: the open file is still the log");
        log.append(&[event("busy", 700)], [("busy", 3)]).unwrap();
        assert_eq!(sources_and_times(&path).len(), 6, "{fail}: appends go on");
    }
}

#[test]
fn compaction_interrupted_after_the_rename_breaks_the_log_until_the_next_append_reopens_it() {
    let (_dir, path, storage, mut log) = fresh_log();
    let epoch = log.head().epoch;
    storage.fail_dir_sync();
    let err = log.compact(old_and_quiet, [("old", 3u64), ("busy", 2)]).unwrap_err();
    assert!(err.to_string().contains("fsync directory"), "{err}");
    assert!(log.is_broken());
    assert_eq!(sources_and_times(&path).len(), 3, "the compacted file is in place");

    let seqs = log.append(&[event("busy", 700)], [("busy", 3)]).unwrap();
    assert!(!log.is_broken(), "the append reopened it");
    assert_eq!(log.head().epoch, epoch, "same log, same epoch");
    assert!(seqs.start > 4);
    let times: Vec<u64> = sources_and_times(&path).into_iter().map(|(_, at, _)| at).collect();
    assert_eq!(times, vec![20, 500, 600, 700]);
    assert_eq!(log.marks().get("old"), Some(&3), "the compaction's watermarks survived the reopen");
}
