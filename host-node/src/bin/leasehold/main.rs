//! `leasehold`: a durable command queue. Command lines wait in a
//! database and are worked by leased, heartbeated, fenced claims; see
//! `leasehold --help`, and `exec` for how one command runs.
//!
//! Every failure ends in one line on stderr and exit code 2 (`fail`); `run`
//! exits 1 when a job was dead-lettered and 130 when interrupted.
//!
//! Nothing here prints with `println!` or `eprintln!`, which panic when
//! their stream cannot be written (a pipe whose reader went away: a log
//! collector that stopped, `| head`): `outln!` and `errln!` write the same
//! line and drop it then, and the work goes on.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `println!` that never panics: a line to stdout, dropped when stdout
/// cannot be written (a closed pipe: EPIPE).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` that never panics: a line to stderr, dropped when stderr
/// cannot be written (a closed pipe: EPIPE).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod channel;
mod enqueue;
mod events;
mod exec;
mod fail;
mod guard;
mod handler;
mod inspect;
mod otlp;
mod pool;
mod purge;
mod run;
mod schedule;
mod serve_metrics;
mod sqlite_file;
mod steer;
mod ui;

use args::{Cli, Command, Global, RunArgs, WorkArgs};
use clap::Parser;
use fail::{CliError, EXIT_ERROR};
use leasehold::liveness::SameHostPidProbe;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{OnSuccess, Store, StoreConfig, StoreError};
use pool::{Interrupts, Pool, PoolConfig};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

fn main() -> ExitCode {
    // A command's guard, started by a worker: before clap, so the command's
    // own arguments are never parsed as ours.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == guard::GUARD_ARG) {
        return guard::main(&args[2..]);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version go to stdout as clap renders them.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // One line: clap's message with what it lists under it (the
            // missing arguments, its tip), without the usage.
            let text = e.to_string();
            let said: Vec<&str> = text
                .lines()
                .take_while(|line| !line.starts_with("Usage:"))
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
                .collect();
            let said = said.join(" ");
            let command = subcommand_of(&args);
            let hint = command_after_dashes(&e, &command, &args);
            let help = if command.is_empty() { "leasehold --help".to_owned() } else { format!("leasehold {command} --help") };
            errln!("leasehold: {}{hint} (see {help})", said.trim_start_matches("error: "));
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let exporting = match init_logging(cli.global.otlp_endpoint.as_deref()) {
        Ok(exporting) => exporting,
        Err(e) => return e.report(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return CliError::input(format!("cannot start the async runtime: {e}")).report(),
    };
    let outcome = runtime.block_on(dispatch(cli));
    // Background tasks (a PostgreSQL LISTEN connection, the pump) are not
    // waited for: the jobs are settled in the database by now.
    runtime.shutdown_timeout(Duration::from_secs(1));
    // The spans still in the batch go out now; the command ends once the
    // collector answered (or the export's timeout passed).
    if let Some(exporting) = exporting {
        exporting.finish();
    }
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => e.report(),
    }
}

/// The subcommand `args` name (`enqueue`, `schedule add`), as far as they name
/// one: the first word that is a command's name, and the next one when that
/// command has commands of its own. Empty when they name none.
fn subcommand_of(args: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let mut command = Cli::command();
    let mut path = Vec::new();
    for arg in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if arg == "--" {
            break;
        }
        let Some(sub) = command.find_subcommand(arg).cloned() else { continue };
        path.push(sub.get_name().to_owned());
        if sub.has_subcommands() {
            command = sub;
        } else {
            break;
        }
    }
    path.join(" ")
}

/// What to add to clap's refusal of a word given to `enqueue` or `schedule
/// add` without `--` before the command: that the command goes after it.
fn command_after_dashes(error: &clap::Error, command: &str, args: &[std::ffi::OsString]) -> String {
    let takes_a_command = matches!(command, "enqueue" | "schedule add");
    if takes_a_command && error.kind() == clap::error::ErrorKind::UnknownArgument && !args.iter().any(|a| a == "--") {
        format!("; the command to queue goes after `--`: leasehold {command} [OPTIONS] -- COMMAND…")
    } else {
        String::new()
    }
}

