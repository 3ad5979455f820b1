//! Reading a log: records from a sequence number on, with the epoch, so a
//! reader can resume and can tell when the log was replaced.

use std::fs;
use std::io;
use std::path::Path;

use leasehold_core::pump::frame::{Corruption, Frames, decode_header, is_reservation};

use super::{EventLog, EventRecord, LogError, LoggedEvent, ReadError};

/// What a read found.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRead {
    /// The log's epoch. A reader that last read another epoch starts again
    /// from sequence number 0: the log was replaced.
    pub epoch: u64,
    /// Records with `seq >= from`, in order.
    pub records: Vec<LoggedEvent>,
    /// Where to resume: one past the last record read (or `from`).
    pub next: u64,
}

/// Reads the records of the log at `path` with sequence numbers from `from`
/// on. Read-only: a torn tail (a writer mid-append, or a crash) ends the read
/// at the last whole frame.
///
/// # Errors
/// [`ReadError::Missing`], [`ReadError::Io`], [`ReadError::Corrupt`] (a bad
/// header or damage before the tail), [`ReadError::Record`] for a payload that
/// is not an event.
pub fn read_log(path: &Path, from: u64) -> Result<LogRead, ReadError> {
    read_bytes(path, &read_file(path)?, from)
}

/// [`read_log`] of a log that may be damaged before its tail: the records
/// of the whole frames before the damage, and the damage itself
/// ([`ReadError::Corrupt`] or [`ReadError::Record`]) when there is some.
/// For showing what is still readable (the command-line tool's `events`);
/// the log's writer replaces such a log when it next opens it. Resuming from
/// the answer's `next` reads nothing past the damage until then.
///
/// # Errors
/// [`ReadError::Missing`], [`ReadError::Io`], and [`ReadError::Corrupt`] for
/// a bad header (nothing of the log can be trusted).
pub fn read_log_before_damage(path: &Path, from: u64) -> Result<(LogRead, Option<ReadError>), ReadError> {
    read_frames(path, &read_file(path)?, from, true)
}

/// The whole file at `path`; a missing one is [`ReadError::Missing`].
fn read_file(path: &Path) -> Result<Vec<u8>, ReadError> {
    match fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ReadError::Missing(path.to_path_buf())),
        Err(source) => Err(ReadError::Io { path: path.to_path_buf(), source }),
    }
}

fn read_bytes(path: &Path, bytes: &[u8], from: u64) -> Result<LogRead, ReadError> {
    let (read, damage) = read_frames(path, bytes, from, false)?;
    debug_assert!(damage.is_none(), "a strict read fails instead");
    Ok(read)
}

/// The records from `from` on; at the first damaged frame or unreadable
/// record, stops and answers it beside what came before (`lenient`) or
/// fails with it.
fn read_frames(path: &Path, bytes: &[u8], from: u64, lenient: bool) -> Result<(LogRead, Option<ReadError>), ReadError> {
    let corrupt = |corruption| ReadError::Corrupt { path: path.to_path_buf(), corruption };
    let epoch = decode_header(bytes).map_err(|e| corrupt(Corruption::Header(e)))?;
    let mut records = Vec::new();
    let mut next = from;
    let damage = 'frames: {
        for frame in Frames::new(bytes) {
            let batch = match frame {
                Ok((_, batch)) => batch,
                Err(corruption) => break 'frames Some(corrupt(corruption)),
            };
            // A frame's records are kept only when all of them read.
            let (mut kept, mut end) = (Vec::new(), next);
            for record in batch.records().filter(|r| r.seq >= from) {
                end = record.seq + 1;
                if is_reservation(record.payload) {
                    continue;
                }
                match serde_json::from_slice::<EventRecord>(record.payload) {
                    Ok(event) => kept.push(LoggedEvent { epoch, seq: record.seq, event }),
                    Err(source) => {
                        break 'frames Some(ReadError::Record { path: path.to_path_buf(), seq: record.seq, source });
                    }
                }
            }
            records.extend(kept);
            next = end;
        }
        None
    };
    match damage {
        Some(e) if !lenient => Err(e),
        damage => Ok((LogRead { epoch, records, next }, damage)),
    }
}

impl EventLog {
    /// Reads this log's records from `from` on (through its storage).
    ///
    /// # Errors
    /// [`LogError::Io`] when the file can not be read; [`LogError::Read`]
    /// when what it holds no longer reads (corrupt, or a record that is not
    /// an event).
    pub fn read_from(&self, from: u64) -> Result<LogRead, LogError> {
        let bytes = self
            .storage
            .read(&self.path)
            .map_err(super::error::io_err("read", &self.path))?
            .ok_or_else(|| LogError::Io { op: "read", path: self.path.clone(), source: super::gone() })?;
        let valid = bytes.get(..self.len as usize).unwrap_or(&bytes);
        read_bytes(&self.path, valid, from).map_err(LogError::from)
    }
}
