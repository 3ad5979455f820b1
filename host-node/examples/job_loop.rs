//! A job loop over a real workload: checksum a few hundred generated files
//! under leases that heartbeats renew, with fencing tokens on every settle.
//!
//! ```text
//! cargo run -p leasehold --release --example job_loop [-- FILES]
//! ```
//! It writes FILES files (default 300) of pseudo-random text into a temp
//! folder, queues one job per file in an in-memory lease table, and runs a
//! `JobRunner` at concurrency 8 until the queue is drained. Each job reads its
//! file, computes a CRC-32 and writes `<file>.crc32`; its settle is fenced by
//! the token its claim got. At the end every checksum is verified again.

use leasehold::core::Millis;
use leasehold::core::Event;
use leasehold::runner::{AbortSignal, BoxError, Job, JobRunner};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One claimed file and the fencing token of its claim.
#[derive(Clone, Debug)]
struct Claimed {
    path: PathBuf,
    token: u64,
}

/// An in-memory lease table: queued paths, the token each running path holds.
struct Table {
    queued: VecDeque<PathBuf>,
    tokens: std::collections::HashMap<PathBuf, u64>,
    next_token: u64,
    done: Vec<PathBuf>,
}

struct Checksums {
    table: Mutex<Table>,
}

impl Job for Checksums {
    type Item = Claimed;
    const HEARTBEAT: bool = true;

    async fn claim(&self, _at: Millis) -> Result<Option<Claimed>, BoxError> {
        let mut t = self.table.lock().unwrap();
        let Some(path) = t.queued.pop_front() else { return Ok(None) };
        t.next_token += 1;
        let token = t.next_token;
        t.tokens.insert(path.clone(), token);
        Ok(Some(Claimed { path, token }))
    }

    async fn perform(&self, item: Claimed, signal: AbortSignal) -> Result<(), BoxError> {
        let data = tokio::fs::read(&item.path).await?;
        let sum = crc32fast::hash(&data);
        signal.check()?; // a lost claim settles nothing
        let mut t = self.table.lock().unwrap();
        if t.tokens.get(&item.path) != Some(&item.token) {
            return Err("fence lost: another worker holds this file".into());
        }
        std::fs::write(item.path.with_extension("crc32"), format!("{sum:08x}\n"))?;
        t.tokens.remove(&item.path);
        t.done.push(item.path);
        Ok(())
    }

    async fn heartbeat(&self, item: Claimed, _at: Millis) -> Result<bool, BoxError> {
        Ok(self.table.lock().unwrap().tokens.get(&item.path) == Some(&item.token))
    }
}

fn write_files(dir: &std::path::Path, count: usize) -> std::io::Result<Vec<PathBuf>> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let words = ["lease", "claim", "fence", "token", "heartbeat", "epoch", "watermark", "backoff"];
    (0..count)
        .map(|i| {
            let mut text = String::new();
            for _ in 0..2_000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(words[(state % words.len() as u64) as usize]);
                text.push(' ');
            }
            let path = dir.join(format!("file-{i:04}.txt"));
            std::fs::write(&path, text)?;
            Ok(path)
        })
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let count: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let dir = std::env::temp_dir().join(format!("leasehold-job-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let files = write_files(&dir, count)?;
    println!("queued {count} files in {}", dir.display());

    let job = Arc::new(Checksums {
        table: Mutex::new(Table { queued: files.iter().cloned().collect(), tokens: Default::default(), next_token: 0, done: Vec::new() }),
    });
    let passes = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    let runner = JobRunner::builder("example.checksums")
        .interval(Duration::from_millis(200))
        .stale_after(Duration::from_secs(10))
        .concurrency(8)
        .batch_limit(100)
        .on_event({
            let passes = passes.clone();
            move |e| {
                if let Event::PassEnd { report, .. } = &e.event {
                    passes.fetch_add(1, Ordering::Relaxed);
                    println!("pass: claimed {} performed {} failed {} claim-lost {}", report.claimed, report.performed, report.failed, report.claim_lost);
                }
            }
        })
        .spawn(SharedJob(job.clone()))?;
    loop {
        let report = runner.tick().await;
        if report.claimed == 0 {
            break;
        }
    }
    runner.dispose().await;

    let done = job.table.lock().unwrap().done.len();
    let mut verified = 0;
    for path in &files {
        let expected = format!("{:08x}\n", crc32fast::hash(&std::fs::read(path)?));
        if std::fs::read_to_string(path.with_extension("crc32"))? == expected {
            verified += 1;
        }
    }
    std::fs::remove_dir_all(&dir)?;
    println!(
        "done: {done} files checksummed, {verified} verified, {} passes, {:.0} ms",
        passes.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64() * 1e3
    );
    if verified != count {
        return Err(format!("{} checksums missing or wrong", count - verified).into());
    }
    Ok(())
}

/// Shares the job between the runner and `main` (which reads the results).
struct SharedJob(Arc<Checksums>);

impl Job for SharedJob {
    type Item = Claimed;
    const HEARTBEAT: bool = true;
    async fn claim(&self, at: Millis) -> Result<Option<Claimed>, BoxError> {
        self.0.claim(at).await
    }
    async fn perform(&self, item: Claimed, signal: AbortSignal) -> Result<(), BoxError> {
        self.0.perform(item, signal).await
    }
    async fn heartbeat(&self, item: Claimed, at: Millis) -> Result<bool, BoxError> {
        self.0.heartbeat(item, at).await
    }
}
