//! Helpers shared by the event log and pump tests: a deterministic journal,
//! a fault-injecting storage, a tracing capture, and checks of the log's
//! guarantees.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use leasehold::eventlog::{LogFile, LogStorage, StdStorage, read_log};
use leasehold::pump::{EventDraft, EventSource};
use serde_json::{Map, Value, json};

/// How many drafts entry `i` of a [`Journal`] derives: 0, 1, 2 or 3 in turn,
/// so chunks cut inside entries and entries without events both happen.
pub fn drafts_of(i: u64) -> u64 {
    (i * 7 + 3) % 4
}

/// A durable journal stand-in: `len` committed entries, entry `i` deriving
/// [`drafts_of`]`(i)` drafts `{"i": i, "j": j}`.
pub struct Journal {
    len: AtomicU64,
    /// Bytes of padding in each draft's body (to make appends large).
    pad: usize,
    quiet: AtomicBool,
    identity: Mutex<Map<String, Value>>,
    /// `committed_len` calls: one per pass that derives this source.
    pub reads: AtomicU64,
    /// Positions reported through `logged`.
    pub logged: Mutex<Vec<u64>>,
}

impl Journal {
    pub fn new(len: u64) -> Arc<Self> {
        Self::padded(len, 0)
    }

    pub fn padded(len: u64, pad: usize) -> Arc<Self> {
        Arc::new(Journal {
            len: AtomicU64::new(len),
            pad,
            quiet: AtomicBool::new(false),
            identity: Mutex::new(Map::new()),
            reads: AtomicU64::new(0),
            logged: Mutex::new(Vec::new()),
        })
    }

    pub fn grow(&self, by: u64) {
        self.len.fetch_add(by, Ordering::SeqCst);
    }

    pub fn set_quiet(&self, quiet: bool) {
        self.quiet.store(quiet, Ordering::SeqCst);
    }

    pub fn set_identity(&self, key: &str, value: Value) {
        self.identity.lock().unwrap().insert(key.to_owned(), value);
    }

    pub fn len(&self) -> u64 {
        self.len.load(Ordering::SeqCst)
    }
}

impl EventSource for Journal {
    fn committed_len(&self) -> u64 {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.len.load(Ordering::SeqCst)
    }

    fn derive(&self, index: u64, out: &mut Vec<EventDraft>) {
        for j in 0..drafts_of(index) {
            let body = if self.pad == 0 {
                json!({ "i": index, "j": j })
            } else {
                json!({ "i": index, "j": j, "pad": "x".repeat(self.pad) })
            };
            out.push(EventDraft::new("step").at(1_000 + index).body(body));
        }
    }

    fn identity(&self) -> Map<String, Value> {
        self.identity.lock().unwrap().clone()
    }

    fn quiet(&self) -> bool {
        self.quiet.load(Ordering::SeqCst)
    }

    fn logged(&self, position: u64) {
        self.logged.lock().unwrap().push(position);
    }
}

/// What a log holds for the checks: `(i, j)` pairs per source and the
/// watermarks.
#[derive(Debug, Default)]
pub struct Contents {
    pub epoch: u64,
    pub steps: BTreeMap<String, Vec<(u64, u64)>>,
    pub marks: BTreeMap<String, u64>,
    pub records: usize,
}

/// Reads a log the way a separate reader process would (read-only).
pub fn contents(path: &Path) -> Contents {
    let read = read_log(path, 0).expect("the log reads");
    let bytes = std::fs::read(path).unwrap();
    let summary = leasehold::core::pump::frame::summarize(&bytes).expect("the log is not corrupt");
    let mut steps: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for logged in &read.records {
        if logged.event.kind == "step" {
            let i = logged.event.body["i"].as_u64().unwrap();
            let j = logged.event.body["j"].as_u64().unwrap();
            steps.entry(logged.event.source.clone()).or_default().push((i, j));
        }
    }
    Contents { epoch: read.epoch, steps, marks: summary.marks, records: read.records.len() }
}

impl Contents {
    /// Watermarks on disk are never ahead of the records on disk: every
    /// entry of `source` before its watermark has all its drafts in the log.
    pub fn assert_marks_not_ahead(&self, source: &str) {
        let mark = self.marks.get(source).copied().unwrap_or(0);
        let have: BTreeSet<(u64, u64)> =
            self.steps.get(source).map(|v| v.iter().copied().collect()).unwrap_or_default();
        for i in 0..mark {
            for j in 0..drafts_of(i) {
                assert!(have.contains(&(i, j)), "{source}: watermark {mark} but event ({i},{j}) is not in the log");
            }
        }
    }

