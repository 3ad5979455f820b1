//! Runner throughput, native, next to the seed runner from the same run.
//!
//! The workload of `../shared/bench/runner-throughput.mjs`: N no-op items
//! claimed from a counter and performed in one pass (batch limit N + 1), at
//! concurrency 1 and 16, with and without a heartbeat. Then the memory per
//! in-flight item at concurrency 64 (allocated bytes, measured by a counting
//! allocator).
//!
//! ```text
//! cargo run -p leasehold --release --example runner_bench [-- N]
//! ```
//! The seed figure comes from `node ../shared/bench/runner-throughput.mjs`
//! when that file and `node` exist; otherwise only native figures print.

use leasehold::core::Millis;
use leasehold::runner::{AbortSignal, BoxError, Job, JobRunner};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The production default clock reads `std::time::Instant` through tokio;
/// examples build tokio with the tests' `test-util` feature, whose virtual
/// clock adds a lookup per reading. This clock is what production pays.
struct StdClock(Instant, u64);

impl leasehold::runner::Clock for StdClock {
    fn now(&self) -> Millis {
        Millis(self.1 + self.0.elapsed().as_millis() as u64)
    }
}

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

struct Counter<const HB: bool> {
    next: AtomicU64,
    n: u64,
}

impl<const HB: bool> Job for Counter<HB> {
    type Item = u64;
    const HEARTBEAT: bool = HB;

    async fn claim(&self, _at: Millis) -> Result<Option<u64>, BoxError> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        Ok((i < self.n).then_some(i))
    }

    async fn perform(&self, _item: u64, _signal: AbortSignal) -> Result<(), BoxError> {
        Ok(())
    }

    async fn heartbeat(&self, _item: u64, _at: Millis) -> Result<bool, BoxError> {
        Ok(true)
    }
}

async fn native<const HB: bool>(n: u64, concurrency: u32) -> f64 {
    let runner = JobRunner::builder("bench")
        .interval(Duration::from_secs(1))
        .stale_after(Duration::from_secs(30))
        .batch_limit(n + 1)
        .concurrency(concurrency)
        .clock(StdClock(Instant::now(), 1_700_000_000_000))
        .spawn(Counter::<HB> { next: AtomicU64::new(0), n })
        .expect("valid options");
    let t0 = Instant::now();
    let report = runner.tick().await;
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(u64::from(report.performed), n);
    runner.dispose().await;
    n as f64 / secs
}

fn seed(n: u64, concurrency: u32, hb: bool) -> Option<f64> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench/runner-throughput.mjs");
    if !script.exists() {
        return None;
    }
    let mut cmd = Command::new("node");
    cmd.arg(&script).arg("reference").arg(n.to_string()).arg(concurrency.to_string());
    if hb {
        cmd.arg("hb");
    }
    let out = cmd.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text.find("\"itemsPerSec\":")? + "\"itemsPerSec\":".len();
    text[at..].trim_end_matches(['}', '\n']).parse().ok()
}

/// A job whose performs all wait until released: every slot stays in flight.
struct Held {
    next: AtomicU64,
    release: Arc<tokio::sync::Notify>,
}

impl Job for Held {
    type Item = u64;
    const HEARTBEAT: bool = true;
    async fn claim(&self, _at: Millis) -> Result<Option<u64>, BoxError> {
        Ok(Some(self.next.fetch_add(1, Ordering::Relaxed)))
    }
    async fn perform(&self, _item: u64, _signal: AbortSignal) -> Result<(), BoxError> {
        self.release.notified().await;
        Ok(())
    }
    async fn heartbeat(&self, _item: u64, _at: Millis) -> Result<bool, BoxError> {
        Ok(true)
    }
}

async fn bytes_per_in_flight_item(concurrency: u32) -> f64 {
    let release = Arc::new(tokio::sync::Notify::new());
    let region = Region::new(GLOBAL);
    let runner = JobRunner::builder("mem")
        .stale_after(Duration::from_secs(30))
        .batch_limit(u64::from(concurrency))
        .concurrency(concurrency)
        .spawn(Held { next: AtomicU64::new(0), release: release.clone() })
        .expect("valid options");
    let pass = tokio::spawn({
        let runner = runner.clone();
        async move { runner.tick().await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let stats = region.change();
    let live = stats.bytes_allocated as f64 - stats.bytes_deallocated as f64;
    release.notify_waiters();
    let _ = pass.await;
    runner.dispose().await;
    live / f64::from(concurrency)
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    println!("items: {n} no-op items in one pass (median of 5 native runs)");
    println!("{:<28} {:>14} {:>14} {:>8}", "configuration", "native items/s", "seed items/s", "ratio");
    for (concurrency, hb) in [(1, false), (1, true), (16, false), (16, true)] {
        let mut runs: Vec<f64> = (0..5)
            .map(|_| rt.block_on(async { if hb { native::<true>(n, concurrency).await } else { native::<false>(n, concurrency).await } }))
            .collect();
        runs.sort_by(f64::total_cmp);
        let native = runs[2];
        let label = format!("concurrency {concurrency}{}", if hb { ", heartbeat" } else { "" });
        match seed(n, concurrency, hb) {
            Some(seed) => println!("{label:<28} {native:>14.0} {seed:>14.0} {:>7.1}x", native / seed),
            None => println!("{label:<28} {native:>14.0} {:>14} {:>8}", "n/a", "n/a"),
        }
    }
    let per_item = rt.block_on(bytes_per_in_flight_item(64));
    println!("memory: {per_item:.0} bytes allocated per in-flight item at concurrency 64 (runner included)");
}
