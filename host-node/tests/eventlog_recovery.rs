//! Opening the event log (seed 004 `EventLog.open`): a torn tail is truncated
//! with the epoch kept and reopening changes nothing; damage before the tail,
//! a bad header or a missing file start a new epoch and report `created`.

mod eventlog_support;

use std::fs;

use leasehold::core::pump::MAX_CHUNK_SIZE;
use leasehold::eventlog::{EventLog, EventRecord, LogError, LogOptions, read_log};
use serde_json::json;

use eventlog_support::temp_log;

fn event(source: &str, n: u64) -> EventRecord {
    EventRecord {
        source: source.to_owned(),
        at: 1_000 + n,
        kind: "step".to_owned(),
        identity: Default::default(),
        body: json!({ "n": n }),
    }
}

/// A log with three appends; answers the file length before the last one.
fn three_appends(path: &std::path::Path) -> (u64, u64) {
    let mut log = EventLog::open(path, LogOptions::default()).unwrap().log;
    log.append(&[event("a", 0), event("a", 1)], [("a", 2)]).unwrap();
    log.append(&[event("b", 0)], [("b", 1)]).unwrap();
    let before_last = log.head().len;
    log.append(&[event("a", 2), event("b", 1), event("b", 2)], [("a", 3), ("b", 3)]).unwrap();
    (log.head().epoch, before_last)
}

#[test]
fn a_missing_file_creates_a_log_and_says_so() {
    let (_dir, path) = temp_log();
    let opened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(opened.created);
    let notice = opened.notice.expect("a new log is announced");
    assert!(notice.contains("no event log") && notice.contains("new event log"), "{notice}");
    assert!(opened.log.head().epoch > 0);
    assert!(path.exists());
}

#[test]
fn reopening_a_whole_log_keeps_its_epoch_records_and_watermarks() {
    let (_dir, path) = temp_log();
    let (epoch, _) = three_appends(&path);
    let opened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(!opened.created);
    assert_eq!(opened.notice, None, "nothing to say about a whole log");
    let head = opened.log.head();
    assert_eq!((head.epoch, head.records), (epoch, 6));
    assert_eq!(opened.log.marks().get("a"), Some(&3));
    assert_eq!(opened.log.marks().get("b"), Some(&3));
}

#[test]
fn the_start_skip_moves_sequence_numbers_past_a_lost_batch() {
    let (_dir, path) = temp_log();
    three_appends(&path);
    // This open allows batches of 16, but the writer before may have been
    // allowed the most there is.
    let options = LogOptions { max_batch: 16, ..LogOptions::default() };
    let mut log = EventLog::open(&path, options).unwrap().log;
    // The last record was seq 5: a batch of up to MAX_CHUNK_SIZE records a
    // crash lost could have used 6..6 + MAX_CHUNK_SIZE, so that is next.
    let next = 6 + MAX_CHUNK_SIZE as u64;
    assert_eq!(log.head().next_seq, next);
    let seqs = log.append(&[event("a", 9)], [("a", 4)]).unwrap();
    assert_eq!(seqs, next..next + 1);
}

#[test]
fn a_torn_tail_at_every_byte_of_the_last_record_is_truncated_with_the_epoch_kept() {
    let (_dir, path) = temp_log();
    let (epoch, before_last) = three_appends(&path);
    let whole = fs::read(&path).unwrap();
    for cut in before_last as usize + 1..whole.len() {
        fs::write(&path, &whole[..cut]).unwrap();
        let opened = EventLog::open(&path, LogOptions::default()).unwrap();
        assert!(!opened.created, "cut at {cut}: a torn tail is no new log");
        assert!(opened.notice.as_deref().is_some_and(|n| n.contains("torn tail")), "cut at {cut}: said so");
        assert_eq!(opened.log.head().epoch, epoch, "cut at {cut}");
        assert_eq!(opened.log.head().records, 3, "cut at {cut}");
        assert_eq!(opened.log.marks().get("a"), Some(&2), "cut at {cut}: the torn batch's watermarks are gone too");
        assert_eq!(opened.log.marks().get("b"), Some(&1), "cut at {cut}");
        drop(opened);
        let truncated = fs::read(&path).unwrap();
        assert_eq!(truncated, whole[..before_last as usize], "cut at {cut}: back to the last whole record");

        // Opening again changes nothing.
        let again = EventLog::open(&path, LogOptions::default()).unwrap();
        assert!(!again.created);
        assert_eq!(again.notice, None, "cut at {cut}: nothing left to say");
        assert_eq!(again.log.head().epoch, epoch);
        drop(again);
        assert_eq!(fs::read(&path).unwrap(), truncated, "cut at {cut}: reopening is idempotent");
    }
}

#[test]
fn appends_after_a_torn_tail_read_back_whole() {
    let (_dir, path) = temp_log();
    let (epoch, before_last) = three_appends(&path);
    let whole = fs::read(&path).unwrap();
    fs::write(&path, &whole[..before_last as usize + 5]).unwrap();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event("c", 0)], [("c", 1)]).unwrap();
    let read = read_log(&path, 0).unwrap();
    assert_eq!(read.epoch, epoch);
    let sources: Vec<_> = read.records.iter().map(|r| r.event.source.as_str()).collect();
    assert_eq!(sources, vec!["a", "a", "b", "c"]);
}