/// Logs go to stderr; `LEASEHOLD_LOG` (a tracing filter) chooses how much.
/// By default warnings, except the event log's and pump's, which say theirs
/// on stderr themselves, and sqlx's slow-statement and slow-acquire ones: a
/// lock or an outage makes every statement slow, and each warning is the
/// whole SQL text; a statement that fails comes back as an error, which the
/// commands report themselves; and the OpenTelemetry span events (a lost
/// lease), which only the OTLP export (`otlp_endpoint`, see [`otlp`]) is
/// for. Answers the export, to finish at the end.
fn init_logging(otlp_endpoint: Option<&str>) -> Result<Option<otlp::Exporting>, CliError> {
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::EnvFilter::try_from_env("LEASEHOLD_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(
            "warn,leasehold::eventlog=error,leasehold::pump=error,leasehold::otel=off,sqlx::query=error,sqlx::pool::acquire=error",
        )
    });
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(filter);
    let (spans, exporting) = match otlp::layer(otlp_endpoint)? {
        Some((layer, exporting)) => (Some(layer), Some(exporting)),
        None => (None, None),
    };
    let _ = tracing_subscriber::registry().with(logs).with(spans).try_init();
    Ok(exporting)
}

/// The default concurrency: the machine's CPUs, at most 64.
pub fn default_concurrency() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(64) as u32)
}

/// Connects to the queue: the same-host pid probe refuses to reclaim a stale
/// lease whose owner process is still alive on this host (never hastens one).
async fn connect(global: &Global) -> Result<Store, CliError> {
    refuse_in_memory(&global.database)?;
    Ok(open(global, OnSuccess::Keep).await?)
}

/// Each command is its own process: an in-memory database would be gone
/// (with whatever was queued in it) the moment the command exits.
fn refuse_in_memory(url: &str) -> Result<(), CliError> {
    if url.starts_with("sqlite:") && (events::sqlite_file(url).is_none() || url.contains("mode=memory")) {
        return Err(CliError::input(format!(
            "{url} is an in-memory SQLite database, gone when this command exits: give a file (sqlite://FILE)"
        )));
    }
    Ok(())
}

async fn open(global: &Global, on_success: OnSuccess) -> Result<Store, StoreError> {
    let config = StoreConfig::default()
        .with_liveness(Arc::new(SameHostPidProbe::new()))
        .with_on_success(on_success);
    Store::connect_with(&global.database, config).await
}

/// Read-only commands never create a database: a mistyped SQLite path is an
/// error, not an empty queue.
fn refuse_missing_sqlite_file(url: &str) -> Result<(), CliError> {
    match events::sqlite_file(url) {
        Some(path) if !path.exists() => {
            Err(CliError::input(format!("no database at {} (nothing has been queued there yet)", path.display())))
        }
        _ => Ok(()),
    }
}

