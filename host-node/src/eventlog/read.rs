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
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing(path.to_path_buf())),
        Err(source) => return Err(ReadError::Io { path: path.to_path_buf(), source }),
    };
    read_bytes(path, &bytes, from)
}

fn read_bytes(path: &Path, bytes: &[u8], from: u64) -> Result<LogRead, ReadError> {
    let corrupt = |corruption| ReadError::Corrupt { path: path.to_path_buf(), corruption };
    let epoch = decode_header(bytes).map_err(|e| corrupt(Corruption::Header(e)))?;
    let mut records = Vec::new();
    let mut next = from;
    for frame in Frames::new(bytes) {
        let (_, batch) = frame.map_err(corrupt)?;
        for record in batch.records().filter(|r| r.seq >= from) {
            if is_reservation(record.payload) {
                next = record.seq + 1;
                continue;
            }
            let event: EventRecord = serde_json::from_slice(record.payload)
                .map_err(|source| ReadError::Record { path: path.to_path_buf(), seq: record.seq, source })?;
            next = record.seq + 1;
            records.push(LoggedEvent { epoch, seq: record.seq, event });
        }
    }
    Ok(LogRead { epoch, records, next })
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
