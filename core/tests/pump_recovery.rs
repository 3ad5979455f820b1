//! What an open does with the file it finds (seed 004 `EventLog.open`; the
//! rules are ours and shared by every host): take it over (a torn tail cut,
//! the epoch kept, sequence numbers skipped ahead), or start a new epoch for a
//! missing, corrupt, or replaced-behind-its-writer file.

use leasehold_core::pump::MAX_CHUNK_SIZE;
use leasehold_core::pump::frame::{BatchEncoder, EncodeError, encode_header};
use leasehold_core::pump::recovery::{NewLog, OpenPlan, TAIL_LEN, Written, new_epoch, plan_open};

fn log(seqs: &[&[u64]]) -> Vec<u8> {
    let mut bytes = encode_header(7).to_vec();
    for (i, frame) in seqs.iter().enumerate() {
        let mut batch = BatchEncoder::begin(&mut bytes);
        for seq in *frame {
            batch
                .record(*seq, |b| {
                    b.extend_from_slice(b"{}");
                    Ok::<(), EncodeError>(())
                })
                .unwrap();
        }
        batch.finish([("a", i as u64 + 1)]).unwrap();
    }
    bytes
}

fn take_over(plan: OpenPlan) -> leasehold_core::pump::recovery::TakeOver {
    match plan {
        OpenPlan::TakeOver(take) => take,
        other => panic!("expected a take-over, got {other:?}"),
    }
}

#[test]
fn no_file_starts_a_new_log() {
    assert_eq!(plan_open(None, None), OpenPlan::Create(NewLog::Missing));
    assert_eq!(NewLog::Missing.aside_suffix(), None);
}

#[test]
fn a_whole_log_is_taken_over_with_the_next_number_skipped_past_any_lost_append() {
    let bytes = log(&[&[0, 1], &[2]]);
    let take = take_over(plan_open(Some(&bytes), None));
    assert_eq!(take.summary.epoch, 7);
    assert_eq!(take.truncate, None);
    assert_eq!(take.next_seq, 3 + MAX_CHUNK_SIZE as u64);
    assert_eq!(take.written, Written::of(7, &bytes));
    let empty = encode_header(7).to_vec();
    assert_eq!(take_over(plan_open(Some(&empty), None)).next_seq, MAX_CHUNK_SIZE as u64, "no record yet: skipped from 0");
}

#[test]
fn a_torn_tail_is_cut_back_and_the_epoch_kept() {
    let whole = log(&[&[0, 1], &[2]]);
    let mut bytes = whole.clone();
    bytes.extend_from_slice(&log(&[&[3]])[20..30]);
    let take = take_over(plan_open(Some(&bytes), None));
    assert_eq!(take.truncate, Some((whole.len() as u64, 10)));
    assert_eq!(take.summary.epoch, 7);
    assert_eq!(take.written, Written::of(7, &whole));
}

#[test]
fn a_damaged_frame_before_the_tail_sets_the_file_aside_as_corrupt() {
    let mut bytes = log(&[&[0, 1], &[2]]);
    bytes[36] ^= 0x40;
    let plan = plan_open(Some(&bytes), None);
    let OpenPlan::Create(why @ NewLog::Corrupt(_)) = plan else { panic!("expected corrupt, got {plan:?}") };
    assert_eq!(why.aside_suffix(), Some(".corrupt-"));
}

#[test]
fn a_writer_reopening_a_file_that_is_not_what_it_wrote_sets_it_aside() {
    let bytes = log(&[&[0, 1], &[2]]);
    let mut known = Written::of(7, &bytes);
    assert!(matches!(plan_open(Some(&bytes), Some(&known)), OpenPlan::TakeOver(_)), "its own log");
    let shorter = log(&[&[0, 1]]);
    assert_eq!(plan_open(Some(&shorter), Some(&known)), OpenPlan::Create(NewLog::Replaced), "truncated");
    known.epoch = 8;
    assert_eq!(plan_open(Some(&bytes), Some(&known)), OpenPlan::Create(NewLog::Replaced), "another epoch");
    assert_eq!(NewLog::Replaced.aside_suffix(), Some(".replaced-"));
}

#[test]
fn written_follows_appends_and_recognises_its_exact_bytes() {
    let one = log(&[&[0]]);
    let two = log(&[&[0], &[1]]);
    let mut written = Written::of(7, &one);
    written.appended(&two[one.len()..]);
    assert_eq!(written, Written::of(7, &two));
    assert!(written.is_exactly(&two));
    assert!(!written.is_exactly(&one));
    let mut longer = two.clone();
    longer.push(0);
    assert!(!written.is_exactly(&longer));
    assert!(
        matches!(plan_open(Some(&longer), Some(&written)), OpenPlan::TakeOver(_)),
        "what it wrote is still there, with more after it: taken over"
    );
    let mut small = Written::of(7, &encode_header(7));
    small.appended(&[1, 2, 3]);
    assert_eq!(small.tail[TAIL_LEN - 3..], [1, 2, 3]);
}

#[test]
fn a_new_epoch_is_never_zero_nor_the_previous_one() {
    assert_eq!(new_epoch(0, None), 1);
    assert_eq!(new_epoch(5, Some(5)), 6);
    assert_eq!(new_epoch(5, Some(4)), 5);
    assert_ne!(new_epoch(u64::MAX, Some(u64::MAX)), u64::MAX);
}
