//! The library in one file: a SQLite queue, a handler, a worker under a
//! runner, and what the store says afterwards.
//!
//! ```text
//! cargo run -p leasehold --example sqlite_worker
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leasehold::core::Millis;
use leasehold::runner::{AbortSignal, BoxError, JobRunner};
use leasehold::store::{ClaimedJob, EnqueueOptions, Store};
use leasehold::worker::{Handler, Worker};
use serde_json::{Value, json};

/// What each job does: gets its payload and the signal that says its lease
/// was lost or the runner is stopping; answers a result to keep, or an error
/// (retried with backoff, dead-lettered after the last attempt).
struct Greeter;

impl Handler for Greeter {
    async fn handle(&self, job: &ClaimedJob, signal: AbortSignal) -> Result<Option<Value>, BoxError> {
        if signal.is_aborted() {
            return Err("stopped before it started".into());
        }
        let name = job.payload["name"].as_str().ok_or("payload has no name")?;
        Ok(Some(json!({ "greeting": format!("hello, {name}") })))
    }
}

fn now() -> Millis {
    Millis(SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_millis() as u64)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let dir = tempfile::tempdir()?;
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("queue.db").display())).await?;
    for name in ["ada", "grace", "edsger"] {
        store.enqueue("greetings", &json!({ "name": name }), &EnqueueOptions::default(), now()).await?;
    }
    let once = EnqueueOptions { max_attempts: 1, ..EnqueueOptions::default() };
    let bad = store.enqueue("greetings", &json!({}), &once, now()).await?;

    let worker = Worker::new(store.clone(), "greetings", Greeter).lease(Duration::from_secs(30));
    let runner = JobRunner::builder("example.greetings").stale_after(Duration::from_secs(30)).spawn(worker)?;
    let report = runner.tick().await;
    println!("one pass: claimed {}, performed {}", report.claimed, report.performed);
    runner.dispose().await;

    for count in store.counts(now()).await? {
        println!("queue {}: {} succeeded, {} dead", count.queue, count.succeeded, count.dead);
    }
    let job = store.job(bad).await?;
    println!("job {} is {:?}: {:?}", bad.0, job.state, job.last_error);
    for attempt in &job.attempt_log {
        println!("  attempt token {}: {:?}", attempt.token, attempt.outcome);
    }
    Ok(())
}
