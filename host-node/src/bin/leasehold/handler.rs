//! The handler every worker runs: a job's payload `{"command": LINE}` becomes a
//! child process (see `exec`), its exit code the job's outcome.

use crate::exec::{self, Ended, Invocation};
use leasehold::runner::{AbortSignal, BoxError};
use leasehold::store::ClaimedJob;
use leasehold::worker::{Failure, Handler};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::watch;

/// The payload of a queued command line.
pub fn payload(line: &str) -> Value {
    json!({ "command": line })
}

/// Runs queued command lines. Writes nothing itself: the worker settles what
/// it answers (the exit code and output tail as the attempt's result, with
/// the completion or the failure), and a command ended because its claim
/// was lost or lapsed answers the signal's error, so nothing is written.
pub struct CommandHandler {
    grace: Duration,
    /// Turns `true` on the operator's second interrupt: every running command
    /// is ended at once instead of drained.
    hard_stop: watch::Receiver<bool>,
}

impl CommandHandler {
    /// A handler that gives a stopped command `grace` between SIGTERM and
    /// SIGKILL, and ends every command when `hard_stop` turns `true`.
    pub fn new(grace: Duration, hard_stop: watch::Receiver<bool>) -> Self {
        CommandHandler { grace, hard_stop }
    }
}

/// A failed attempt's error with what it left (exit code, output tail), so
/// `show` can print it.
fn failure(error: String, exit_code: Option<i32>, why: Option<&str>, output: String) -> BoxError {
    let mut result = json!({ "exitCode": exit_code, "output": output });
    if let Some(why) = why {
        result["error"] = json!(why);
    }
    Failure::new(error, result).into()
}

impl Handler for CommandHandler {
    // Each command runs under its guard process, which ends it by the exit
    // deadline: a perform aborted late still reads how the command ended
    // (one that finished while this worker was stopped is finished work).
    const GUARDED: bool = true;

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
        let run = exec::run(&invocation, stop, job.timeout, self.grace, Some(&signal)).await;
        // The output's NUL bytes become U+FFFD, as its invalid UTF-8 does: a result
        // holding NUL can not be stored (PostgreSQL's jsonb), so it would fail a
        // command that succeeded.
        let output = String::from_utf8_lossy(&run.output).replace('\0', "\u{FFFD}");
        match run.ended {
            Ended::Exited(0) => Ok(Some(json!({ "exitCode": 0, "output": output }))),
            Ended::Exited(code) => Err(failure(format!("exit code {code}"), Some(code), None, output)),
            Ended::NotStarted(why) => {
                Err(failure(format!("could not start {}: {why}", invocation.program()), None, Some(&why), output))
            }
            Ended::TimedOut => {
                let after = format!("timed out after {}", humantime::format_duration(job.timeout.unwrap_or_default()));
                Err(failure(after.clone(), None, Some(&after), output))
            }
            // The claim was lost or lapsed and the command ended for it: no
            // outcome, nothing is written (the job is somebody else's, or
            // comes back once its lease is stale).
            Ended::Stopped if signal.is_aborted() => Err(signal.check().expect_err("aborted").into()),
            Ended::Stopped => {
                let why = "stopped by a second interrupt";
                Err(failure(why.to_owned(), None, Some(why), output))
            }
            // The guard ended the command at the lease's exit deadline while
            // this worker could not (stopped, starved, cut off), whether or
            // not its signal has fired since (it has, once the worker runs
            // again past the deadline). A failure, fenced like any: refused
            // if another worker took the job over.
            Ended::Lapsed => {
                let why = "the lease's exit deadline passed with no renewal confirmed (the worker was stopped or \
                           starved): the command's guard ended it";
                Err(failure(why.to_owned(), None, Some(why), output))
            }
        }
    }
}
