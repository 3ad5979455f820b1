//! The durable event log: a file of checksummed batches.
//!
//! - **Framing** ([`leasehold_core::pump::frame`]): a header with the log's
//!   epoch, then one frame per append holding its records (JSON
//!   [`EventRecord`]s with sequence numbers) *and* the source watermarks they
//!   complete. An append is one `write` and one `fdatasync`, so a crash leaves
//!   both or neither.
//! - **Open** ([`EventLog::open`]): a torn tail (a frame a crash cut short) is
//!   truncated back to the last whole frame and the epoch stays; opening again
//!   changes nothing. A checksum mismatch before the tail, a bad header or a
//!   missing file starts a new log with a new epoch (a damaged file is kept
//!   beside it as `<log>.corrupt-<new epoch>`; one found changed behind its
//!   writer, as `<log>.replaced-<new epoch>`), says so once (`tracing::warn!` and
//!   stderr), and reports [`Opened::created`] so the pump derives everything
//!   again. Nothing is skipped silently.
//! - **Start skip**: an open moves the next sequence number past the last one
//!   by [`MAX_CHUNK_SIZE`], the most records any writer's append may carry
//!   (whatever `max_batch` the writer before had), so a reader that saw a
//!   batch a crash then lost never sees its sequence numbers reused. The
//!   first append after such an open first makes a *reservation* durable (an empty record holding the number
//!   before its start, one small frame and fsync): had that append been lost
//!   too, the next open would otherwise compute the same start again.
//!   Compaction keeps the highest number given out the same way.
//! - **Compaction** ([`EventLog::compact`]): kept records and the current
//!   watermarks go to `<log>.compact`, which is synced, renamed over the log,
//!   and the directory synced. A failure before the rename leaves the log as
//!   it was; a failure after it marks the log broken and the next append
//!   reopens it.
//! - **Reading** ([`read_log`], [`EventLog::read_from`]): records from a
//!   sequence number on, in order, with the epoch.
//! - **One writer**: an open log holds an exclusive lock on `<log>.lock`; a
//!   second open answers [`LogError::InUse`] (see `lock.rs` for why).

mod compact;
mod encoded;
mod error;
mod lock;
mod read;
pub(crate) mod record;
mod storage;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use leasehold_core::pump::frame::{BatchEncoder, HEADER_LEN, encode_header};
use leasehold_core::pump::recovery::{self, NewLog, OpenPlan, TAIL_LEN, Written, plan_open};
use leasehold_core::pump::{DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE};

pub use encoded::EncodedEvents;
pub use error::{LogError, ReadError};
pub use read::{LogRead, read_log, read_log_before_damage};
pub use record::{EventRecord, LoggedEvent, MAX_VALUE_DEPTH};
pub use storage::{LogFile, LogStorage, StdStorage};

use error::io_err;
use lock::WriterLock;

/// How to open a log.
#[derive(Clone)]
pub struct LogOptions {
    /// The file operations ([`StdStorage`] by default; tests inject faults).
    pub storage: Arc<dyn LogStorage>,
    /// The most records one append may carry ([`DEFAULT_CHUNK_SIZE`]). 1 to
    /// [`MAX_CHUNK_SIZE`]: a larger value is refused at open
    /// ([`LogError::BatchLimit`]), 0 is taken as 1.
    pub max_batch: usize,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions { storage: Arc::new(StdStorage), max_batch: DEFAULT_CHUNK_SIZE }
    }
}

impl std::fmt::Debug for LogOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogOptions").field("max_batch", &self.max_batch).finish_non_exhaustive()
    }
}

/// What [`EventLog::open`] found.
pub struct Opened {
    /// The open log.
    pub log: EventLog,
    /// The log is new: the file was missing, or corrupt and replaced. Every
    /// source must be derived again (backfill).
    pub created: bool,
    /// What was said about it (once, on `tracing` and stderr): a new log and
    /// why, or a torn tail truncated.
    pub notice: Option<String>,
}

/// Where a log stands: its epoch, the next sequence number, what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogHead {
    /// The log's epoch (distinct per new log).
    pub epoch: u64,
    /// The sequence number the next record gets.
    pub next_seq: u64,
    /// Records in the log.
    pub records: u64,
    /// Records compaction dropped since the log was opened.
    pub dropped: u64,
    /// Bytes of whole frames, header included.
    pub len: u64,
}

