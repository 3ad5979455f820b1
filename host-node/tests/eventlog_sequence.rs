//! Sequence numbers are never given out twice in one epoch, so a reader that
//! resumes from `next` never skips an event: not after a crash that lost the
//! first append after an open, not after a compaction that dropped the
//! newest records. Reservations (empty records holding a number) stay
//! invisible to readers.

mod eventlog_support;

use std::fs::{self, OpenOptions};

use leasehold::core::Millis;
use leasehold::eventlog::{EventLog, EventRecord, LogOptions, read_log};
use serde_json::json;

use eventlog_support::temp_log;

fn event(at: u64) -> EventRecord {
    EventRecord { source: "s".to_owned(), at, kind: "step".to_owned(), identity: Default::default(), body: json!(at) }
}

fn open(path: &std::path::Path) -> EventLog {
    EventLog::open(path, LogOptions::default()).unwrap().log
}

/// Cuts the file back to `len` bytes: what a power loss before the fsync of
/// everything after `len` leaves.
fn lose_after(path: &std::path::Path, len: u64) {
    OpenOptions::new().write(true).open(path).unwrap().set_len(len).unwrap();
}

#[test]
fn a_lost_first_append_after_an_open_does_not_get_its_numbers_reused() {
    let (_dir, path) = temp_log();
    let mut first = open(&path);
    first.append(&[event(0), event(1)], [("s", 2)]).unwrap();
    drop(first);
    let before_second = fs::metadata(&path).unwrap().len();

    // The second session appends; a reader sees it and moves on.
    let mut second = open(&path);
    let seen = second.append(&[event(2), event(3)], [("s", 4)]).unwrap();
    let read = read_log(&path, 0).unwrap();
    assert_eq!(read.records.last().unwrap().seq, seen.end - 1);
    drop(second);

    // Power loss: the second session's append is gone; the reservation it
    // made durable before writing it stays.
    let reservation = reservation_frame_len(&path, before_second);
    assert!(fs::metadata(&path).unwrap().len() > before_second + reservation, "a reservation came first");
    lose_after(&path, before_second + reservation);

    let mut third = open(&path);
    let again = third.append(&[event(2), event(3)], [("s", 4)]).unwrap();
    assert!(again.start >= seen.end, "numbers {again:?} reuse ones a reader saw ({seen:?})");
    let resumed = read_log(&path, read.next).unwrap();
    assert_eq!(resumed.epoch, read.epoch);
    assert_eq!(
        resumed.records.iter().map(|r| r.event.at).collect::<Vec<_>>(),
        vec![2, 3],
        "the reader gets them again"
    );
}

/// Bytes of the first frame after `at` (the reservation).
fn reservation_frame_len(path: &std::path::Path, at: u64) -> u64 {
    let bytes = fs::read(path).unwrap();
    let head = &bytes[at as usize..];
    12 + u64::from(u32::from_le_bytes(head[..4].try_into().unwrap()))
}

/// Where the file must be cut to lose the append that followed `at` and
/// keep what was durable before it: past the frame at `at` if that frame is
/// a reservation (one record, empty payload), else at `at`.
fn durable_before_append(path: &std::path::Path, at: u64) -> u64 {
    let bytes = fs::read(path).unwrap();
    let body = &bytes[at as usize + 12..];
    let records = u32::from_le_bytes(body[..4].try_into().unwrap());
    let first_payload = u32::from_le_bytes(body[12..16].try_into().unwrap());
    if records == 1 && first_payload == 0 { at + reservation_frame_len(path, at) } else { at }
}

#[test]
fn a_crash_before_any_append_of_a_session_is_durable_is_covered_by_its_reservation_alone() {
    // Session after session loses its only append: each open must still
    // start past every number handed out before.
    let (_dir, path) = temp_log();
    let mut log = open(&path);
    log.append(&[event(0)], [("s", 1)]).unwrap();
    drop(log);
    let mut highest_seen = 0;
    for round in 0..4u64 {
        let before = fs::metadata(&path).unwrap().len();
        let mut log = open(&path);
        let got = log.append(&[event(round + 1)], [("s", round + 2)]).unwrap();
        assert!(got.start > highest_seen, "round {round}: {got:?} after {highest_seen}");
        highest_seen = got.end - 1;
        drop(log);
        lose_after(&path, durable_before_append(&path, before));
    }
}

