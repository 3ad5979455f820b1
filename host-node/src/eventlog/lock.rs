//! One writer per log: an open [`EventLog`](super::EventLog) holds an
//! exclusive `flock` on `<log>.lock` until it is closed or dropped.
//!
//! Two writers on one file would each truncate what they take for a torn
//! tail, reuse each other's sequence numbers and rename compactions over
//! each other's appends: events lost with no error. The lock lives in a file
//! of its own because the log itself is replaced by renames (a new log, a
//! compaction), which a lock on the log's inode would not survive. The
//! kernel drops it when the process dies, even by SIGKILL, so a crash never
//! leaves a log locked. Readers ([`read_log`](super::read_log)) take no lock.
//!
//! The writer also locks the log file itself (its inode, through
//! [`LogFile::try_lock`](super::LogFile::try_lock)) each time it opens it, so
//! a second writer that names the same file differently (a symbolic or hard
//! link: another lock file) is refused as well.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use super::{LogError, sibling};

/// The held lock; released when dropped.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the writer's lock of the log at `log`, without waiting.
    ///
    /// # Errors
    /// [`LogError::InUse`] when another open log (in this process or
    /// another) holds it; [`LogError::Io`] when the lock file can not be
    /// opened.
    pub(crate) fn acquire(log: &Path) -> Result<WriterLock, LogError> {
        let path = sibling(log, ".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| LogError::Io { op: "open lock file", path: path.clone(), source })?;
        match try_lock(&file) {
            Ok(true) => Ok(WriterLock { _file: file }),
            Ok(false) => Err(LogError::InUse { path: log.to_path_buf(), lock: path }),
            Err(source) => Err(LogError::Io { op: "lock", path, source }),
        }
    }
}

/// Whether the exclusive lock was taken (`false`: someone holds it).
#[cfg(unix)]
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Elsewhere no lock is taken (the project's hosts are Unix).
#[cfg(not(unix))]
pub(crate) fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}