/// An open event log. Not shared: one owner appends (the pump's task).
pub struct EventLog {
    storage: Arc<dyn LogStorage>,
    path: PathBuf,
    max_batch: usize,
    file: Option<Box<dyn LogFile>>,
    epoch: u64,
    next_seq: u64,
    len: u64,
    records: u64,
    dropped: u64,
    marks: BTreeMap<String, u64>,
    broken: bool,
    /// Whether the numbers from `next_seq` on are safe to give out: false
    /// after an open skipped ahead, until a reservation is durable.
    reserved: bool,
    /// Held from open to close: one writer per log.
    lock: Option<WriterLock>,
    /// The last [`TAIL_LEN`] bytes of the log as this writer knows it (up to
    /// `len`): a reopen after this writer's own failure checks that the file
    /// at the path still ends its known part with them, or it is not the log
    /// this writer wrote (see [`EventLog::recover`]).
    tail: [u8; TAIL_LEN],
}

/// The last [`TAIL_LEN`] bytes of `bytes` (at least that long).
fn tail_of(bytes: &[u8]) -> [u8; TAIL_LEN] {
    let mut tail = [0u8; TAIL_LEN];
    tail.copy_from_slice(&bytes[bytes.len() - TAIL_LEN..]);
    tail
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog")
            .field("path", &self.path)
            .field("head", &self.head())
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

/// `path` with `suffix` appended to its file name.
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The directory holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// A fresh epoch: the wall clock in nanoseconds, never `previous`.
fn new_epoch(previous: Option<u64>) -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    recovery::new_epoch(now, previous)
}

/// Locks the open log file itself (see `lock.rs`).
///
/// # Errors
/// [`LogError::InUse`] when another writer holds it, [`LogError::Io`] when
/// the lock can not be taken.
pub(crate) fn lock_file(file: &mut dyn LogFile, path: &Path) -> Result<(), LogError> {
    match file.try_lock() {
        Ok(true) => Ok(()),
        Ok(false) => Err(LogError::InUse { path: path.to_path_buf(), lock: path.to_path_buf() }),
        Err(source) => Err(LogError::Io { op: "lock", path: path.to_path_buf(), source }),
    }
}

/// Says something about the log once: on `tracing` and on stderr.
fn announce(text: &str) {
    tracing::warn!(target: "leasehold::eventlog", "{text}");
    // Not `eprintln!`, which panics when stderr is a pipe whose reader went away.
    let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("leasehold: {text}\n"));
}

