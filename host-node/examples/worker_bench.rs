//! The Rust `Worker` as a full loop, timed: a `JobRunner` (concurrency `C`, passes that
//! last until the queue is drained) over a `Worker` claiming pages of `P`, with a no-op
//! handler, works queue `Q` until `N` jobs of it have succeeded (its counts read every 50 ms), and prints one JSON line
//! `{"jobs":N,"seconds":S,"jobsPerSecond":R}`. The jobs are queued beforehand by the caller
//! (`pkg/bench/postgres-queue.mjs` runs this beside the Node.js queue and graphile-worker on
//! one database).
//!
//! ```text
//! cargo run --release -p leasehold --features postgres --example worker_bench -- URL Q N C P
//! ```

use std::time::{Duration, Instant};

use leasehold::runner::{AbortSignal, BoxError, Clock, JobRunner, TokioClock};
use leasehold::store::{ClaimedJob, Store};
use leasehold::worker::{Handler, Worker};
use serde_json::Value;

struct Noop;

impl Handler for Noop {
    async fn handle(&self, _job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<Value>, BoxError> {
        Ok(None)
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, queue, jobs, concurrency, page] = args.as_slice() else {
        return Err("usage: worker_bench URL QUEUE JOBS CONCURRENCY PAGE".into());
    };
    let (jobs, concurrency, page): (u64, u32, usize) = (jobs.parse()?, concurrency.parse()?, page.parse()?);
    let store = Store::connect(url).await?;
    let worker = Worker::new(store.clone(), queue.clone(), Noop).lease(Duration::from_secs(30)).page_size(page);
    let started = Instant::now();
    let runner = JobRunner::builder("bench")
        .stale_after(Duration::from_secs(30))
        .interval(Duration::from_millis(20))
        .concurrency(concurrency)
        .batch_limit(u64::MAX >> 12)
        .spawn(worker)?;
    runner.start();
    loop {
        let done = store.counts(TokioClock::new().now()).await?.iter().find(|c| &c.queue == queue).map_or(0, |c| c.succeeded);
        if done >= jobs {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    runner.dispose().await;
    println!("{{\"jobs\":{jobs},\"seconds\":{seconds:.3},\"jobsPerSecond\":{:.0}}}", jobs as f64 / seconds);
    Ok(())
}
