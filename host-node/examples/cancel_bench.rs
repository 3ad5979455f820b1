//! How long a running command takes to end after its job is cancelled, on
//! SQLite and (when configured) PostgreSQL.
//!
//! ```text
//! cargo build -p leasehold --features cli,postgres           # the leasehold binary
//! eval "$(scripts/pg-cluster.sh start)"                      # optional: PostgreSQL too
//! cargo run -p leasehold --features cli,postgres --example cancel_bench
//! ```
//!
//! One `leasehold work --concurrency 1 --stale-after 6s --grace 1s` worker
//! (heartbeat every 2 s) per store. Each round queues a command that writes
//! its pid and sleeps, waits until it runs, lets a different part of the
//! heartbeat interval pass (so the cancel falls at every phase of the
//! renewals), cancels the job through the library, and times until the
//! command's process is gone. The target: within one heartbeat interval
//! plus the grace (3 s here) on SQLite, where the worker's next renewal
//! finds out; well under on PostgreSQL, where the cancel's NOTIFY makes the
//! worker renew at once.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use leasehold::core::Millis;
use leasehold::store::{EnqueueOptions, JobState, Store};
use serde_json::json;

const ROUNDS: u32 = 10;
const HEARTBEAT: Duration = Duration::from_secs(2);
const GRACE: Duration = Duration::from_secs(1);

fn now() -> Millis {
    Millis(SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_millis() as u64)
}

/// The `leasehold` binary beside this example's folder.
fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let bin = exe.parent().and_then(Path::parent).expect("target folder").join("leasehold");
    assert!(bin.exists(), "{} is missing: build it with `cargo build -p leasehold --features cli,postgres`", bin.display());
    bin
}

fn worker(url: &str, folder: &Path) -> Child {
    Command::new(binary())
        .args(["--database", url, "--events"])
        .arg(folder.join("events"))
        .args(["work", "--queue", "bench", "--concurrency", "1", "--stale-after", "6s", "--grace", "1s"])
        .env_remove("LEASEHOLD_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the worker starts")
}

async fn wait_for_pid(file: &Path) -> rustix::process::Pid {
    loop {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
            return rustix::process::Pid::from_raw(pid).expect("a pid");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Times `ROUNDS` cancels of running commands on the store at `url`.
async fn measure(label: &str, url: &str) {
    let folder = tempfile::tempdir().expect("temp dir");
    let store = Store::connect(url).await.expect("the store opens");
    let mut work = worker(url, folder.path());
    let mut took = Vec::new();
    for round in 0..ROUNDS {
        let pid_file = folder.path().join(format!("pid-{round}"));
        let line = format!("echo $$ > {} && exec sleep 60", pid_file.display());
        let id = store.enqueue("bench", &json!({ "command": line }), &EnqueueOptions::default(), now()).await.expect("queued");
        let pid = wait_for_pid(&pid_file).await;
        tokio::time::sleep(HEARTBEAT * round / ROUNDS).await;
        let cancelled = Instant::now();
        store.cancel(&[id], Some("benchmark"), "cancel_bench", now()).await.expect("cancelled");
        while rustix::process::test_kill_process(pid).is_ok() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        took.push(cancelled.elapsed());
        assert_eq!(store.job(id).await.expect("readable").state, JobState::Cancelled);
    }
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(work.id() as i32).expect("a pid"),
        rustix::process::Signal::TERM,
    );
    let _ = work.wait();
    took.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{label:<10} cancel → command ended: min {:>6.0} ms  median {:>6.0} ms  max {:>6.0} ms  ({ROUNDS} rounds; bound: heartbeat {} ms + grace {} ms = {} ms)",
        ms(took[0]),
        ms(took[took.len() / 2]),
        ms(took[took.len() - 1]),
        HEARTBEAT.as_millis(),
        GRACE.as_millis(),
        (HEARTBEAT + GRACE).as_millis(),
    );
}

#[tokio::main]
async fn main() {
    let folder = tempfile::tempdir().expect("temp dir");
    let sqlite = format!("sqlite://{}", folder.path().join("bench.db").display());
    measure("sqlite", &sqlite).await;
    match std::env::var("LEASEHOLD_TEST_PG_URL") {
        Ok(url) => measure("postgres", &url).await,
        Err(_) => println!("postgres   skipped: LEASEHOLD_TEST_PG_URL is not set (eval \"$(scripts/pg-cluster.sh start)\")"),
    }
}
