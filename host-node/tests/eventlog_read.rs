//! Reading the event log: records from a sequence number on, in order, with
//! the epoch, so a reader can resume and can tell when the log was replaced.

mod eventlog_support;

use std::fs;

use leasehold::eventlog::{EventLog, EventRecord, LogOptions, ReadError, read_log, read_log_before_damage};
use serde_json::json;

use eventlog_support::temp_log;

fn event(n: u64) -> EventRecord {
    EventRecord {
        source: "s".to_owned(),
        at: n,
        kind: "step".to_owned(),
        identity: [("request".to_owned(), json!("r-1"))].into_iter().collect(),
        body: json!({ "n": n }),
    }
}

#[test]
fn a_reader_resumes_from_the_sequence_number_after_the_last_it_read() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event(0), event(1), event(2)], [("s", 3)]).unwrap();
    let first = read_log(&path, 0).unwrap();
    assert_eq!(first.records.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(first.records[1].event, event(1));
    assert!(first.records.iter().all(|r| r.epoch == first.epoch));

    log.append(&[event(3)], [("s", 4)]).unwrap();
    let next = read_log(&path, first.next).unwrap();
    assert_eq!(next.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![3]);
    assert_eq!(next.epoch, first.epoch);
    let nothing = read_log(&path, next.next).unwrap();
    assert!(nothing.records.is_empty());
    assert_eq!(nothing.next, next.next);
}

#[test]
fn a_reader_sees_the_epoch_change_when_the_log_is_replaced() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event(0)], [("s", 1)]).unwrap();
    log.append(&[event(1)], [("s", 2)]).unwrap();
    let before = read_log(&path, 0).unwrap();
    drop(log);
    let mut bytes = fs::read(&path).unwrap();
    bytes[30] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event(7)], [("s", 1)]).unwrap();
    let after = read_log(&path, before.next).unwrap();
    assert_ne!(after.epoch, before.epoch, "the reader can tell");
    assert!(after.records.is_empty(), "seq {} is not reached in the new log", before.next);
    assert_eq!(read_log(&path, 0).unwrap().records[0].event.at, 7);
}

#[test]
fn the_serialized_record_is_the_documented_json() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event(5)], [("s", 1)]).unwrap();
    let json = serde_json::to_value(&read_log(&path, 0).unwrap().records[0].event).unwrap();
    assert_eq!(json, json!({"source": "s", "at": 5, "type": "step", "identity": {"request": "r-1"}, "body": {"n": 5}}));
    let bare: EventRecord = serde_json::from_value(json!({"source": "s", "at": 1, "type": "x", "extra": true})).unwrap();
    assert!(bare.identity.is_empty() && bare.body.is_null(), "unknown fields are ignored, missing ones default");
}

#[test]
fn a_reader_stops_at_a_torn_tail_and_refuses_damage() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    log.append(&[event(0)], [("s", 1)]).unwrap();
    let whole = log.head().len as usize;
    log.append(&[event(1)], [("s", 2)]).unwrap();
    drop(log);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..whole + 7]).unwrap();
    assert_eq!(read_log(&path, 0).unwrap().records.len(), 1, "a writer mid-append is not an error");
    let mut damaged = bytes.clone();
    damaged[whole - 3] ^= 1;
    fs::write(&path, &damaged).unwrap();
    assert!(matches!(read_log(&path, 0), Err(ReadError::Corrupt { .. })));
    assert!(matches!(read_log(&path.with_extension("none"), 0), Err(ReadError::Missing(_))));
}

#[test]
fn an_event_nested_too_deep_to_read_back_is_refused_and_the_log_stays_readable() {
    use leasehold::eventlog::{LogError, MAX_VALUE_DEPTH};
    let nested = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!([inner]));
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    let deepest = EventRecord { body: nested(MAX_VALUE_DEPTH), ..event(0) };
    log.append(std::slice::from_ref(&deepest), [("s", 1)]).unwrap();
    let too_deep = EventRecord { body: nested(MAX_VALUE_DEPTH + 1), ..event(1) };
    let err = log.append(&[event(1), too_deep], [("s", 2)]).unwrap_err();
    assert!(matches!(&err, LogError::Encode(m) if m.contains("nested deeper")), "{err:?}");
    let in_identity =
        EventRecord { identity: [("k".to_owned(), nested(MAX_VALUE_DEPTH + 1))].into_iter().collect(), ..event(1) };
    assert!(log.append(&[in_identity], [("s", 2)]).is_err());
    let read = read_log(&path, 0).unwrap();
    assert_eq!(read.records.iter().map(|r| r.event.clone()).collect::<Vec<_>>(), vec![deepest]);
}

/// Three appends, the middle one's body damaged: a strict read fails, a
/// read before the damage answers the first append's records and the damage.
#[test]
fn a_read_before_the_damage_answers_the_whole_frames_before_it() {
    let (_dir, path) = temp_log();
    let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
    let mut second_frame = 0;
    for n in 0..3u64 {
        log.append(&[event(2 * n), event(2 * n + 1)], [("s", 2 * n + 2)]).unwrap();
        if n == 0 {
            second_frame = log.head().len as usize;
        }
    }
    drop(log);
    let whole = read_log_before_damage(&path, 0).unwrap();
    assert!(whole.1.is_none());
    assert_eq!(whole.0, read_log(&path, 0).unwrap(), "an undamaged log reads the same either way");

    let mut bytes = fs::read(&path).unwrap();
    bytes[second_frame + 12 + 8] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(read_log(&path, 0), Err(ReadError::Corrupt { .. })));
    let (read, damage) = read_log_before_damage(&path, 0).unwrap();
    assert!(matches!(damage, Some(ReadError::Corrupt { .. })), "{damage:?}");
    assert_eq!(read.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![event(0).at, event(1).at]);
    assert_eq!(read.next, read.records.last().unwrap().seq + 1);
    // Resuming past what was read finds nothing more before the damage.
    let (again, _) = read_log_before_damage(&path, read.next).unwrap();
    assert!(again.records.is_empty());

    bytes[3] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(read_log_before_damage(&path, 0), Err(ReadError::Corrupt { .. })), "a bad header: nothing");
}
