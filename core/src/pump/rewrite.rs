//! Compaction's rewrite of a log's bytes: the same epoch, the records the
//! host keeps, one reservation for the highest number given out, the
//! watermarks on the last frame. Both hosts write what this answers to a
//! temporary file and rename it over the log, so a log compacted from Node
//! and one compacted natively are the same bytes.

use alloc::vec::Vec;
use core::fmt;

use super::frame::{
    BatchEncoder, Corruption, EncodeError, Frames, RecordRef, decode_header, encode_header,
    is_reservation,
};

/// A compacted log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// The whole new file: header and frames.
    pub bytes: Vec<u8>,
    /// Records the rewrite left out (reservations not counted).
    pub dropped: u64,
    /// Records kept (reservations not counted).
    pub kept: u64,
}

/// Why a log's bytes could not be rewritten; the log is left as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RewriteError {
    /// The header or a frame no longer checks: the file changed under its
    /// writer, and nothing should be guessed from it.
    Corrupt(Corruption),
    /// The kept records or the watermarks can not be framed (a source name
    /// over 65,535 bytes).
    Encode(EncodeError),
}

impl fmt::Display for RewriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RewriteError::Corrupt(e) => write!(f, "the log no longer checks: {e}"),
            RewriteError::Encode(e) => write!(f, "{e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RewriteError {}

/// Rewrites `log` (a whole log: header and whole frames, as its writer left
/// it) without the records `keep` answers false for. `keep` is asked once per
/// record, in file order, reservations left out (they all go; one for
/// `highest`, the highest sequence number given out, is added when no kept
/// record holds it, so the next open never numbers at or below a number a
/// reader may have seen). The kept records go in frames of at most
/// `max_batch` records (at least 1); `marks` (source, position) ride on the
/// last frame, or on an empty one when nothing is kept.
///
/// Answers `None` when `keep` keeps every record: the log needs no rewrite.
///
/// # Errors
/// [`RewriteError::Corrupt`] for a header or frame that does not check,
/// [`RewriteError::Encode`] for watermarks that can not be framed.
pub fn rewrite<S: AsRef<str>>(
    log: &[u8],
    highest: Option<u64>,
    max_batch: usize,
    marks: &[(S, u64)],
    mut keep: impl FnMut(RecordRef<'_>) -> bool,
) -> Result<Option<Rewritten>, RewriteError> {
    let epoch = decode_header(log).map_err(|e| RewriteError::Corrupt(Corruption::Header(e)))?;
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    for frame in Frames::new(log) {
        let (_, batch) = frame.map_err(RewriteError::Corrupt)?;
        for record in batch.records().filter(|r| !is_reservation(r.payload)) {
            if keep(record) {
                kept.push(record);
            } else {
                dropped += 1;
            }
        }
    }
    if dropped == 0 {
        return Ok(None);
    }
    let kept_count = kept.len() as u64;
    if let Some(highest) = highest {
        if kept.last().is_none_or(|last| last.seq < highest) {
            kept.push(RecordRef {
                seq: highest,
                payload: &[],
            });
        }
    }
    let marks = || marks.iter().map(|(s, p)| (s.as_ref(), *p));
    let mut out = encode_header(epoch).to_vec();
    let mut chunks = kept.chunks(max_batch.max(1)).peekable();
    if chunks.peek().is_none() {
        BatchEncoder::begin(&mut out)
            .finish(marks())
            .map_err(RewriteError::Encode)?;
    }
    while let Some(chunk) = chunks.next() {
        let mut batch = BatchEncoder::begin(&mut out);
        for record in chunk {
            batch
                .record(record.seq, |b| {
                    b.extend_from_slice(record.payload);
                    Ok::<(), EncodeError>(())
                })
                .map_err(RewriteError::Encode)?;
        }
        // The whole file is renamed into place at once, so the watermarks
        // may ride on any frame: the last one.
        let last = chunks.peek().is_none();
        batch
            .finish(marks().filter(|_| last))
            .map_err(RewriteError::Encode)?;
    }
    Ok(Some(Rewritten {
        bytes: out,
        dropped,
        kept: kept_count,
    }))
}
