//! Event log throughput next to the machine's raw fsync rate, on the same
//! file system, in the same run (issue 6, "Speed").
//!
//! ```text
//! cargo run --release -p leasehold --example eventlog_bench -- [DIR] [--seconds N]
//! ```
//!
//! `DIR` defaults to `target/eventlog-bench` (the project's file system; `/tmp`
//! may be a RAM disk). Prints, for appends of 1, 64 and 1024 events (each
//! with a watermark), appended events/s and appends (= fsyncs)/s, and the
//! ratio of appends/s to the raw rate of `write` + `fdatasync` of 64 bytes on
//! a file in the same directory (and to the raw rate for writes of the
//! append's own size). Target: every ratio at least 0.80 (an append costs
//! little more than its one fsync). Then the same through the pump, end to
//! end (derive, chunk, append). Figures are taken in interleaved slices and
//! ratios are medians over rounds, since a shared disk's fsync rate drifts.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use leasehold::eventlog::{EncodedEvents, EventLog, EventRecord, LogOptions};
use leasehold::pump::{EventDraft, EventSource, Pump, PumpOptions};
use serde_json::json;

fn main() {
    let mut dir = PathBuf::from("target/eventlog-bench");
    let mut seconds = 3.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                seconds = args.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| usage("--seconds takes a number"));
            }
            "-h" | "--help" => usage(""),
            other if other.starts_with('-') => usage(&format!("unknown option {other}")),
            other => dir = PathBuf::from(other),
        }
    }
    fs::create_dir_all(&dir).unwrap_or_else(|e| usage(&format!("can not create {}: {e}", dir.display())));
    println!("event log benchmark in {} ({seconds} s per figure, interleaved)", dir.display());

    // The fsync rate of a shared disk drifts by tens of percent within
    // seconds, so every figure is measured in short slices taken in turn,
    // round after round: drift hits all of them alike.
    let slice = Duration::from_millis(250);
    let rounds = ((seconds / slice.as_secs_f64()).ceil() as usize).max(1);
    let mut raw = RawFile::open(&dir.join("raw.bin"), 64);
    let mut logs: Vec<LogBench> = [1usize, 64, 1024].iter().map(|&c| LogBench::open(&dir, c)).collect();
    let mut raw_same: Vec<RawFile> =
        logs.iter().map(|l| RawFile::open(&dir.join(format!("raw-{}.bin", l.chunk)), l.frame_bytes)).collect();
    let mut pump = PumpBench::open(&dir.join("pump.log"));
    let mut raw_pump = RawFile::open(&dir.join("raw-pump.bin"), pump.frame_bytes);
    for _ in 0..rounds {
        raw.run(slice);
        for (log, same) in logs.iter_mut().zip(&mut raw_same) {
            log.run_serial(slice);
            log.run_pipelined(slice);
            same.run(slice);
        }
        pump.run(slice);
        raw_pump.run(slice);
    }
    let raw_rate = raw.rate();
    println!("raw write+fdatasync of 64 B: {raw_rate:>8.1} fsyncs/s");
    println!();
    println!(
        "{:>6}  {:>9}  {:>12}  {:>10}  {:>7}  {:>17}  {:>14}  {:>13}",
        "chunk", "mode", "events/s", "appends/s", "bytes", "raw fsync of same", "/ raw of same", "/ raw of 64 B"
    );
    let mut worst = f64::INFINITY;
    for (log, same) in logs.iter().zip(&raw_same) {
        for (mode, meter) in [("serial", &log.serial), ("pipelined", &log.pipelined)] {
            let appends = meter.rate();
            let ratio = meter.median_ratio(&same.meter);
            if mode == "pipelined" {
                worst = worst.min(ratio);
            }
            println!(
                "{:>6}  {mode:>9}  {:>12.1}  {appends:>10.1}  {:>7}  {:>15.1}/s  {ratio:>14.2}  {:>13.2}",
                log.chunk,
                appends * log.chunk as f64,
                log.frame_bytes,
                same.rate(),
                meter.median_ratio(&raw.meter)
            );
        }
    }
    println!("(ratios: median over rounds of the two rates measured side by side)");
    println!(
        "(one fsync per chunk = write + fdatasync of the chunk's own bytes: a large chunk's fsync \
         moves its bytes too, so 64 B is the floor only for small chunks)"
    );
    println!();
    println!(
        "target: chunked appends within 80% of one fsync per chunk (pipelined, as the pump appends) \
         -> worst ratio {worst:.2} ({})",
        if worst >= 0.8 { "met" } else { "NOT met" }
    );
    let appends = pump.appends_per_second();
    let per_flush = PUMP_CHUNKS_PER_FLUSH as f64;
    println!(
        "pump end to end (derive and serialise overlapped with the append before; chunks of {PUMP_CHUNK}, \
         {} B): {:.1} events/s, {appends:.1} appends/s; {:.2} of the raw fsync of the same bytes \
         ({:.1}/s), {:.2} of the raw fsync of 64 B",
        pump.frame_bytes,
        appends * PUMP_CHUNK as f64,
        pump.meter.median_ratio(&raw_pump.meter) * per_flush,
        raw_pump.rate(),
        pump.meter.median_ratio(&raw.meter) * per_flush
    );
    drop((logs, pump));
    let _ = fs::remove_dir_all(&dir);
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("eventlog_bench: {problem}");
    }
    eprintln!("usage: eventlog_bench [DIR] [--seconds N]");
    std::process::exit(2);
}

