//! The event log's framing and the open decision (seed 004 `EventLog.open`:
//! torn tail truncated with the epoch kept, corruption before the tail starts a
//! new epoch).

use leasehold_core::pump::frame::{
    BatchEncoder, Corruption, EncodeError, Ending, FRAME_HEAD_LEN, FRAME_SUM_AT, HEADER_LEN, HeaderError,
    decode_header, encode_header, number_ahead, renumber, summarize,
};

fn frame(out: &mut Vec<u8>, seqs: &[u64], marks: &[(&str, u64)]) {
    let mut batch = BatchEncoder::begin(out);
    for seq in seqs {
        batch
            .record(*seq, |b| {
                b.extend_from_slice(format!("{{\"seq\":{seq}}}").as_bytes());
                Ok::<(), EncodeError>(())
            })
            .unwrap();
    }
    batch.finish(marks.iter().copied()).unwrap();
}

/// A log of three frames; answers the bytes and where each frame starts.
fn three_frames() -> (Vec<u8>, Vec<usize>) {
    let mut bytes = encode_header(42).to_vec();
    let mut starts = Vec::new();
    starts.push(bytes.len());
    frame(&mut bytes, &[0, 1], &[("a", 2)]);
    starts.push(bytes.len());
    frame(&mut bytes, &[2], &[("a", 3), ("b", 1)]);
    starts.push(bytes.len());
    frame(&mut bytes, &[3, 4, 5], &[("b", 4)]);
    (bytes, starts)
}

#[test]
fn a_frame_the_caller_checksums_is_the_same_bytes_once_its_sum_is_written() {
    let mut whole = encode_header(7).to_vec();
    frame(&mut whole, &[0, 1], &[("a", 2)]);
    let mut unsummed = encode_header(7).to_vec();
    let start = unsummed.len();
    let mut batch = BatchEncoder::begin(&mut unsummed);
    for seq in [0u64, 1] {
        batch
            .record(seq, |b| {
                b.extend_from_slice(format!("{{\"seq\":{seq}}}").as_bytes());
                Ok::<(), EncodeError>(())
            })
            .unwrap();
    }
    batch.finish_unsummed([("a", 2u64)]).unwrap();
    assert_eq!(unsummed.len(), whole.len());
    assert_eq!(&unsummed[start + FRAME_SUM_AT..start + FRAME_HEAD_LEN], &[0, 0, 0, 0]);
    // Left unsummed, the frame does not check: a reader takes it for a torn tail.
    let torn = Ending::Torn { valid_len: start as u64, torn_bytes: (unsummed.len() - start) as u64 };
    assert_eq!(summarize(&unsummed).unwrap().ending, torn);
    let sum = crc32fast::hash(&unsummed[start + FRAME_HEAD_LEN..]);
    unsummed[start + FRAME_SUM_AT..start + FRAME_HEAD_LEN].copy_from_slice(&sum.to_le_bytes());
    assert_eq!(unsummed, whole);
}

#[test]
fn header_carries_the_epoch_and_refuses_damage() {
    let header = encode_header(0xDEAD_BEEF_0000_0001);
    assert_eq!(header.len(), HEADER_LEN);
    assert_eq!(decode_header(&header), Ok(0xDEAD_BEEF_0000_0001));
    assert_eq!(decode_header(&header[..10]), Err(HeaderError::Short { len: 10 }));
    let mut bad_magic = header;
    bad_magic[0] ^= 1;
    assert_eq!(decode_header(&bad_magic), Err(HeaderError::Magic));
    let mut bad_epoch = header;
    bad_epoch[9] ^= 1;
    assert_eq!(decode_header(&bad_epoch), Err(HeaderError::Checksum));
}

#[test]
fn summary_reads_records_and_latest_watermarks() {
    let (bytes, _) = three_frames();
    let summary = summarize(&bytes).unwrap();
    assert_eq!(summary.epoch, 42);
    assert_eq!(summary.ending, Ending::Clean);
    assert_eq!(summary.valid_len, bytes.len() as u64);
    assert_eq!(summary.records, 6);
    assert_eq!(summary.last_seq, Some(5));
    let marks: Vec<_> = summary.marks.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(marks, vec![("a", 3), ("b", 4)]);
}

#[test]
fn records_and_marks_round_trip_through_frames() {
    let (bytes, _) = three_frames();
    let mut frames = leasehold_core::pump::frame::Frames::new(&bytes);
    let (_, second) = frames.nth(1).unwrap().unwrap();
    let records: Vec<_> = second.records().map(|r| (r.seq, r.payload.to_vec())).collect();
    assert_eq!(records, vec![(2, b"{\"seq\":2}".to_vec())]);
    assert_eq!(second.marks().collect::<Vec<_>>(), vec![("a", 3), ("b", 1)]);
}