async fn dispatch(cli: Cli) -> Result<u8, CliError> {
    let global = &cli.global;
    sqlite_file::check(&global.database).await?;
    if let Command::Ui(args) = &cli.command {
        return ui::run(global, args).await;
    }
    let events = events::folder(&global.database, global.events.as_deref());
    if let Command::Schedule(args) = &cli.command {
        match &args.action {
            // Before connecting: a refused schedule must not leave a new database behind.
            schedule::Action::Add(add) => drop(schedule::spec(add)?),
            _ => refuse_missing_sqlite_file(&global.database)?,
        }
    }
    if matches!(
        cli.command,
        Command::Status
            | Command::Jobs(_)
            | Command::Show(_)
            | Command::Events(_)
            | Command::Purge(_)
            | Command::Cancel(_)
            | Command::Retry(_)
            | Command::Pause(_)
            | Command::Resume(_)
    ) {
        refuse_missing_sqlite_file(&global.database)?;
    }
    if let Command::Work(WorkArgs { worker, .. }) | Command::Run(RunArgs { worker, .. }) = &cli.command {
        // Before connecting: a refused set must not leave a new database behind.
        pool::check_timings(global.stale_after, global.heartbeat_every, worker.grace).map_err(|e| match cli.command {
            Command::Run(_) => e.noting(" (nothing was queued)"),
            _ => e,
        })?;
    }
    if let Command::Work(args) = &cli.command {
        let mut interrupts = Interrupts::listen()?;
        let on_success = if args.delete_succeeded { OnSuccess::Delete } else { OnSuccess::Keep };
        let Some(store) = connect_waiting(global, on_success, &mut interrupts).await? else {
            errln!("leasehold: stopping: the database was not reached, nothing was claimed");
            return Ok(fail::EXIT_INTERRUPTED);
        };
        work(&store, global, args, &events, &mut interrupts).await?;
        drop(store);
        return Ok(0);
    }
    let store = if matches!(cli.command, Command::Status | Command::Jobs(_) | Command::Show(_) | Command::Events(_)) {
        refuse_in_memory(&global.database)?;
        inspect::connect_read_only(&global.database).await?
    } else {
        connect(global).await?
    };
    let code = match &cli.command {
        Command::Run(args) => run::run(&store, global, args, &events).await?,
        Command::Enqueue(args) => enqueue::enqueue(&store, args).await.map(|()| 0)?,
        Command::Work(_) | Command::Ui(_) => unreachable!("answered above"),
        Command::Status => inspect::status(&store).await.map(|()| 0)?,
        Command::Jobs(args) => inspect::jobs(&store, args.queue.as_deref(), args.state, args.limit).await.map(|()| 0)?,
        Command::Show(args) => inspect::show(&store, args.id).await.map(|()| 0)?,
        Command::Events(args) => events::show(&store, &events, args.follow, args.json).await.map(|()| 0)?,
        Command::Purge(args) => purge::purge(&store, args).await.map(|()| 0)?,
        Command::Schedule(args) => schedule::run(&store, args).await.map(|()| 0)?,
        Command::Cancel(args) => steer::cancel(&store, args).await.map(|()| 0)?,
        Command::Retry(args) => steer::retry(&store, args).await.map(|()| 0)?,
        Command::Pause(args) => steer::pause(&store, args).await.map(|()| 0)?,
        Command::Resume(args) => steer::resume(&store, args).await.map(|()| 0)?,
    };
    // No `store.close()`: it waits for every connection checked out of the
    // pool to come back, and the process ends here anyway; dropping the
    // store closes them (and ends PostgreSQL's LISTEN connection).
    drop(store);
    Ok(code)
}

/// The first wait, in ms, before `work` tries an unreachable PostgreSQL
/// server again; it doubles up to the core's recovery cap, so a server that
/// comes back is answered within 2 s.
const CONNECT_RETRY_FIRST_MS: f64 = 500.0;

/// [`connect`] for `work`: a PostgreSQL server that cannot be reached yet
/// (a worker started before its database, or during a restart) is tried
/// again with backoff until it answers, said once on stderr. `None` when interrupted meanwhile (also
/// during a try). A SQLite file that cannot be opened, and a server that
/// answers with an error ([`may_answer_later`]), are errors at once.
async fn connect_waiting(
    global: &Global,
    on_success: OnSuccess,
    interrupts: &mut Interrupts,
) -> Result<Option<Store>, CliError> {
    refuse_in_memory(&global.database)?;
    // A worker may well start before anything is queued, so a missing SQLite
    // file is created; but a mistyped path would then wait on an empty queue
    // in silence. Said once it was created: one that could not be is refused.
    let creates = events::sqlite_file(&global.database)
        .filter(|p| !p.exists() && p.parent().is_none_or(|folder| folder.as_os_str().is_empty() || folder.is_dir()));
    let backoff = leasehold::core::recovery_backoff(CONNECT_RETRY_FIRST_MS);
    let mut failures = 0u32;
    let mut said = false;
    loop {
        let tried = tokio::select! {
            tried = open(global, on_success) => tried,
            () = interrupts.next() => return Ok(None),
        };
        match tried {
            Err(e) if global.database.starts_with("postgres") && may_answer_later(&e) => {
                if !std::mem::replace(&mut said, true) {
                    errln!("leasehold: {e}; trying again until it answers (Ctrl-C stops)");
                }
            }
            Ok(store) => {
                if said {
                    errln!("leasehold: the database answers; working");
                }
                if let Some(path) = &creates {
                    errln!("leasehold: no database at {} yet: created it (an empty queue)", path.display());
                }
                return Ok(Some(store));
            }
            Err(e) => return Err(e.into()),
        }
        failures = failures.saturating_add(1);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(backoff.delay_after(failures))) => {}
            () = interrupts.next() => return Ok(None),
        }
    }
}