#[test]
fn a_flipped_byte_in_a_middle_record_starts_a_new_epoch_and_keeps_the_damaged_file() {
    let (_dir, path) = temp_log();
    let (epoch, before_last) = three_appends(&path);
    let mut damaged = fs::read(&path).unwrap();
    // A byte inside the second append's body.
    let at = before_last as usize - 10;
    damaged[at] ^= 0x20;
    fs::write(&path, &damaged).unwrap();

    let opened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(opened.created, "the pump must backfill");
    assert_ne!(opened.log.head().epoch, epoch);
    assert_eq!(opened.log.head().records, 0);
    assert!(opened.log.marks().is_empty(), "no watermark survives: everything is derived again");
    let notice = opened.notice.unwrap();
    assert!(notice.contains("corrupt") && notice.contains("checksum"), "{notice}");
    let kept = path.with_file_name(format!("events.log.corrupt-{}", opened.log.head().epoch));
    assert_eq!(fs::read(kept).unwrap(), damaged, "the damaged log is kept, not destroyed");
}

#[test]
fn a_bad_header_starts_a_new_epoch() {
    let (_dir, path) = temp_log();
    let (epoch, _) = three_appends(&path);
    let mut bytes = fs::read(&path).unwrap();
    bytes[0] = b'X';
    fs::write(&path, &bytes).unwrap();
    let opened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(opened.created);
    assert_ne!(opened.log.head().epoch, epoch);
    assert!(opened.notice.unwrap().contains("bad magic"));
}

#[test]
fn a_leftover_compaction_file_is_removed_at_open() {
    let (_dir, path) = temp_log();
    three_appends(&path);
    let temp = path.with_file_name("events.log.compact");
    fs::write(&temp, b"half a compaction").unwrap();
    let opened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(!opened.created);
    assert_eq!(opened.log.head().records, 6);
    assert!(!temp.exists());
}

#[test]
fn an_append_over_the_batch_limit_is_refused() {
    let (_dir, path) = temp_log();
    let options = LogOptions { max_batch: 2, ..LogOptions::default() };
    let mut log = EventLog::open(&path, options).unwrap().log;
    let err = log.append(&[event("a", 0), event("a", 1), event("a", 2)], [("a", 3)]).unwrap_err();
    assert!(matches!(err, LogError::BatchTooLarge { len: 3, max: 2 }), "{err}");
    assert_eq!(log.head().records, 0);
}

#[test]
fn an_empty_append_writes_nothing() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    let len = log.head().len;
    log.append(&[], std::iter::empty::<(&str, u64)>()).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), len);
}

#[test]
fn a_closed_log_refuses_appends() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.close();
    assert!(matches!(log.append(&[event("a", 0)], [("a", 1)]), Err(LogError::Closed)));
}

#[test]
fn a_second_corruption_keeps_the_first_kept_copy() {
    let (_dir, path) = temp_log();
    let mut kept = Vec::new();
    for round in 0..2u8 {
        let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
        for n in 0..3 {
            log.append(&[event("s", u64::from(round) * 10 + n)], [("s", n + 1)]).unwrap();
        }
        drop(log);
        let mut damaged = fs::read(&path).unwrap();
        // A byte inside the first frame (20-byte header, 12-byte frame head).
        let at = 20 + 12 + 8;
        damaged[at] ^= 0x01;
        fs::write(&path, &damaged).unwrap();
        let opened = EventLog::open(&path, LogOptions::default()).unwrap();
        assert!(opened.created);
        kept.push((path.with_file_name(format!("events.log.corrupt-{}", opened.log.head().epoch)), damaged));
    }
    for (copy, bytes) in kept {
        assert_eq!(fs::read(&copy).unwrap(), bytes, "{} was overwritten", copy.display());
    }
}

#[test]
fn an_unusable_path_or_batch_limit_is_refused_with_what_was_wrong() {
    let err = EventLog::open("", LogOptions::default()).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("path is empty"), "{err}");

    let (dir, _) = temp_log();
    let missing = dir.path().join("no-such-folder").join("events.log");
    let err = EventLog::open(&missing, LogOptions::default()).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("no-such-folder") && err.contains("no such folder"), "{err}");
    assert!(!dir.path().join("no-such-folder").exists());

    let path = dir.path().join("events.log");
    let options = LogOptions { max_batch: usize::MAX, ..LogOptions::default() };
    let err = EventLog::open(&path, options).map(|_| ()).unwrap_err();
    assert!(matches!(err, LogError::BatchLimit { given: usize::MAX, .. }), "{err:?}");
    assert!(!path.exists(), "a refused open creates nothing");
}

