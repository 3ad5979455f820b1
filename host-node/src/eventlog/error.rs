//! What can go wrong with the event log.

use std::io;
use std::path::PathBuf;

use leasehold_core::pump::frame::{Corruption, EncodeError};

/// An event log operation that failed. Nothing is lost: a failed append left
/// the log as it was (the next append reopens it and truncates what a partial
/// write left), a failed compaction left the old log or the new one whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// A file operation failed.
    #[error("event log {path}: {op} failed: {source}")]
    Io {
        /// What was being done: `read`, `write`, `fsync`, `create`, `rename`, …
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The platform's error.
        #[source]
        source: io::Error,
    },
    /// An append carried more records than one batch may hold (the log's
    /// `max_batch`).
    #[error("event log append of {len} records exceeds the batch limit of {max}")]
    BatchTooLarge {
        /// Records given.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// [`LogOptions::max_batch`](super::LogOptions::max_batch) over the
    /// limit (a count of records): every open skips the next sequence number
    /// ahead by that limit, so no batch may be larger.
    #[error("event log max_batch must be at most {max}, got {given}")]
    BatchLimit {
        /// The value given.
        given: usize,
        /// The limit.
        max: usize,
    },
    /// A record could not be encoded.
    #[error("event log record could not be encoded: {0}")]
    Encode(String),
    /// What the log holds could not be read back (see [`ReadError`];
    /// readers resume by sequence number).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The log was broken and, reopened, had to start anew (corrupt or gone):
    /// what the caller derived for the old log was not appended; derive
    /// everything again.
    #[error("event log replaced by a new log (epoch {epoch}): derive everything again")]
    Replaced {
        /// The new log's epoch.
        epoch: u64,
    },
    /// Another open log, in this process or another, writes this file (it
    /// holds the lock file's exclusive lock): a log has one writer.
    #[error("event log {path} is already open for writing elsewhere (lock {lock} is held): one writer per log")]
    InUse {
        /// The log.
        path: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// The log was closed.
    #[error("event log closed")]
    Closed,
    /// An operation on the log panicked on the blocking pool; the log is
    /// opened again before its next use.
    #[error("event log operation panicked: {0}")]
    Panicked(String),
}

impl From<EncodeError> for LogError {
    fn from(e: EncodeError) -> Self {
        LogError::Encode(e.to_string())
    }
}

impl From<serde_json::Error> for LogError {
    fn from(e: serde_json::Error) -> Self {
        LogError::Encode(e.to_string())
    }
}

/// Reading a log failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// No log at the path.
    #[error("no event log at {0}")]
    Missing(PathBuf),
    /// The file could not be read.
    #[error("event log {path}: read failed: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The platform's error.
        #[source]
        source: io::Error,
    },
    /// The log is corrupt before its tail (its writer will replace it).
    #[error("event log {path} is corrupt: {corruption}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        corruption: Corruption,
    },
    /// A record's payload is not the JSON of an event.
    #[error("event log {path}: record {seq} is not an event: {source}")]
    Record {
        /// The file.
        path: PathBuf,
        /// The record's sequence number.
        seq: u64,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
}

pub(crate) fn io_err<'a>(op: &'static str, path: &'a std::path::Path) -> impl FnOnce(io::Error) -> LogError + 'a {
    move |source| LogError::Io { op, path: path.to_path_buf(), source }
}