#[test]
fn a_compaction_that_drops_the_newest_records_keeps_the_highest_number() {
    let (_dir, path) = temp_log();
    // A log opened before: its numbers are past one start skip, as in a
    // long-lived log, so a start skip alone would not clear them.
    let options = || LogOptions { max_batch: 4, ..LogOptions::default() };
    let mut log = EventLog::open(&path, options()).unwrap().log;
    log.append(&[event(100)], [("s", 0u64)]).unwrap();
    drop(log);
    let mut log = EventLog::open(&path, options()).unwrap().log;
    for at in 0..3u64 {
        log.append(&[event(4 * at), event(4 * at + 1), event(4 * at + 2), event(4 * at + 3)], [("s", 4 * at + 4)])
            .unwrap();
    }
    let highest = log.head().next_seq - 1;
    let reader = read_log(&path, 0).unwrap();
    assert_eq!(log.compact(|_, _| true, [("s", 12u64)]).unwrap(), 13);
    drop(log);

    let mut reopened = EventLog::open(&path, options()).unwrap().log;
    assert_eq!(reopened.head().records, 0, "a reservation is not a record");
    let next = reopened.append(&[event(99)], [("s", 13)]).unwrap();
    assert!(next.start > highest, "{next:?} reuses a number up to {highest}");
    let resumed = read_log(&path, reader.next).unwrap();
    assert_eq!(resumed.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![99]);
}

#[test]
fn reservations_are_invisible_to_readers_and_to_record_counts() {
    let (_dir, path) = temp_log();
    for round in 0..3u64 {
        let mut log = open(&path);
        log.append(&[event(round)], [("s", round + 1)]).unwrap();
    }
    let read = read_log(&path, 0).unwrap();
    assert_eq!(read.records.iter().map(|r| r.event.at).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(read.next, read.records.last().unwrap().seq + 1);
    let log = open(&path);
    assert_eq!(log.head().records, 3);
    // Compaction of nothing leaves them; retention never sees them.
    let mut log = log;
    let mut asked = Vec::new();
    assert_eq!(
        log.compact(
            |source, at| {
                asked.push((source.to_owned(), at));
                false
            },
            [("s", 3u64)]
        )
        .unwrap(),
        0
    );
    assert_eq!(asked, vec![("s".to_owned(), Millis(0)), ("s".to_owned(), Millis(1)), ("s".to_owned(), Millis(2))]);
}

/// Events numbered ahead (`EncodedEvents::number_from`) land with the
/// numbers the append gives them, whether the guess was right or not, and
/// read back intact.
#[test]
fn events_numbered_ahead_land_with_the_appends_numbers_right_guess_or_wrong() {
    use leasehold::eventlog::EncodedEvents;
    let (_dir, path) = temp_log();
    let mut log = open(&path);
    let start = log.head().next_seq;

    let mut right = EncodedEvents::encode(&[event(0), event(1)]).unwrap();
    right.number_from(start);
    assert_eq!(log.append_encoded(right, [("s", 2)]).unwrap(), start..start + 2);

    // Guessed as if the append before had not landed.
    let mut wrong = EncodedEvents::encode(&[event(2), event(3)]).unwrap();
    wrong.number_from(start);
    assert_eq!(log.append_encoded(wrong, [("s", 4)]).unwrap(), start + 2..start + 4);

    // Numbered, then one more event: the numbering is undone.
    let mut grown = EncodedEvents::encode(&[event(4)]).unwrap();
    grown.number_from(start + 4);
    grown.push(&event(5)).unwrap();
    assert_eq!(log.append_encoded(grown, [("s", 6)]).unwrap(), start + 4..start + 6);
    drop(log);

    let read = read_log(&path, 0).unwrap();
    let got: Vec<(u64, u64)> = read.records.iter().map(|r| (r.seq, r.event.at)).collect();
    let want: Vec<(u64, u64)> = (0..6).map(|i| (start + i, i)).collect();
    assert_eq!(got, want);
    // A fresh open checks every frame's checksum: nothing was torn.
    let reopened = EventLog::open(&path, LogOptions::default()).unwrap();
    assert!(!reopened.created && reopened.notice.is_none(), "{:?}", reopened.notice);
    assert_eq!(reopened.log.marks().get("s"), Some(&6));
}