/// Operations counted over the slices a figure was measured in, and the
/// rate of each slice.
#[derive(Default)]
struct Meter {
    ops: u64,
    busy: Duration,
    slices: Vec<f64>,
}

impl Meter {
    fn run(&mut self, slice: Duration, mut op: impl FnMut()) {
        let started = Instant::now();
        let mut ops = 0u64;
        while started.elapsed() < slice {
            op();
            ops += 1;
        }
        let took = started.elapsed();
        self.ops += ops;
        self.busy += took;
        self.slices.push(ops as f64 / took.as_secs_f64());
    }

    fn rate(&self) -> f64 {
        self.ops as f64 / self.busy.as_secs_f64()
    }

    /// The median over rounds of this meter's slice rate divided by
    /// `baseline`'s slice rate in the same round: a burst of someone else's
    /// I/O moves a few rounds, not the figure.
    fn median_ratio(&self, baseline: &Meter) -> f64 {
        let mut ratios: Vec<f64> =
            self.slices.iter().zip(&baseline.slices).map(|(a, b)| a / b).filter(|r| r.is_finite()).collect();
        ratios.sort_by(f64::total_cmp);
        ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

/// The raw baseline: appends of `bytes` bytes, each followed by `fdatasync`.
struct RawFile {
    file: fs::File,
    record: Vec<u8>,
    meter: Meter,
}

impl RawFile {
    fn open(path: &Path, bytes: usize) -> Self {
        let _ = fs::remove_file(path);
        let file = OpenOptions::new().create(true).append(true).open(path).unwrap();
        RawFile { file, record: vec![7u8; bytes], meter: Meter::default() }
    }

    fn run(&mut self, slice: Duration) {
        let RawFile { file, record, meter } = self;
        meter.run(slice, || {
            file.write_all(record).unwrap();
            file.sync_data().unwrap();
        });
    }

    fn rate(&self) -> f64 {
        self.meter.rate()
    }
}

fn event(n: u64) -> EventRecord {
    EventRecord {
        source: "jobs.mailer".to_owned(),
        at: 1_717_000_000_000 + n,
        kind: "performed".to_owned(),
        identity: [("request".to_owned(), json!("r-1234"))].into_iter().collect(),
        body: json!({ "item": n % 25, "durationMs": 38 }),
    }
}

/// Appends of `chunk` events plus one watermark to an event log, measured
/// two ways:
///
/// - **serial**: [`EventLog::append`], which serialises the events and then
///   writes and syncs them, one after the other;
/// - **pipelined**: as the pump drives the log, the events of the next append
///   are serialised ([`EncodedEvents::encode`]) and numbered
///   ([`EncodedEvents::number_from`]) on one thread while the log's
///   own thread writes and syncs the append before it
///   ([`EventLog::append_encoded`]); at most one serialised chunk waits.
struct LogBench {
    chunk: usize,
    log: EventLog,
    events: Vec<EventRecord>,
    frame_bytes: usize,
    mark: u64,
    serial: Meter,
    pipelined: Meter,
}

impl LogBench {
    fn open(dir: &Path, chunk: usize) -> Self {
        let path = dir.join(format!("log-{chunk}.log"));
        let _ = fs::remove_file(&path);
        let mut log = EventLog::open(&path, LogOptions::default()).unwrap().log;
        let events: Vec<EventRecord> = (0..chunk as u64).map(event).collect();
        let before = log.head().len;
        log.append(&events, [("jobs.mailer", 0u64)]).unwrap();
        let frame_bytes = (log.head().len - before) as usize;
        LogBench { chunk, log, events, frame_bytes, mark: 0, serial: Meter::default(), pipelined: Meter::default() }
    }

    fn run_serial(&mut self, slice: Duration) {
        let LogBench { chunk, log, events, mark, serial, .. } = self;
        serial.run(slice, || {
            *mark += *chunk as u64;
            log.append(events, [("jobs.mailer", *mark)]).unwrap();
        });
    }

    fn run_pipelined(&mut self, slice: Duration) {
        let LogBench { chunk, log, events, mark, pipelined, .. } = self;
        let (to_log, from_encoder) = mpsc::sync_channel::<(EncodedEvents, u64)>(1);
        let stop = AtomicBool::new(false);
        // As the pump does: each chunk is numbered from where the appends
        // before it end, before it waits for them.
        let mut next_seq = log.head().next_seq;
        std::thread::scope(|scope| {
            let stop = &stop;
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let mut encoded = EncodedEvents::encode(events).unwrap();
                    encoded.number_from(next_seq);
                    next_seq += encoded.len() as u64;
                    *mark += *chunk as u64;
                    if to_log.send((encoded, *mark)).is_err() {
                        break;
                    }
                }
            });
            pipelined.run(slice, || {
                let (encoded, mark) = from_encoder.recv().unwrap();
                log.append_encoded(encoded, [("jobs.mailer", mark)]).unwrap();
            });
            stop.store(true, Ordering::Relaxed);
            // Unblocks an encoder waiting to send; what it sent is dropped.
            while from_encoder.recv().is_ok() {}
        });
    }
}

