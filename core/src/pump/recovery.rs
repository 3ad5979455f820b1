//! What a writer does with the bytes it finds when it opens (or reopens) an
//! event log. Every host's log follows these rules, so a log written by one
//! host is recovered the same way by another.
//!
//! - No file: a new log (a new epoch).
//! - A corrupt file ([`summarize`] refuses it): set aside as
//!   `<log>.corrupt-<new epoch>`, a new log starts.
//! - Reopened by a writer after its own failure, a file that does not hold
//!   what that writer knows it wrote ([`Written`]: same epoch, its known
//!   length ending with its known last bytes): set aside as
//!   `<log>.replaced-<new epoch>`, a new log starts. Its watermarks or
//!   sequence numbers may be behind what readers already saw.
//! - Otherwise the writer takes the file over: a torn tail is cut back to the
//!   last whole frame, the epoch stays, and the next sequence number skips
//!   [`MAX_CHUNK_SIZE`] past the last one, so a record a
//!   reader saw before a crash lost it never has its number reused.

use super::frame::{Corruption, Ending, Summary, decode_header, summarize};
use super::state::MAX_CHUNK_SIZE;

/// Bytes of a log's end a writer remembers ([`Written::tail`]). Every log is
/// longer: a header is 20 bytes.
pub const TAIL_LEN: usize = 16;

/// What a writer knows it wrote: the epoch, the length of the whole frames
/// (header included, bytes) and their last [`TAIL_LEN`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// The log's epoch.
    pub epoch: u64,
    /// Bytes written, header included.
    pub len: u64,
    /// The last [`TAIL_LEN`] bytes of those.
    pub tail: [u8; TAIL_LEN],
}

impl Written {
    /// What `bytes` (a whole log of epoch `epoch`, at least [`TAIL_LEN`]
    /// bytes long) say was written.
    pub fn of(epoch: u64, bytes: &[u8]) -> Self {
        let mut tail = [0u8; TAIL_LEN];
        let from = bytes.len().saturating_sub(TAIL_LEN);
        tail[TAIL_LEN - (bytes.len() - from)..].copy_from_slice(&bytes[from..]);
        Written { epoch, len: bytes.len() as u64, tail }
    }

    /// The frame `frame` was appended and synced after what was written.
    pub fn appended(&mut self, frame: &[u8]) {
        if frame.len() >= TAIL_LEN {
            self.tail.copy_from_slice(&frame[frame.len() - TAIL_LEN..]);
        } else {
            self.tail.rotate_left(frame.len());
            self.tail[TAIL_LEN - frame.len()..].copy_from_slice(frame);
        }
        self.len += frame.len() as u64;
    }

    /// Whether `bytes` (read from the log's path, header epoch `epoch`) still
    /// hold what was written, perhaps with more after it.
    pub(crate) fn still_held_by(&self, bytes: &[u8], epoch: u64) -> bool {
        let Ok(len) = usize::try_from(self.len) else { return false };
        epoch == self.epoch && len >= TAIL_LEN && bytes.len() >= len && bytes[len - TAIL_LEN..len] == self.tail
    }

    /// Whether `bytes` are exactly what was written (nothing more).
    pub fn is_exactly(&self, bytes: &[u8]) -> bool {
        bytes.len() as u64 == self.len && decode_header(bytes).is_ok_and(|epoch| self.still_held_by(bytes, epoch))
    }
}

/// The next sequence number after an open that found `last_seq` as the
/// highest: [`MAX_CHUNK_SIZE`] past it, the most records any writer's append
/// may carry, so the numbers of an append a crash lost are never given out
/// again (readers resume by sequence number).
pub(crate) fn start_seq(last_seq: Option<u64>) -> u64 {
    last_seq.map_or(0, |s| s + 1).saturating_add(MAX_CHUNK_SIZE as u64)
}

/// Why a new log starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewLog {
    /// There was no file at the path.
    Missing,
    /// The file is corrupt; it is set aside as `<log>.corrupt-<new epoch>`.
    Corrupt(Corruption),
    /// The file is not what its writer wrote (reopening only); it is set
    /// aside as `<log>.replaced-<new epoch>`.
    Replaced,
}

impl NewLog {
    /// The suffix of the file name the old file is renamed to, before the
    /// new epoch (`.corrupt-` or `.replaced-`); `None` when there is none.
    pub fn aside_suffix(&self) -> Option<&'static str> {
        match self {
            NewLog::Missing => None,
            NewLog::Corrupt(_) => Some(".corrupt-"),
            NewLog::Replaced => Some(".replaced-"),
        }
    }
}

/// What to do with the log found at open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenPlan {
    /// Set the file aside if [`NewLog::aside_suffix`] says so, then write a
    /// new log with a new epoch; every source is derived again.
    Create(NewLog),
    /// Take the file over.
    TakeOver(TakeOver),
}

/// A log taken over at open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TakeOver {
    /// What the log holds (epoch, records, watermarks, how it ends).
    pub summary: Summary,
    /// Cut the file to this many bytes first (a torn tail): the length of
    /// the whole frames, and the torn bytes after them.
    pub truncate: Option<(u64, u64)>,
    /// The sequence number the next record gets: [`MAX_CHUNK_SIZE`] past
    /// the last one found (from 0 in a log without records); numbers from
    /// it on need a reservation before they are given out.
    pub next_seq: u64,
    /// What the writer has written once the tail is cut.
    pub written: Written,
}

/// Decides what an open does with `bytes` (`None`: no file at the path).
/// `reopening` is what the writer knows it wrote when it reopens its own log
/// after a failure; `None` at a first open.
pub fn plan_open(bytes: Option<&[u8]>, reopening: Option<&Written>) -> OpenPlan {
    let Some(bytes) = bytes else { return OpenPlan::Create(NewLog::Missing) };
    let summary = match summarize(bytes) {
        Ok(summary) => summary,
        Err(corruption) => return OpenPlan::Create(NewLog::Corrupt(corruption)),
    };
    if reopening.is_some_and(|known| !known.still_held_by(bytes, summary.epoch)) {
        return OpenPlan::Create(NewLog::Replaced);
    }
    let truncate = match summary.ending {
        Ending::Clean => None,
        Ending::Torn { valid_len, torn_bytes } => Some((valid_len, torn_bytes)),
    };
    let valid = &bytes[..summary.valid_len as usize];
    let written = Written::of(summary.epoch, valid);
    OpenPlan::TakeOver(TakeOver { next_seq: start_seq(summary.last_seq), truncate, written, summary })
}

/// A new epoch from a clock reading `now` (any unit; the hosts use
/// nanoseconds since the Unix epoch): never 0, never `previous`.
pub fn new_epoch(now: u64, previous: Option<u64>) -> u64 {
    let now = now.max(1);
    if Some(now) == previous { now.wrapping_add(1).max(1) } else { now }
}