#[test]
fn torn_tail_at_every_byte_of_the_last_frame_keeps_whole_frames() {
    let (bytes, starts) = three_frames();
    let last = starts[2];
    for cut in last + 1..bytes.len() {
        let summary = summarize(&bytes[..cut]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(summary.epoch, 42, "cut at {cut}");
        assert_eq!(
            summary.ending,
            Ending::Torn { valid_len: last as u64, torn_bytes: (cut - last) as u64 },
            "cut at {cut}"
        );
        assert_eq!(summary.records, 3, "cut at {cut}");
        assert_eq!(summary.marks.get("b"), Some(&1), "cut at {cut}: the torn frame's watermark is not applied");
        // What the host keeps reads clean: truncating again changes nothing.
        let again = summarize(&bytes[..last]).unwrap();
        assert_eq!(again.ending, Ending::Clean);
        assert_eq!(again.valid_len, last as u64);
    }
}

#[test]
fn checksum_mismatch_of_the_last_frame_is_a_torn_tail() {
    let (mut bytes, starts) = three_frames();
    let n = bytes.len();
    bytes[n - 1] ^= 0x40;
    let summary = summarize(&bytes).unwrap();
    assert_eq!(summary.ending, Ending::Torn { valid_len: starts[2] as u64, torn_bytes: (n - starts[2]) as u64 });
}

#[test]
fn zero_filled_tail_is_torn_not_corrupt() {
    let (mut bytes, _) = three_frames();
    let whole = bytes.len();
    bytes.extend_from_slice(&[0u8; 4096]);
    let summary = summarize(&bytes).unwrap();
    assert_eq!(summary.ending, Ending::Torn { valid_len: whole as u64, torn_bytes: 4096 });
}

#[test]
fn flipped_byte_anywhere_in_a_middle_frame_is_corruption() {
    let (bytes, starts) = three_frames();
    for at in starts[1]..starts[2] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x01;
        let err = summarize(&damaged).expect_err(&format!("flip at {at} must be refused"));
        let offset = starts[1] as u64;
        match err {
            Corruption::FrameLength { offset: o } | Corruption::Checksum { offset: o } => assert_eq!(o, offset),
            other => panic!("flip at {at}: unexpected {other:?}"),
        }
        if at < starts[1] + 8 {
            assert!(matches!(err, Corruption::FrameLength { .. }), "flip at {at} is in the length");
        } else {
            assert!(matches!(err, Corruption::Checksum { .. }), "flip at {at} is in the checksum or body");
        }
    }
}

#[test]
fn damaged_header_is_corruption() {
    let (mut bytes, _) = three_frames();
    bytes[12] ^= 0xFF;
    assert_eq!(summarize(&bytes), Err(Corruption::Header(HeaderError::Checksum)));
    assert_eq!(summarize(b"LHEV"), Err(Corruption::Header(HeaderError::Short { len: 4 })));
}

#[test]
fn sequence_numbers_that_go_back_are_corruption() {
    let mut bytes = encode_header(1).to_vec();
    frame(&mut bytes, &[5], &[]);
    let second = bytes.len();
    frame(&mut bytes, &[5], &[]);
    frame(&mut bytes, &[6], &[]);
    assert_eq!(summarize(&bytes), Err(Corruption::SeqOrder { offset: second as u64, seq: 5 }));
}

#[test]
fn a_frame_with_only_watermarks_is_whole() {
    let mut bytes = encode_header(9).to_vec();
    frame(&mut bytes, &[], &[("journal", 17)]);
    let summary = summarize(&bytes).unwrap();
    assert_eq!(summary.records, 0);
    assert_eq!(summary.last_seq, None);
    assert_eq!(summary.marks.get("journal"), Some(&17));
    assert_eq!(bytes.len(), HEADER_LEN + FRAME_HEAD_LEN + 4 + 4 + 2 + 7 + 8);
}

#[test]
fn a_failed_payload_rolls_the_frame_back_to_the_record_before() {
    let mut bytes = Vec::new();
    let mut batch = BatchEncoder::begin(&mut bytes);
    batch.record(1, |b| { b.extend_from_slice(b"ok"); Ok::<(), EncodeError>(()) }).unwrap();
    let err = batch.record(2, |b| {
        b.extend_from_slice(b"half");
        Err(EncodeError::FrameTooLong)
    });
    assert_eq!(err, Err(EncodeError::FrameTooLong));
    assert_eq!(batch.len(), 1);
    batch.finish(std::iter::empty::<(&str, u64)>()).unwrap();
    let mut log = encode_header(3).to_vec();
    log.extend_from_slice(&bytes);
    let summary = summarize(&log).unwrap();
    assert_eq!((summary.records, summary.last_seq), (1, Some(1)));
}

