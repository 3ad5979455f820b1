//! Compaction's rewrite of a log's bytes: what is kept, the reservation of
//! the highest number, frames of at most `max_batch`, the watermarks last.

use leasehold_core::pump::frame::{
    BatchEncoder, Corruption, EncodeError, Ending, HEADER_LEN, encode_header, is_reservation,
    summarize,
};
use leasehold_core::pump::rewrite::{RewriteError, rewrite};

/// A log of epoch 9 holding records 0..n (payload: the number as text) in
/// frames of two.
fn log_of(n: u64) -> Vec<u8> {
    let mut bytes = encode_header(9).to_vec();
    for pair in (0..n).collect::<Vec<_>>().chunks(2) {
        let mut batch = BatchEncoder::begin(&mut bytes);
        for seq in pair {
            batch
                .record(*seq, |b| {
                    b.extend_from_slice(seq.to_string().as_bytes());
                    Ok::<(), EncodeError>(())
                })
                .unwrap();
        }
        batch.finish([("a", pair[0] + 1)]).unwrap();
    }
    bytes
}

/// `(seq, payload)` of every record of `bytes`, reservations as empty payloads.
fn records(bytes: &[u8]) -> Vec<(u64, String)> {
    leasehold_core::pump::frame::Frames::new(bytes)
        .flat_map(|f| f.unwrap().1.records().collect::<Vec<_>>())
        .map(|r| (r.seq, String::from_utf8(r.payload.to_vec()).unwrap()))
        .collect()
}

#[test]
fn keeping_every_record_needs_no_rewrite() {
    let log = log_of(5);
    assert_eq!(rewrite(&log, Some(4), 3, &[("a", 5)], |_| true), Ok(None));
}

#[test]
fn dropped_records_go_and_the_rest_keep_their_numbers_epoch_and_the_marks() {
    let log = log_of(6);
    let out = rewrite(&log, Some(5), 2, &[("a", 6), ("b", 2)], |r| r.seq % 2 == 1)
        .unwrap()
        .unwrap();
    assert_eq!((out.dropped, out.kept), (3, 3));
    assert_eq!(
        records(&out.bytes),
        [(1, "1".into()), (3, "3".into()), (5, "5".into())]
    );
    let summary = summarize(&out.bytes).unwrap();
    assert_eq!(summary.epoch, 9);
    assert_eq!(summary.ending, Ending::Clean);
    assert_eq!(summary.marks.get("a"), Some(&6));
    assert_eq!(summary.marks.get("b"), Some(&2));
    // Frames of at most two records: the marks ride on the last one only.
    let frames: Vec<_> = leasehold_core::pump::frame::Frames::new(&out.bytes)
        .map(|f| f.unwrap().1)
        .collect();
    assert_eq!(
        frames.iter().map(|b| b.records().count()).collect::<Vec<_>>(),
        [2, 1]
    );
    assert_eq!(frames[0].marks().count(), 0);
}

#[test]
fn the_highest_number_stays_reserved_when_its_record_goes() {
    let log = log_of(4);
    let out = rewrite(&log, Some(7), 10, &[("a", 4)], |r| r.seq == 0)
        .unwrap()
        .unwrap();
    let kept = records(&out.bytes);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[0], (0, "0".into()));
    assert_eq!(kept[1].0, 7);
    assert!(is_reservation(kept[1].1.as_bytes()));
    // Reservations are neither asked about nor counted.
    assert_eq!((out.dropped, out.kept), (3, 1));
}

#[test]
fn dropping_everything_leaves_a_frame_with_the_marks() {
    let log = log_of(2);
    let out = rewrite(&log, None, 10, &[("a", 2)], |_| false)
        .unwrap()
        .unwrap();
    assert_eq!(records(&out.bytes), []);
    assert!(out.bytes.len() > HEADER_LEN);
    assert_eq!(summarize(&out.bytes).unwrap().marks.get("a"), Some(&2));
}

#[test]
fn a_frame_that_no_longer_checks_is_refused() {
    let mut log = log_of(6);
    let middle = HEADER_LEN + 20;
    log[middle] ^= 0xff;
    let refused = rewrite(&log, Some(5), 10, &[("a", 6)], |_| false);
    assert!(
        matches!(
            refused,
            Err(RewriteError::Corrupt(
                Corruption::Checksum { .. } | Corruption::FrameLength { .. }
            ))
        ),
        "{refused:?}"
    );
}

#[test]
fn a_mark_name_too_long_is_refused() {
    let log = log_of(2);
    let name = "x".repeat(70_000);
    let refused = rewrite(&log, None, 10, &[(name.as_str(), 1)], |_| false);
    assert!(
        matches!(
            refused,
            Err(RewriteError::Encode(EncodeError::NameTooLong { .. }))
        ),
        "{refused:?}"
    );
}
