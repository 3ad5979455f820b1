//! The command line: every command, option and default, as clap derives it.

use clap::{Args, Parser, Subcommand};
use leasehold::store::JobState;
use std::path::PathBuf;
use std::time::Duration;

/// How a queued line is executed, shown in `--help`.
const EXECUTION_RULE: &str = "\
How a job runs: each job is one command line. A line with none of the shell's special characters \
(| & ; < > ( ) $ ` \\ \" ' * ? [ ] # ~ { } =) is split on white space and executed directly; \
any other line runs as `sh -c LINE`. The command's exit code decides: 0 is done, anything else \
fails the attempt, which is retried with exponential backoff (1 s, 2 s, 4 s, …) until \
--max-attempts, then dead-lettered; an attempt counts when it is claimed, so one lost with its \
worker counts too. When a worker's lease renewal answers that the claim was lost (or the lease \
lapses, or --timeout passes), the command's process group gets SIGTERM and, after --grace, \
SIGKILL; its outcome is not recorded. Processes a command leaves in its group when it exits are \
stopped the same way. Each command runs under a small guard process of this tool that leads its \
group: a worker killed with SIGKILL takes its commands, and everything they started in their \
process group, with it (a daemon that left the group with setsid is its own); and a worker that \
is stopped (SIGSTOP), starved or cut off from the database past its lease has its commands ended \
by their guards (SIGTERM, then SIGKILL after --grace) before another worker may reclaim them.";

/// leasehold: a durable command queue. Commands wait in a database (a SQLite file by
/// default, PostgreSQL to share one queue between machines) and are worked under leased,
/// heartbeated, fenced claims, so every job finishes even when a worker crashes.
#[derive(Debug, Parser)]
#[command(name = "leasehold", version, after_long_help = EXECUTION_RULE, after_help = EXECUTION_RULE)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// Where the queue lives: sqlite://PATH or postgres://USER@HOST/DB. A SQLite file that does
    /// not exist yet is created, in a folder that must exist, by run, enqueue, work and schedule
    /// add only; every other command (ui included) refuses it rather than show an empty queue.
    #[arg(long, global = true, env = "LEASEHOLD_DATABASE_URL", default_value = "sqlite://leasehold.db")]
    pub database: String,
    /// For run and work: a claim whose lease has not been renewed for this long may be reclaimed
    /// by another worker (e.g. 30s, 2m).
    #[arg(long, global = true, help_heading = "Options some commands read (each says which)", default_value = "30s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub stale_after: Duration,
    /// For run and work: how often a worker renews the leases it holds (default: a third of
    /// --stale-after, at least 250ms).
    #[arg(long, global = true, help_heading = "Options some commands read (each says which)", value_parser = parse_duration, allow_hyphen_values = true)]
    pub heartbeat_every: Option<Duration>,
    /// For run, work and events: the workers' event log folder (default: DATABASE-FILE.events
    /// next to a SQLite file, ./leasehold.events otherwise).
    #[arg(long, global = true, help_heading = "Options some commands read (each says which)")]
    pub events: Option<PathBuf>,
    /// For enqueue, run and work: export OpenTelemetry spans (enqueues, claims, commands,
    /// settles; messaging conventions) over OTLP/HTTP to this collector, e.g. http://localhost:4318 (sent to
    /// its /v1/traces). OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    /// turns the export on too; without either, nothing is exported. The command ends once the
    /// collector has its last spans, waiting at most OTEL_EXPORTER_OTLP_TIMEOUT (ms, default
    /// 10000) plus 1 s.
    #[arg(long, global = true, help_heading = "Options some commands read (each says which)", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Queue one job per non-empty line of FILE (or standard input; `#` starts a comment line),
    /// work the queue until those jobs are done or dead-lettered, and print a summary. Exits 1
    /// if any job was dead-lettered.
    Run(RunArgs),
    /// Queue one command and print its job id.
    Enqueue(EnqueueArgs),
    /// Work a queue until interrupted (or, with --until-empty, until nothing is queued or
    /// running). The first Ctrl-C (SIGINT or SIGTERM) stops claiming and lets the running
    /// commands finish; a second one ends them (their attempts fail and are retried later).
    /// A command that finished is never given up on: while the database cannot record its
    /// outcome, `work` waits for it, whatever the interrupts. Exits 0 once stopped either way.
    Work(WorkArgs),
    /// Jobs per queue and state, as the dashboard counts them: queued (due, never tried),
    /// scheduled (not due yet), retrying (due again after a failed attempt), running,
    /// succeeded, dead, cancelled; and since when a paused queue is paused.
    Status,
    /// A table of jobs, newest first.
    Jobs(JobsArgs),
    /// One job: its command, state and every attempt with its owner, exit code and output.
    Show(ShowArgs),
    /// Each attempt's settlement by job id (done, retrying, dead-lettered, lost to another
    /// worker, handed back unstarted), as the database recorded it, deleted jobs' too until
    /// `purge`; and the runners' passes and failures from the workers' event logs.
    Events(EventsArgs),
    /// Delete the jobs that succeeded (with --dead, the dead-lettered ones too) more than
    /// --older-than ago, of every queue or of --queue, with their attempts and output, and
    /// the settlements `events` lists that are as old, and the records of workers not seen for
    /// as long; print how many. Queued and running jobs are never touched.
    Purge(PurgeArgs),
    /// Periodic and cron jobs: `schedule add NAME --every 5m -- COMMAND` or `--cron "0 3 * * *"
    /// [--tz Europe/Berlin]`; `schedule list`, `remove`, `pause`, `resume`. Every `work` of the
    /// schedule's queue enqueues its slots, each once across every worker.
    Schedule(crate::schedule::ScheduleArgs),
    /// Cancel jobs: `cancel ID… [--reason R]`, or `cancel --queue Q --state queued|running`
    /// (asks first; --yes does not). A running job's command is stopped as on a lost lease and
    /// nothing of its attempt is kept; a cancelled job is never retried unless asked.
    Cancel(crate::steer::CancelArgs),
    /// Queue dead-lettered or cancelled jobs again, due now (one cancelled while it ran: once
    /// that attempt's lease would have gone stale, and it says when that is), with a fresh
    /// attempt budget (their earlier attempts stay in `show`): `retry ID…`, or `retry --dead
    /// [--queue Q]`.
    Retry(crate::steer::RetryArgs),
    /// Stop claiming a queue's jobs (within one poll) until `resume`; running jobs finish, and
    /// jobs can still be queued. A queue paused already is left as it is (said so; exits 0).
    Pause(crate::steer::QueueArg),
    /// Claim a paused queue's jobs again. A queue not paused is left as it is (said so; exits 0).
    Resume(crate::steer::QueueArg),
    /// Serve a dashboard of the queue in a web browser: counts by state, the last hour's
    /// throughput and latency, workers, lease health, jobs with filters, each job's attempts
    /// and output, updated live; cancel, retry, pause and resume buttons (not with
    /// --read-only). Listens on 127.0.0.1:8080 by default; another address needs --token.
    Ui(crate::ui::UiArgs),
}

