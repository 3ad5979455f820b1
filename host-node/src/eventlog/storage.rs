//! The file operations the event log uses, behind a trait so tests can inject
//! failures at any one of them (a failing write, a failing fsync, a rename
//! that happens and a directory sync that then fails).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// An open log file: appends at its end, data sync, truncation.
pub trait LogFile: Send {
    /// Writes all of `bytes` at the end of the file, in one `write` where the
    /// platform allows.
    ///
    /// # Errors
    /// The platform's error; part of `bytes` may have landed.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;

    /// Makes what was written durable (`fdatasync`: data and the file size).
    ///
    /// # Errors
    /// The platform's error; what was written may or may not be durable.
    fn sync(&mut self) -> io::Result<()>;

    /// Cuts the file to `len` bytes.
    ///
    /// # Errors
    /// The platform's error.
    fn truncate(&mut self, len: u64) -> io::Result<()>;

    /// Takes an exclusive lock on the file itself (its inode), without
    /// waiting: `false` when someone else holds it. The log's writer holds it
    /// besides the lock file, so a second writer that reaches the same file
    /// by another name (a symbolic or hard link) is refused too. The default takes none (a storage without
    /// files).
    ///
    /// # Errors
    /// The platform's error.
    fn try_lock(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    /// Whether `path` still names this file and the file is `len` bytes
    /// long, as its writer left it. Someone may remove, replace, truncate or
    /// copy over the log while its writer holds it open; appends would then
    /// go to a file nobody reads, or land after bytes that are not the log.
    /// `len` is
    /// in bytes. The default says yes (a storage without files).
    ///
    /// # Errors
    /// The platform's error other than "not found" (which answers `false`).
    fn is_intact(&self, path: &Path, len: u64) -> io::Result<bool> {
        let _ = (path, len);
        Ok(true)
    }
}

/// The directory-level operations of the event log.
pub trait LogStorage: Send + Sync + 'static {
    /// The whole file, or `None` when it does not exist.
    ///
    /// # Errors
    /// Any error other than "not found".
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;

    /// Opens an existing file for appends.
    ///
    /// # Errors
    /// The platform's error (including "not found").
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>>;

    /// Creates a file (truncating one that exists) for appends.
    ///
    /// # Errors
    /// The platform's error.
    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>>;

    /// Renames `from` over `to` (atomic on POSIX file systems).
    ///
    /// # Errors
    /// The platform's error; the rename did not happen.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes a file; a file that does not exist is not an error.
    ///
    /// # Errors
    /// The platform's error.
    fn remove(&self, path: &Path) -> io::Result<()>;

    /// Makes the directory's entries durable (after a create or rename).
    ///
    /// # Errors
    /// The platform's error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// The real file system (`std::fs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct StdStorage;

struct StdFile(File);

impl LogFile for StdFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn try_lock(&mut self) -> io::Result<bool> {
        super::lock::try_lock(&self.0)
    }

    #[cfg(unix)]
    fn is_intact(&self, path: &Path, len: u64) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let open = self.0.metadata()?;
        if open.len() != len {
            return Ok(false);
        }
        match fs::metadata(path) {
            Ok(named) => Ok((named.dev(), named.ino()) == (open.dev(), open.ino())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl LogStorage for StdStorage {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        // O_APPEND: every write lands at the end, also after a truncation.
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Box::new(StdFile(file)))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let file = OpenOptions::new().create(true).truncate(true).write(true).open(path)?;
        drop(file);
        self.open_append(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}