/// Whether a failed connect is one a server may answer later: refused, no
/// socket, no answer in time, a server starting up, shutting down or in
/// recovery (SQLSTATE 57P03), or out of connection slots (53300). A bad URL,
/// a wrong password, a database or role that does not exist are errors at
/// once: waiting would not mend them.
fn may_answer_later(error: &StoreError) -> bool {
    let StoreError::Unreachable { source, .. } = error else { return false };
    match source {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => matches!(db.code().as_deref(), Some("57P03" | "53300")),
        _ => false,
    }
}

/// How often `work --until-empty` checks whether its queue is empty.
const EMPTY_POLL: Duration = Duration::from_millis(250);

/// `leasehold work`: until interrupted (or empty), then drain.
async fn work(
    store: &Store,
    global: &Global,
    args: &WorkArgs,
    events: &std::path::Path,
    interrupts: &mut Interrupts,
) -> Result<(), CliError> {
    let metrics = args.metrics.map(|addr| (addr, leasehold::metrics::WorkerMetrics::new()));
    let server = match &metrics {
        Some((addr, metrics)) => Some(serve_metrics::serve(*addr, metrics.clone()).await?),
        None => None,
    };
    let concurrency = args.worker.concurrency.unwrap_or_else(default_concurrency);
    let pool = Pool::start(store, PoolConfig {
        queue: &args.queue,
        concurrency,
        grace: args.worker.grace,
        stale_after: global.stale_after,
        heartbeat_every: global.heartbeat_every,
        events,
        metrics: metrics.as_ref().map(|(_, metrics)| metrics),
    })
    .await?;
    // The queue's schedules: enqueued by this worker (and every other one),
    // each slot once. Stopped with the claims; a round cut short rolls back.
    let schedules = tokio::spawn(leasehold::schedule::drive(store.clone(), args.queue.clone()));
    // Said once, so that a worker started in a terminal is seen to work (it prints nothing per
    // job).
    let ends = if args.until_empty { "when the queue is empty, or at Ctrl-C" } else { "at Ctrl-C" };
    errln!(
        "leasehold: working queue {}, {concurrency} command{} at a time; stops claiming {ends} (`leasehold status` and `jobs` show the queue)",
        args.queue,
        if concurrency == 1 { "" } else { "s" }
    );
    let until_empty = async {
        if !args.until_empty {
            return std::future::pending().await;
        }
        // Said once per outage, not at every poll.
        let mut failing = false;
        loop {
            tokio::time::sleep(EMPTY_POLL).await;
            match store.counts(TokioClock::new().now()).await {
                Ok(counts) => {
                    if std::mem::take(&mut failing) {
                        tracing::info!("the queue's counts can be read again");
                    }
                    let left = counts.iter().find(|c| c.queue == args.queue).map_or(0, |c| c.waiting() + c.running);
                    if left == 0 {
                        return;
                    }
                }
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!("cannot read the queue's counts (said once until they can be read again): {e}");
                }
                Err(_) => {}
            }
        }
    };
    tokio::select! {
        () = until_empty => {}
        () = interrupts.next() => {
            errln!("leasehold: stopping: no more claims; finishing the running commands (Ctrl-C again ends them)");
        }
    }
    schedules.abort();
    pool.drain(interrupts).await;
    if let Some(server) = server {
        server.abort();
    }
    Ok(())
}