/// Options of the jobs a command queues.
#[derive(Debug, Args)]
pub struct JobOptions {
    /// The queue.
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// Attempts a job may have in all; a failure on the last one dead-letters it.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64), allow_hyphen_values = true)]
    pub max_attempts: u32,
    /// How long one attempt may run before its command is stopped and the attempt fails
    /// (e.g. 10m).
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,
}

/// Options of a worker.
#[derive(Debug, Args)]
pub struct WorkerOptions {
    /// Commands run at once (1 to 64; default: the number of CPUs).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64), allow_hyphen_values = true)]
    pub concurrency: Option<u32>,
    /// How long a stopped command gets between SIGTERM and SIGKILL (default: 5s, or less when
    /// that does not fit in --stale-after). The command must be dead before another worker may
    /// reclaim its job, so the grace comes out of the time a worker keeps working through
    /// failing renewals; a --grace that does not fit is refused.
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub grace: Option<Duration>,
}

/// `leasehold run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The jobs file, one command line per line; `-` or nothing for standard input.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub job: JobOptions,
    #[command(flatten)]
    pub worker: WorkerOptions,
}

/// `leasehold enqueue`.
#[derive(Debug, Args)]
pub struct EnqueueArgs {
    #[command(flatten)]
    pub job: JobOptions,
    /// When the job becomes due: an RFC 3339 time (2030-01-01T09:00:00Z, or with an offset
    /// from UTC: 2030-01-01T11:00:00+02:00; a time with neither is read as UTC, not as this
    /// machine's local time) or a duration from now (30s, 5m).
    #[arg(long, allow_hyphen_values = true)]
    pub at: Option<String>,
    /// At most one job per queue and key: queueing the same key again prints the first job's
    /// id and queues nothing (saying so on stderr when that job runs another command), for as
    /// long as that job is kept (once it is purged, or deleted by `work --delete-succeeded`,
    /// the key queues a new job).
    #[arg(long)]
    pub idempotency_key: Option<String>,
    /// The command line, after `--` (required, so a mistyped option is never
    /// queued as a command).
    #[arg(required = true, last = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// `leasehold work`.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// The queue.
    #[arg(long, default_value = "default")]
    pub queue: String,
    #[command(flatten)]
    pub worker: WorkerOptions,
    /// Exit (code 0) once the queue has no queued or running jobs, whatever
    /// the jobs' outcomes: `leasehold jobs --state dead` lists the ones that
    /// were dead-lettered (`run` is the command that exits 1 for those). Jobs
    /// due later count as queued: one scheduled for later (`enqueue --at`) or
    /// waiting for its retry keeps `work` running until it has run, and a
    /// schedule of the queue queues its slots meanwhile.
    #[arg(long)]
    pub until_empty: bool,
    /// Delete each job that succeeds, with its attempts and output, instead
    /// of keeping it for `status`, `jobs` and `show` (`events` still lists
    /// its settlement). Less for the database to write per job; failed and
    /// dead-lettered jobs are kept either way.
    #[arg(long)]
    pub delete_succeeded: bool,
    /// Serve this worker's metrics at http://ADDR/metrics in the Prometheus text format:
    /// how long its claims, commands and renewals take (histograms), and what it counted
    /// (claimed, succeeded, failed, dead-lettered, renewals, lapses, losses, steals), by
    /// queue. E.g. 127.0.0.1:9187 (port 0: any free port, said on stderr).
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub metrics: Option<std::net::SocketAddr>,
}