#[test]
fn a_source_name_too_long_is_refused_and_leaves_no_bytes() {
    let mut bytes = vec![7u8];
    let batch = BatchEncoder::begin(&mut bytes);
    let name = "x".repeat(70_000);
    let err = batch.finish([(name.as_str(), 1u64)]).unwrap_err();
    assert!(matches!(err, EncodeError::NameTooLong { .. }));
    assert_eq!(bytes, vec![7u8]);
}

/// A frame filled across calls (`resume`) with placeholder numbers, then
/// numbered (`renumber`) and sealed, is the frame written in one go.
#[test]
fn a_frame_filled_in_parts_and_numbered_later_is_the_same_frame() {
    let mut whole = Vec::new();
    frame(&mut whole, &[7, 8, 9], &[("jobs", 3)]);

    let mut parts = Vec::new();
    let mut records = BatchEncoder::begin(&mut parts).len();
    for seq in [7u64, 8, 9] {
        let mut batch = BatchEncoder::resume(&mut parts, 0, records);
        batch
            .record(0, |b| {
                b.extend_from_slice(format!("{{\"seq\":{seq}}}").as_bytes());
                Ok::<(), EncodeError>(())
            })
            .unwrap();
        records = batch.len();
    }
    renumber(&mut parts, 0, records, 7);
    BatchEncoder::resume(&mut parts, 0, records).finish([("jobs", 3u64)]).unwrap();
    assert_eq!(parts, whole);
}

/// Fills a frame with the records of `seqs` under placeholder numbers, as a
/// host serialises a chunk before it knows where the append lands.
fn unnumbered(seqs: &[u64]) -> (Vec<u8>, u32) {
    let mut parts = Vec::new();
    let mut batch = BatchEncoder::begin(&mut parts);
    for seq in seqs {
        batch
            .record(0, |b| {
                b.extend_from_slice(format!("{{\"seq\":{seq}}}").as_bytes());
                Ok::<(), EncodeError>(())
            })
            .unwrap();
    }
    let records = batch.len();
    (parts, records)
}

/// Numbered and checksummed ahead (`number_ahead`), a frame sealed with
/// only its watermarks read is byte for byte the frame written in one go.
#[test]
fn a_frame_numbered_ahead_seals_to_the_same_frame() {
    let mut whole = Vec::new();
    frame(&mut whole, &[7, 8, 9], &[("jobs", 3), ("mail", 12)]);

    let (mut parts, records) = unnumbered(&[7, 8, 9]);
    let sum = number_ahead(&mut parts, 0, records, 7);
    BatchEncoder::resume(&mut parts, 0, records).finish_summed([("jobs", 3u64), ("mail", 12)], Some(sum)).unwrap();
    assert_eq!(parts, whole);
    assert_eq!(summarize(&[&encode_header(1)[..], &parts].concat()).unwrap().records, 3);
}

/// A checksum taken before more records were added covers too little: it
/// is not trusted, and the frame still checks.
#[test]
fn a_sum_taken_before_more_records_is_ignored() {
    let mut whole = Vec::new();
    frame(&mut whole, &[7, 8, 9], &[("jobs", 3)]);

    let (mut parts, records) = unnumbered(&[7, 8]);
    let early = number_ahead(&mut parts, 0, records, 7);
    let mut batch = BatchEncoder::resume(&mut parts, 0, records);
    batch
        .record(9, |b| {
            b.extend_from_slice(b"{\"seq\":9}");
            Ok::<(), EncodeError>(())
        })
        .unwrap();
    batch.finish_summed([("jobs", 3u64)], Some(early)).unwrap();
    assert_eq!(parts, whole);
}

/// Records renumbered from another first number after `number_ahead` (the
/// append landed elsewhere than guessed) are checksummed again in full.
#[test]
fn a_sum_of_records_renumbered_since_is_ignored() {
    let mut whole = Vec::new();
    frame(&mut whole, &[20, 21], &[("jobs", 2)]);

    let (mut parts, records) = unnumbered(&[20, 21]);
    let guessed = number_ahead(&mut parts, 0, records, 5);
    renumber(&mut parts, 0, records, 20);
    BatchEncoder::resume(&mut parts, 0, records).finish_summed([("jobs", 2u64)], Some(guessed)).unwrap();
    assert_eq!(parts, whole);
}