impl EventLog {
    /// Opens the log at `path`, recovering or creating it (see the module
    /// docs). A leftover `<log>.compact` from an interrupted compaction is
    /// removed first. The open log holds an exclusive lock on `<log>.lock`
    /// until it is closed or dropped.
    ///
    /// # Errors
    /// [`LogError::InUse`] when another open log writes this file (nothing
    /// is touched); [`LogError::BatchLimit`] for a `max_batch` over
    /// [`MAX_CHUNK_SIZE`]; [`LogError::Io`] when a file operation fails (the log
    /// stays as it was).
    pub fn open(path: impl Into<PathBuf>, options: LogOptions) -> Result<Opened, LogError> {
        let path = path.into();
        if path.as_os_str().is_empty() {
            return Err(LogError::Io {
                op: "open",
                path,
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "the event log path is empty"),
            });
        }
        let folder = parent_dir(&path);
        if !folder.is_dir() {
            return Err(LogError::Io {
                op: "open folder",
                path: folder.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such folder"),
            });
        }
        if options.max_batch > MAX_CHUNK_SIZE {
            return Err(LogError::BatchLimit { given: options.max_batch, max: MAX_CHUNK_SIZE });
        }
        let lock = WriterLock::acquire(&path)?;
        let mut log = EventLog {
            storage: options.storage,
            path,
            max_batch: options.max_batch.max(1),
            file: None,
            epoch: 0,
            next_seq: 0,
            len: 0,
            records: 0,
            dropped: 0,
            marks: BTreeMap::new(),
            broken: true,
            reserved: false,
            lock: Some(lock),
            tail: [0; TAIL_LEN],
        };
        let (created, notice) = log.recover(None)?;
        Ok(Opened { log, created, notice })
    }

    /// Reads the file and takes it over: truncates a torn tail, or replaces a
    /// corrupt or missing log with a new one. Answers whether the log was
    /// created and what was announced.
    fn recover(&mut self, previous: Option<u64>) -> Result<(bool, Option<String>), LogError> {
        let storage = Arc::clone(&self.storage);
        let path = self.path.clone();
        self.file = None;
        self.broken = true;
        storage.remove(&sibling(&path, ".compact")).map_err(io_err("remove stale compaction file", &path))?;
        let bytes = storage.read(&path).map_err(io_err("read", &path))?;
        // A log created where none was, at open, is the first run's normal
        // case: said in the notice, not on stderr. A log that vanished while
        // it was written, or was corrupt, is announced.
        let first_creation = bytes.is_none() && previous.is_none();
        let epoch = new_epoch(previous.or((self.epoch != 0).then_some(self.epoch)));
        // Reopened after this writer's own failure, a file that does not hold
        // what this writer knows it wrote (an older copy restored, another
        // file put there or copied over it) is not its log: the core's
        // `plan_open` says so, and which file to keep aside.
        let known = previous.map(|_| self.written());
        let why = match plan_open(bytes.as_deref(), known.as_ref()) {
            OpenPlan::TakeOver(take) => {
                let mut file = storage.open_append(&path).map_err(io_err("open", &path))?;
                lock_file(&mut *file, &path)?;
                let mut notice = None;
                if let Some((valid_len, torn_bytes)) = take.truncate {
                    file.truncate(valid_len).map_err(io_err("truncate torn tail", &path))?;
                    file.sync().map_err(io_err("fsync", &path))?;
                    let text = if previous.is_some() {
                        // Reopened after this writer's own append failed:
                        // what landed of it goes, said in the notice only
                        // (the failure itself was reported once).
                        format!(
                            "event log {}: {torn_bytes} bytes of a failed append truncated at byte {valid_len}",
                            path.display()
                        )
                    } else {
                        let text = format!(
                            "event log {}: torn tail of {torn_bytes} bytes truncated at byte {valid_len} (epoch {} kept)",
                            path.display(),
                            take.summary.epoch
                        );
                        announce(&text);
                        text
                    };
                    notice = Some(text);
                }
                self.epoch = take.summary.epoch;
                self.next_seq = take.next_seq;
                self.len = take.written.len;
                self.tail = take.written.tail;
                self.records = take.summary.records;
                self.marks = take.summary.marks;
                self.file = Some(file);
                self.broken = false;
                self.reserved = false;
                return Ok((false, notice));
            }
            OpenPlan::Create(why) => why,
        };
        let reason = match (&why, why.aside_suffix()) {
            (NewLog::Corrupt(corruption), Some(suffix)) => {
                // Named after the new epoch: a later corruption never
                // overwrites an earlier kept copy.
                let kept = sibling(&path, &format!("{suffix}{epoch}"));
                storage.rename(&path, &kept).map_err(io_err("rename corrupt log aside", &path))?;
                format!("event log {} is corrupt ({corruption}; kept as {})", path.display(), kept.display())
            }
            (_, Some(suffix)) => {
                let kept = sibling(&path, &format!("{suffix}{epoch}"));
                storage.rename(&path, &kept).map_err(io_err("rename replaced log aside", &path))?;
                format!("event log {} changed behind its writer (kept as {})", path.display(), kept.display())
            }
            (_, None) => format!("no event log at {}", path.display()),
        };
        self.create(epoch)?;
        let text = format!("{reason}: a new event log (epoch {epoch}) starts and every source is derived again");
        if !first_creation {
            announce(&text);
        }
        Ok((true, Some(text)))
    }

    /// What this writer knows it wrote (for the core's open decisions).
    fn written(&self) -> Written {
        Written { epoch: self.epoch, len: self.len, tail: self.tail }
    }

    /// Checks that the file at the log's path is still this log as its last
    /// append left it (the same file, the same size), so a caller told its
    /// events are durable can rely on it. A file removed, replaced, truncated
    /// or copied over since is reopened as the next append would: kept if it
    /// still holds what this writer wrote, else kept aside and a new log
    /// started. Costs two `stat` calls when nothing changed.
    ///
    /// # Errors
    /// [`LogError::Replaced`] when a new log started (every source must be
    /// derived again); [`LogError::Io`] when reopening failed (the log stays
    /// broken); [`LogError::Closed`] after [`EventLog::close`].
    pub fn verify(&mut self) -> Result<(), LogError> {
        if !self.broken {
            if self.file.is_none() {
                return Err(LogError::Closed);
            }
            if self.file_unchanged() {
                return Ok(());
            }
            self.broken = true;
        }
        self.writable()
    }

    /// Whether the open file is still named by the log's path and still the
    /// size this writer left it ([`LogFile::is_intact`]); an error reads as no.
    fn file_unchanged(&self) -> bool {
        self.file.as_ref().is_some_and(|file| file.is_intact(&self.path, self.len).unwrap_or(false))
    }

    /// Whether `bytes`, just read from the log's path, are exactly what this
    /// writer wrote, and the path still names its open file.
    fn is_intact(&self, bytes: &[u8]) -> bool {
        (self.file.is_none() || self.file_unchanged())
            && self.written().is_exactly(bytes)
    }

    /// Writes a new, empty log with `epoch` through `<log>.new` and a rename.
    fn create(&mut self, epoch: u64) -> Result<(), LogError> {
        let storage = Arc::clone(&self.storage);
        let path = self.path.clone();
        let temp = sibling(&path, ".new");
        let mut file = storage.create(&temp).map_err(io_err("create", &temp))?;
        let header = encode_header(epoch);
        file.append(&header).map_err(io_err("write", &temp))?;
        file.sync().map_err(io_err("fsync", &temp))?;
        drop(file);
        storage.rename(&temp, &path).map_err(io_err("rename", &temp))?;
        storage.sync_dir(parent_dir(&path)).map_err(io_err("fsync directory", &path))?;
        let mut file = storage.open_append(&path).map_err(io_err("open", &path))?;
        lock_file(&mut *file, &path)?;
        self.file = Some(file);
        self.epoch = epoch;
        self.next_seq = 0;
        self.len = HEADER_LEN as u64;
        self.tail = tail_of(&header);
        self.records = 0;
        self.marks.clear();
        self.broken = false;
        // A new epoch: a reader that saw numbers a crash then lost starts
        // over from 0, and the next open skips past them.
        self.reserved = true;
        Ok(())
    }

    /// Makes a reservation of `next_seq - 1` durable (see the module docs):
    /// one frame with one empty record, and an fsync.
    fn reserve(&mut self) -> Result<(), LogError> {
        let Some(seq) = self.next_seq.checked_sub(1) else {
            self.reserved = true;
            return Ok(());
        };
        let mut bytes = Vec::with_capacity(64);
        let mut frame = BatchEncoder::begin(&mut bytes);
        frame.record(seq, |_| Ok::<(), LogError>(()))?;
        frame.finish(std::iter::empty::<(&str, u64)>())?;
        self.write_frame(&bytes)?;
        self.reserved = true;
        Ok(())
    }

    /// Writes one sealed frame at the end of the log and syncs it. A failed
    /// write or fsync marks the log broken (the next append reopens it), and
    /// so does finding, after the fsync, that the log's path no longer names
    /// the file written or that the file is not the size written: the log
    /// was removed, replaced, truncated or copied over behind its writer's
    /// back, and the reopen keeps the file only if it still holds what this
    /// writer wrote, or starts a new log ([`LogError::Replaced`]).
    fn write_frame(&mut self, frame: &[u8]) -> Result<(), LogError> {
        let Some(file) = self.file.as_mut() else {
            return Err(LogError::Closed);
        };
        let written = file
            .append(frame)
            .map_err(|e| ("write", e))
            .and_then(|()| file.sync().map_err(|e| ("fsync", e)))
            // Checked after the fsync, so a removal at any time before it is
            // seen: the reopen then starts a new log and the pump derives
            // everything into it again.
            .and_then(|()| match file.is_intact(&self.path, self.len + frame.len() as u64) {
                Ok(true) => Ok(()),
                Ok(false) => Err(("append", gone())),
                Err(e) => Err(("stat", e)),
            });
        if let Err((op, source)) = written {
            self.broken = true;
            return Err(LogError::Io { op, path: self.path.clone(), source });
        }
        self.len += frame.len() as u64;
        self.tail = tail_of(frame);
        Ok(())
    }

    /// A broken log (a failed append, or a failure after a compaction's
    /// rename) is reopened before it is used again.
    ///
    /// # Errors
    /// [`LogError::Replaced`] when the reopened log had to be created anew;
    /// [`LogError::Io`] when reopening failed (it stays broken).
    fn writable(&mut self) -> Result<(), LogError> {
        if self.file.is_none() && !self.broken {
            return Err(LogError::Closed);
        }
        if self.broken {
            let previous = self.epoch;
            let (created, _) = self.recover(Some(previous))?;
            if created {
                return Err(LogError::Replaced { epoch: self.epoch });
            }
        }
        Ok(())
    }

    /// Appends `events` and the watermarks `marks` (`(source, position)`) in
    /// one write and one fsync. Answers the sequence numbers the events got
    /// (`first..end`). An append with no events and no marks writes nothing.
    ///
    /// A failed write or fsync marks the log broken: the next append reopens
    /// it, which truncates whatever part of this one landed (or keeps it whole
    /// when all of it did).
    ///
    /// # Errors
    /// [`LogError::BatchTooLarge`] over the batch limit, [`LogError::Encode`]
    /// for an event that does not serialise or a source name over 64 KiB,
    /// [`LogError::Io`] for the write or fsync, [`LogError::Replaced`] when a
    /// broken log reopened as a new one, [`LogError::Closed`] after close.
    pub fn append<S: AsRef<str>>(
        &mut self,
        events: &[EventRecord],
        marks: impl IntoIterator<Item = (S, u64)>,
    ) -> Result<std::ops::Range<u64>, LogError> {
        if events.len() > self.max_batch {
            return Err(LogError::BatchTooLarge { len: events.len(), max: self.max_batch });
        }
        self.append_encoded(EncodedEvents::encode(events)?, marks)
    }

    /// [`EventLog::append`] of events serialised beforehand (see
    /// [`EncodedEvents`]): the pump serialises a chunk while the chunk before
    /// it is being written. The events are serialised into the frame this
    /// writes, so the append only numbers them, seals the frame and writes
    /// it as it is.
    ///
    /// # Errors
    /// As [`EventLog::append`].
    pub fn append_encoded<S: AsRef<str>>(
        &mut self,
        events: EncodedEvents,
        marks: impl IntoIterator<Item = (S, u64)>,
    ) -> Result<std::ops::Range<u64>, LogError> {
        if events.len() > self.max_batch {
            return Err(LogError::BatchTooLarge { len: events.len(), max: self.max_batch });
        }
        self.writable()?;
        let first = self.next_seq;
        let marks: Vec<(S, u64)> = marks.into_iter().collect();
        if events.is_empty() && marks.is_empty() {
            return Ok(first..first);
        }
        if !self.reserved && !events.is_empty() {
            self.reserve()?;
        }
        let count = events.len() as u64;
        let frame = events.seal(first, &marks)?;
        self.write_frame(&frame)?;
        self.next_seq += count;
        self.records += count;
        for (name, position) in &marks {
            self.marks.insert(name.as_ref().to_owned(), *position);
        }
        Ok(first..self.next_seq)
    }

    /// The log's epoch, next sequence number and counts.
    pub fn head(&self) -> LogHead {
        LogHead {
            epoch: self.epoch,
            next_seq: self.next_seq,
            records: self.records,
            dropped: self.dropped,
            len: self.len,
        }
    }

    /// The watermarks the log records (`source → position`).
    pub fn marks(&self) -> &BTreeMap<String, u64> {
        &self.marks
    }

    /// Whether the log is broken (the next append reopens it).
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The most records one append may carry.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Closes the file and lets its lock go; every later append answers
    /// [`LogError::Closed`].
    pub fn close(&mut self) {
        self.file = None;
        self.broken = false;
        self.lock = None;
    }
}

/// The error of an append whose file was removed, replaced or changed
/// while open.
pub(crate) fn gone() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "the log file was removed, replaced or changed while open (the next append reopens it, or starts a new log)",
    )
}
