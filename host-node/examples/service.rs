//! A worker service on a SQLite queue: works the jobs of queue `mail` until Ctrl-C,
//! whoever queued them (this process, another service, `leasehold enqueue`), and
//! queues a digest every minute by a schedule.
//!
//! ```text
//! cargo run -p leasehold --example service -- /tmp/queue.db
//! ```
use std::time::Duration;

use leasehold::runner::{AbortSignal, BoxError, Clock, JobRunner, TokioClock};
use leasehold::schedule::{self, Cadence};
use leasehold::store::{ClaimedJob, EnqueueOptions, ScheduleSpec, Store, StoreError};
use leasehold::worker::{Handler, Worker};
use serde_json::{Value, json};

struct Mailer;

impl Handler for Mailer {
    async fn handle(&self, job: &ClaimedJob, signal: AbortSignal) -> Result<Option<Value>, BoxError> {
        let to = job.payload["to"].as_str().ok_or("the payload has no \"to\"")?; // an Err retries, with backoff
        signal.check()?; // the job was cancelled or its lease lost: stop, and nothing is written
        println!("job {} (attempt {}): mail to {to}", job.id, job.attempt);
        Ok(Some(json!({ "sent": to }))) // kept as the job's result
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let file = std::env::args().nth(1).unwrap_or_else(|| "queue.db".to_owned());
    let store = Store::connect(&format!("sqlite://{file}")).await?; // made if missing, in a folder that exists
    let clock = TokioClock::new(); // the store's calls take the time, ms since the Unix epoch
    store.enqueue("mail", &json!({ "to": "ada@example.com" }), &EnqueueOptions::default(), clock.now()).await?;
    let digest = ScheduleSpec::new("digest", "mail", Cadence::Every(Duration::from_secs(60)), json!({ "to": "team@example.com" }));
    match store.add_schedule(&digest, clock.now()).await {
        Ok(_) | Err(StoreError::DuplicateSchedule(_)) => {} // added by an earlier run
        Err(e) => return Err(e.into()),
    }
    // Queues each due slot of the queue's schedules, once across every process that drives them.
    let schedules = tokio::spawn(schedule::drive(store.clone(), "mail".to_owned()));

    let worker = Worker::new(store.clone(), "mail", Mailer).lease(Duration::from_secs(30));
    let runner = JobRunner::builder("app.mail").stale_after(Duration::from_secs(30)).concurrency(4).spawn(worker)?;
    runner.start(); // nothing is claimed before this

    tokio::signal::ctrl_c().await?;
    schedules.abort();
    runner.dispose().await; // claims no more; running jobs finish and their outcomes are written
    Ok(())
}