/// A log file removed while its writer holds it open: the append that finds
/// it gone fails instead of landing in a file nobody can read, and the next
/// one starts a new log (a new epoch, so the pump derives everything again).
#[test]
fn a_log_removed_behind_its_writer_is_started_anew_not_written_into_the_void() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event("a", 0)], [("a", 1)]).unwrap();
    let epoch = log.head().epoch;
    fs::remove_file(&path).unwrap();

    let read = log.read_from(0).unwrap_err().to_string();
    assert!(read.contains("removed, replaced or changed while open"), "{read}");
    let err = log.append(&[event("a", 1)], [("a", 2)]).unwrap_err();
    assert!(matches!(err, LogError::Io { op: "append", .. }), "{err}");
    assert!(err.to_string().contains("removed, replaced or changed while open"), "{err}");

    let replaced = log.append(&[event("a", 1)], [("a", 2)]).unwrap_err();
    assert!(matches!(replaced, LogError::Replaced { epoch: new } if new != epoch), "{replaced}");
    log.append(&[event("a", 0), event("a", 1)], [("a", 2)]).unwrap();
    let on_disk = read_log(&path, 0).unwrap();
    assert_ne!(on_disk.epoch, epoch);
    assert_eq!(on_disk.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![1_000, 1_001]);
}

/// The same when another file was put in its place (a restore, an editor's
/// save): the writer does not keep appending to the file it had open.
#[test]
fn a_log_replaced_behind_its_writer_is_not_appended_to() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event("a", 0)], [("a", 1)]).unwrap();
    let copy = path.with_extension("copy");
    fs::copy(&path, &copy).unwrap();
    fs::rename(&copy, &path).unwrap();

    let err = log.append(&[event("a", 1)], [("a", 2)]).unwrap_err();
    assert!(err.to_string().contains("removed, replaced or changed while open"), "{err}");
    // The file now at the path is whole, so the reopen keeps it and its epoch.
    log.append(&[event("a", 1)], [("a", 2)]).unwrap();
    let on_disk = read_log(&path, 0).unwrap();
    assert_eq!(on_disk.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![1_000, 1_001]);
}

/// Appends after `tamper` changed the log behind its writer: the first fails
/// (it notices), the second starts a new log (new epoch, so readers and the
/// pump start over), and the log then holds exactly what was appended since.
fn tampered_log_starts_anew(tamper: impl FnOnce(&std::path::Path, &[u8])) {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event("a", 0)], [("a", 1)]).unwrap();
    let early = fs::read(&path).unwrap();
    log.append(&[event("a", 1), event("a", 2)], [("a", 3)]).unwrap();
    let epoch = log.head().epoch;
    tamper(&path, &early);

    let err = log.append(&[event("a", 3)], [("a", 4)]).unwrap_err();
    assert!(err.to_string().contains("changed while open"), "{err}");
    let replaced = log.append(&[event("a", 3)], [("a", 4)]).unwrap_err();
    assert!(matches!(replaced, LogError::Replaced { epoch: new } if new != epoch), "{replaced}");
    log.append(&[event("a", 9)], [("a", 10)]).unwrap();
    let on_disk = read_log(&path, 0).unwrap();
    assert_ne!(on_disk.epoch, epoch, "readers start over");
    assert_eq!(on_disk.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![1_009]);
    assert_eq!(log.marks().get("a"), Some(&10), "no watermark from the older file");
}

#[test]
fn an_older_copy_renamed_over_the_log_starts_a_new_log() {
    tampered_log_starts_anew(|path, early| {
        let copy = path.with_extension("old");
        fs::write(&copy, early).unwrap();
        fs::rename(&copy, path).unwrap();
    });
}

#[test]
fn an_older_copy_written_over_the_log_in_place_starts_a_new_log() {
    tampered_log_starts_anew(|path, early| fs::write(path, early).unwrap());
}

#[test]
fn a_log_truncated_behind_its_writer_starts_a_new_log() {
    tampered_log_starts_anew(|path, _| {
        fs::OpenOptions::new().write(true).open(path).unwrap().set_len(0).unwrap();
    });
}

/// Compaction of a log an older copy was restored over: refused (the older
/// records under the writer's newer watermarks would lose the events in
/// between for good); the next append starts a new log.
#[test]
fn a_compaction_of_a_log_changed_behind_its_writer_is_refused() {
    for in_place in [false, true] {
        let (_dir, path) = temp_log();
        let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
        log.append(&[event("a", 0), event("a", 1)], [("a", 2)]).unwrap();
        let early = fs::read(&path).unwrap();
        log.append(&[event("a", 2)], [("a", 3)]).unwrap();
        let epoch = log.head().epoch;
        if in_place {
            fs::write(&path, &early).unwrap();
        } else {
            let copy = path.with_extension("old");
            fs::write(&copy, &early).unwrap();
            fs::rename(&copy, &path).unwrap();
        }

        let err = log.compact(|_, at| at.0 == 1_000, [("a", 3u64)]).unwrap_err();
        assert!(err.to_string().contains("changed while open"), "{err}");
        let replaced = log.append(&[event("a", 3)], [("a", 4)]).unwrap_err();
        assert!(matches!(replaced, LogError::Replaced { epoch: new } if new != epoch), "{replaced}");
        assert_ne!(read_log(&path, 0).unwrap().epoch, epoch, "readers start over");
    }
}