/// `leasehold jobs`.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// Only jobs in this state: queued (which lists the scheduled and retrying jobs too: the
    /// state column tells them apart as `status` counts them), running, succeeded, dead or
    /// cancelled.
    #[arg(long, value_parser = parse_state)]
    pub state: Option<JobState>,
    /// Only jobs of this queue.
    #[arg(long)]
    pub queue: Option<String>,
    /// At most this many rows (the newest).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000), allow_hyphen_values = true)]
    pub limit: u32,
}

/// `leasehold purge`.
#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// Keep the jobs that finished less than this long ago (e.g. 7d, 12h; 0s purges every
    /// finished job).
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub older_than: Duration,
    /// Purge dead-lettered jobs too (without it they are kept for inspection).
    #[arg(long)]
    pub dead: bool,
    /// Only jobs of this queue (without it, of every queue).
    #[arg(long)]
    pub queue: Option<String>,
}

/// `leasehold show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The job id (as `enqueue` printed it).
    #[arg(value_name = "JOB_ID", value_parser = parse_job_id)]
    pub id: i64,
}

/// `leasehold events`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Keep printing events as the database records settlements and workers log them.
    #[arg(long)]
    pub follow: bool,
    /// One JSON object per line instead of text, with the runners' per-item trace too.
    #[arg(long)]
    pub json: bool,
}

/// A humantime duration (`30s`, `1m 30s`, `250ms`), naming the mistake.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    if text.trim_start().starts_with('-') {
        return Err(format!("{text:?} is negative: a duration is 0 or more, like 30s or 5m"));
    }
    humantime::parse_duration(text).map_err(|e| format!("{text:?} is not a duration like 30s or 5m ({e})"))
}

/// An address to listen on: an IP address and port (`127.0.0.1:8080`,
/// `[::1]:8080`, `0.0.0.0:8080`), or `localhost:PORT` for 127.0.0.1 (a host
/// name is not looked up: where a server listens must not depend on DNS).
pub fn parse_address(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => port
            .parse::<u16>()
            .map(|port| std::net::SocketAddr::from(([127, 0, 0, 1], port)))
            .map_err(|_| format!("{port:?} is not a port (0 to 65535)")),
        _ => Err(format!("{text:?} is not an address and port like 127.0.0.1:8080, [::1]:8080 or localhost:8080")),
    }
}

/// A job id: a whole number from 1 (ids are the database's row ids), naming
/// the mistake in words rather than as the integer parser's ("invalid digit
/// found in string").
pub fn parse_job_id(text: &str) -> Result<i64, String> {
    const EXPECTED: &str = "a job id is a whole number from 1, as `leasehold enqueue` and `leasehold jobs` show it";
    match text.trim().parse::<i64>() {
        Ok(id) if id >= 1 => Ok(id),
        Ok(_) => Err(format!("{text:?} is not a job id: {EXPECTED}")),
        Err(_) if !text.trim().is_empty() && text.trim().bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("{text:?} is too large for a job id (at most {})", i64::MAX))
        }
        Err(_) => Err(format!("{text:?} is not a job id: {EXPECTED}")),
    }
}

fn parse_state(text: &str) -> Result<JobState, String> {
    JobState::parse(text).ok_or_else(|| match text {
        // States `status` and the state column show, which --state takes as queued.
        "scheduled" | "retrying" => format!(
            "{text:?} is listed with --state queued, which lists the scheduled and retrying jobs too (the state \
             column tells them apart); --state takes queued, running, succeeded, dead or cancelled"
        ),
        _ => format!("{text:?} is not a state: queued (scheduled and retrying included), running, succeeded, dead or cancelled"),
    })
}
