//! The handler every worker runs: a job's payload `{"command": LINE}` becomes a
//! child process (see `exec`), its exit code the job's outcome.

use crate::exec::{self, Ended, Invocation};
use leasehold::runner::{AbortSignal, BoxError, Clock, TokioClock};
use leasehold::store::{ClaimedJob, Store};
use leasehold::worker::Handler;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::watch;

/// The payload of a queued command line.
pub fn payload(line: &str) -> Value {
    json!({ "command": line })
}

/// Runs queued command lines.
pub struct CommandHandler {
    store: Store,
    grace: Duration,
    /// Turns `true` on the operator's second interrupt: every running command
    /// is ended at once instead of drained.
    hard_stop: watch::Receiver<bool>,
    clock: TokioClock,
}

impl CommandHandler {
    /// A handler that records results in `store`, gives a stopped command
    /// `grace` between SIGTERM and SIGKILL, and ends every command when
    /// `hard_stop` turns `true`.
    pub fn new(store: Store, grace: Duration, hard_stop: watch::Receiver<bool>) -> Self {
        CommandHandler { store, grace, hard_stop, clock: TokioClock::new() }
    }

    /// Records what a failed attempt left (exit code, output tail) under its
    /// fence, so `show` can print it; the fence refuses it once the claim is
    /// gone.
    async fn record(&self, job: &ClaimedJob, result: Value) -> Result<(), BoxError> {
        self.store.record_result(job.fence(), &result, self.clock.now()).await?;
        Ok(())
    }
}

impl Handler for CommandHandler {
    async fn handle(&self, job: &ClaimedJob, signal: AbortSignal) -> Result<Option<Value>, BoxError> {
        let line = job.payload.get("command").and_then(Value::as_str).ok_or("the job's payload has no \"command\" line")?;
        let invocation = Invocation::parse(line).ok_or("the job's command line is empty")?;
        let mut hard_stop = self.hard_stop.clone();
        let stop = async {
            tokio::select! {
                _ = signal.aborted() => {}
                _ = hard_stop.wait_for(|stop| *stop) => {}
            }
        };
        let run = exec::run(&invocation, stop, job.timeout, self.grace).await;
        let output = String::from_utf8_lossy(&run.output).into_owned();
        match run.ended {
            Ended::Exited(0) => Ok(Some(json!({ "exitCode": 0, "output": output }))),
            Ended::Exited(code) => {
                self.record(job, json!({ "exitCode": code, "output": output })).await?;
                Err(format!("exit code {code}").into())
            }
            Ended::NotStarted(why) => {
                self.record(job, json!({ "exitCode": null, "error": why, "output": output })).await?;
                Err(format!("could not start: {why}").into())
            }
            Ended::TimedOut => {
                let after = humantime::format_duration(job.timeout.unwrap_or_default());
                self.record(job, json!({ "exitCode": null, "error": format!("timed out after {after}"), "output": output }))
                    .await?;
                Err(format!("timed out after {after}").into())
            }
            // The claim is somebody else's: record nothing (the fence would
            // refuse it anyway); the worker settles nothing either.
            Ended::Stopped if signal.is_aborted() => Err("claim lost; command stopped".into()),
            Ended::Stopped => {
                self.record(job, json!({ "exitCode": null, "error": "stopped by a second interrupt", "output": output }))
                    .await?;
                Err("stopped by a second interrupt".into())
            }
        }
    }
}