    /// Every event of entries `0..len` of `source` is in the log at least
    /// once, and the watermark is at `len`.
    pub fn assert_complete(&self, source: &str, len: u64) {
        let have: BTreeSet<(u64, u64)> =
            self.steps.get(source).map(|v| v.iter().copied().collect()).unwrap_or_default();
        for i in 0..len {
            for j in 0..drafts_of(i) {
                assert!(have.contains(&(i, j)), "{source}: event ({i},{j}) missing");
            }
        }
        assert_eq!(self.marks.get(source).copied(), Some(len), "{source}: watermark at the end");
    }

    /// Events of `source` counted with duplicates.
    pub fn count(&self, source: &str) -> usize {
        self.steps.get(source).map_or(0, Vec::len)
    }
}

/// Total drafts of entries `0..len`.
pub fn total_drafts(len: u64) -> usize {
    (0..len).map(drafts_of).sum::<u64>() as usize
}

/// How an injected append fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The write fails and nothing lands.
    WriteNothing,
    /// The write lands this many bytes, then fails.
    WritePartial(usize),
    /// The write lands whole, then the fsync fails.
    SyncFails,
}

#[derive(Default)]
struct Plan {
    /// Appends to the log file itself (not temp files) since arming.
    appends: usize,
    append_fault: Option<(usize, Fault)>,
    every_append: Option<Fault>,
    fail_next_sync: bool,
    fail_dir_sync: bool,
    fail_rename: bool,
    fail_temp_sync: bool,
}

/// The real file system with failures injected on demand.
#[derive(Clone, Default)]
pub struct FaultyStorage {
    plan: Arc<Mutex<Plan>>,
}

impl FaultyStorage {
    pub fn new() -> Self {
        Self::default()
    }

    /// The `n`-th append to the log file from now on (0-based) fails so.
    pub fn fail_append(&self, n: usize, fault: Fault) {
        let mut plan = self.plan.lock().unwrap();
        plan.appends = 0;
        plan.append_fault = Some((n, fault));
    }

    /// Every append to the log file fails so, until [`FaultyStorage::heal`].
    pub fn fail_every_append(&self, fault: Fault) {
        let mut plan = self.plan.lock().unwrap();
        plan.appends = 0;
        plan.every_append = Some(fault);
    }

    /// No more failures.
    pub fn heal(&self) {
        *self.plan.lock().unwrap() = Plan::default();
    }

    /// Appends to the log file since the last `fail_append` or `heal`.
    pub fn appends(&self) -> usize {
        self.plan.lock().unwrap().appends
    }

    /// The next directory sync fails (after a compaction's rename).
    pub fn fail_dir_sync(&self) {
        self.plan.lock().unwrap().fail_dir_sync = true;
    }

    /// The next rename fails (and does not happen).
    pub fn fail_rename(&self) {
        self.plan.lock().unwrap().fail_rename = true;
    }

    /// The next fsync of a temporary file (`.compact`, `.new`) fails.
    pub fn fail_temp_sync(&self) {
        self.plan.lock().unwrap().fail_temp_sync = true;
    }
}

fn injected(what: &str) -> io::Error {
    io::Error::other(format!("injected {what} failure"))
}

fn is_temp(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".compact") || name.ends_with(".new")
}

struct FaultyFile {
    inner: Box<dyn LogFile>,
    temp: bool,
    plan: Arc<Mutex<Plan>>,
}

impl LogFile for FaultyFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.temp {
            return self.inner.append(bytes);
        }
        let fault = {
            let mut plan = self.plan.lock().unwrap();
            let n = plan.appends;
            plan.appends += 1;
            match plan.append_fault {
                Some((at, fault)) if at == n => Some(fault),
                _ => plan.every_append,
            }
        };
        match fault {
            None => self.inner.append(bytes),
            Some(Fault::WriteNothing) => Err(injected("write")),
            Some(Fault::WritePartial(n)) => {
                self.inner.append(&bytes[..n.min(bytes.len())])?;
                Err(injected("short write"))
            }
            Some(Fault::SyncFails) => {
                self.inner.append(bytes)?;
                self.plan.lock().unwrap().fail_next_sync = true;
                Ok(())
            }
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        {
            let mut plan = self.plan.lock().unwrap();
            if self.temp && plan.fail_temp_sync {
                plan.fail_temp_sync = false;
                return Err(injected("temp fsync"));
            }
            if !self.temp && plan.fail_next_sync {
                plan.fail_next_sync = false;
                return Err(injected("fsync"));
            }
        }
        self.inner.sync()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.inner.truncate(len)
    }

    fn is_intact(&self, path: &Path, len: u64) -> io::Result<bool> {
        self.inner.is_intact(path, len)
    }
}