/// A journal of `len` entries, one event each, shaped as [`event`]'s (the
/// request id comes from the source's identity).
struct Counter(AtomicU64);

impl EventSource for Counter {
    fn committed_len(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    fn derive(&self, index: u64, out: &mut Vec<EventDraft>) {
        out.push(
            EventDraft::new("performed")
                .at(1_717_000_000_000 + index)
                .body(json!({ "item": index % 25, "durationMs": 38 })),
        );
    }
    fn identity(&self) -> serde_json::Map<String, serde_json::Value> {
        [("request".to_owned(), json!("r-1234"))].into_iter().collect()
    }
}

const PUMP_CHUNK: usize = 1024;
/// Chunks one flush appends.
const PUMP_CHUNKS_PER_FLUSH: u64 = 10;

/// The pump deriving a journal that grows by ten chunks per flush.
struct PumpBench {
    runtime: tokio::runtime::Runtime,
    counter: Arc<Counter>,
    pump: Pump,
    /// Bytes one append of a full chunk adds to the log.
    frame_bytes: usize,
    meter: Meter,
}

impl PumpBench {
    fn open(path: &Path) -> Self {
        let _ = fs::remove_file(path);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let counter = Arc::new(Counter(AtomicU64::new(0)));
        let mut builder = Pump::builder(PumpOptions::new(path));
        builder.source("jobs.mailer", Arc::clone(&counter) as Arc<dyn EventSource>);
        let pump = runtime.block_on(builder.open()).unwrap();
        let len = |pump: &Pump| runtime.block_on(pump.status()).unwrap().head.map_or(0, |h| h.len);
        let before = len(&pump);
        counter.0.fetch_add(PUMP_CHUNK as u64, Ordering::SeqCst);
        runtime.block_on(pump.flush()).unwrap();
        let frame_bytes = (len(&pump) - before) as usize;
        PumpBench { runtime, counter, pump, frame_bytes, meter: Meter::default() }
    }

    fn run(&mut self, slice: Duration) {
        let PumpBench { runtime, counter, pump, meter, .. } = self;
        meter.run(slice, || {
            counter.0.fetch_add(PUMP_CHUNKS_PER_FLUSH * PUMP_CHUNK as u64, Ordering::SeqCst);
            runtime.block_on(pump.flush()).unwrap();
        });
    }

    fn appends_per_second(&self) -> f64 {
        self.meter.rate() * PUMP_CHUNKS_PER_FLUSH as f64
    }
}