impl LogStorage for FaultyStorage {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        StdStorage.read(path)
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let inner = StdStorage.open_append(path)?;
        Ok(Box::new(FaultyFile { inner, temp: is_temp(path), plan: Arc::clone(&self.plan) }))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let inner = StdStorage.create(path)?;
        Ok(Box::new(FaultyFile { inner, temp: is_temp(path), plan: Arc::clone(&self.plan) }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        {
            let mut plan = self.plan.lock().unwrap();
            if plan.fail_rename {
                plan.fail_rename = false;
                return Err(injected("rename"));
            }
        }
        StdStorage.rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        StdStorage.remove(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        {
            let mut plan = self.plan.lock().unwrap();
            if plan.fail_dir_sync {
                plan.fail_dir_sync = false;
                return Err(injected("directory fsync"));
            }
        }
        StdStorage.sync_dir(dir)
    }
}

/// A temporary directory and the log path inside it.
pub fn temp_log() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.log");
    (dir, path)
}

/// Keeps every `tracing` event of the test binary as a line of text.
///
/// Installed as the global subscriber once ([`Captured::global`]): a
/// thread-scoped one would race with tests on other threads that hit the
/// same callsites first (tracing caches a callsite's interest), so tests
/// count lines carrying something only they log (their temp path).
#[derive(Clone, Default)]
pub struct Captured {
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl Captured {
    /// The binary's capture, installed on first use.
    pub fn global() -> &'static Captured {
        static GLOBAL: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
        GLOBAL.get_or_init(|| {
            let captured = Captured::default();
            tracing::subscriber::set_global_default(captured.clone()).expect("no other global subscriber");
            captured
        })
    }

    /// Lines containing all of `needles`.
    pub fn count_all(&self, needles: &[&str]) -> usize {
        self.lines.lock().unwrap().iter().filter(|l| needles.iter().all(|n| l.contains(n))).count()
    }

    pub fn count(&self, needle: &str) -> usize {
        self.lines.lock().unwrap().iter().filter(|l| l.contains(needle)).count()
    }
}

struct Visitor<'a>(&'a mut String);

impl tracing::field::Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl tracing::Subscriber for Captured {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = format!("{} {} ", event.metadata().target(), event.metadata().level());
        event.record(&mut Visitor(&mut line));
        self.lines.lock().unwrap().push(line);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Pump options for tests: `chunk_size` drafts per append, faults through
/// `storage`, the wall clock read from `clock` (ms).
pub fn pump_options(
    path: &Path,
    chunk_size: usize,
    storage: &FaultyStorage,
    clock: &Arc<AtomicU64>,
) -> leasehold::pump::PumpOptions {
    let mut options = leasehold::pump::PumpOptions::new(path);
    options.chunk_size = chunk_size;
    options.storage = Arc::new(storage.clone());
    let clock = Arc::clone(clock);
    options.wall_clock = Arc::new(move || clock.load(Ordering::SeqCst));
    options
}

/// A wall clock at `ms`.
pub fn clock_at(ms: u64) -> Arc<AtomicU64> {
    Arc::new(AtomicU64::new(ms))
}

/// Opens a pump over `sources`.
pub async fn open_pump(
    options: leasehold::pump::PumpOptions,
    sources: &[(&str, &Arc<Journal>)],
) -> leasehold::pump::Pump {
    let mut builder = leasehold::pump::Pump::builder(options);
    for (name, journal) in sources {
        builder.source(*name, Arc::clone(journal) as Arc<dyn EventSource>);
    }
    builder.open().await.expect("the pump opens")
}

/// Records per frame of the log at `path`.
pub fn frame_sizes(path: &Path) -> Vec<u32> {
    let bytes = std::fs::read(path).unwrap();
    leasehold::core::pump::frame::Frames::new(&bytes).map(|f| f.unwrap().1.records().count() as u32).collect()
}
