//! `leasehold schedule`: periodic and cron jobs (add, list, remove, pause,
//! resume). `work` drives them (see `leasehold::schedule::drive`).

use crate::args::{JobOptions, parse_duration};
use crate::enqueue::command_line;
use crate::fail::CliError;
use crate::handler::payload;
use crate::inspect::{table, time};
use clap::{Args, Subcommand, ValueEnum};
use leasehold::core::Millis;
use leasehold::core::schedule::{CatchUp, Overlap};
use leasehold::runner::{Clock, TokioClock};
use leasehold::schedule::Cadence;
use leasehold::store::{LastRun, ScheduleRecord, ScheduleSpec, Store};
use std::time::Duration;

/// How `--every`, `--cron`, `--tz` and the policies read, shown in `--help`.
const SCHEDULE_RULES: &str = "\
Slots: a schedule's jobs are due at its slots. --every D fires at whole multiples of D since \
1970-01-01T00:00:00Z (every 5m at :00, :05, …; every 1h on the hour), D from 1s to 366d. --cron \
takes five fields (minute hour day-of-month month day-of-week), six with seconds first, seven \
with seconds first and a year last, or a nickname (@hourly, @daily, @weekly, @monthly, @yearly), on the wall clock of --tz (an IANA zone \
such as Europe/Berlin; default UTC).

Daylight saving time: a fixed time that does not exist that day (02:30 when clocks jump from \
02:00 to 03:00) runs once at the first instant after the jump (03:00); a fixed time that happens \
twice (clocks falling back) runs once, at the first of the two; an expression with * or a step in \
its seconds, minutes or hours runs at every real instant that matches (none in the skipped hour, \
both in the repeated one).

Who enqueues: every `leasehold work` of the schedule's queue (it looks about once a second); \
with any number of workers on any number of machines each slot is enqueued once, due at its \
slot. Missed slots (no worker was running when they fell due), --catch-up: one (default) \
enqueues the latest missed slot only, one catch-up run; all enqueues every missed slot; none \
looks at the latest due slot only and enqueues it when a worker sees it within 10s of its time \
(any earlier due slot is skipped, however recent). --no-overlap \
skips a slot while the schedule's previous job is still queued or running. A paused schedule \
skips its slots; resume starts from the next slot after the resume.

Each job is queued as `enqueue` queues one: --queue (default: default), --max-attempts \
(default 3), --timeout (per attempt, e.g. 10m).";

/// `leasehold schedule`.
#[derive(Debug, Args)]
#[command(after_help = SCHEDULE_RULES, after_long_help = SCHEDULE_RULES)]
pub struct ScheduleArgs {
    #[command(subcommand)]
    pub action: Action,
}

/// The schedule commands.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Add a schedule: the command after `--` is queued at every slot of --every or --cron.
    #[command(after_help = SCHEDULE_RULES, after_long_help = SCHEDULE_RULES)]
    Add(AddArgs),
    /// Every schedule: its cadence, next run, last run and that run's outcome.
    List,
    /// Remove a schedule (the jobs it queued stay).
    Remove(NameArg),
    /// Stop queueing a schedule's slots until it is resumed.
    Pause(NameArg),
    /// Queue a paused schedule's slots again, from the next slot after now.
    Resume(NameArg),
}

/// A schedule's name.
#[derive(Debug, Args)]
pub struct NameArg {
    /// The schedule's name.
    pub name: String,
}

/// Missed slots, as `--catch-up` spells them.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CatchUpArg {
    /// The latest missed slot only: one catch-up run.
    One,
    /// Every missed slot.
    All,
    /// No missed slot.
    None,
}

/// `leasehold schedule add`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("cadence").required(true).multiple(false))]
pub struct AddArgs {
    /// The schedule's name: 1 to 128 characters of A-Z a-z 0-9 _ - . : (unique).
    pub name: String,
    /// A slot every this long (1s to 366d, e.g. 30s, 5m, 1h, 1d), at whole multiples of it
    /// since 1970-01-01T00:00:00Z.
    #[arg(long, value_parser = parse_duration, group = "cadence", allow_hyphen_values = true)]
    pub every: Option<Duration>,
    /// A cron expression, e.g. "0 3 * * *" (03:00 every day) or "*/15 * * * *"; see below.
    #[arg(long, group = "cadence")]
    pub cron: Option<String>,
    /// The time zone of --cron's wall clock: an IANA name such as Europe/Berlin (default UTC).
    // `requires = "cron"` alone lets `--every` through: clap counts any member of the
    // `cadence` group as the required one, so the conflict is spelled out too.
    #[arg(long, requires = "cron", conflicts_with = "every")]
    pub tz: Option<String>,
    #[command(flatten)]
    pub job: JobOptions,
    /// Slots missed while no worker ran: one (the latest, once), all, or none (only the latest
    /// due slot, and only when seen within 10s of its time).
    #[arg(long, value_enum, default_value = "one")]
    pub catch_up: CatchUpArg,
    /// Skip a slot while the schedule's previous job is still queued or running (by default
    /// it is queued anyway).
    #[arg(long)]
    pub no_overlap: bool,
    /// The command line, after `--`.
    #[arg(required = true, last = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// The schedule `args` asks for, checked before anything is opened: a bad
/// cadence, name or command never creates a database.
pub fn spec(args: &AddArgs) -> Result<ScheduleSpec, CliError> {
    let line = command_line(&args.command);
    if line.trim().is_empty() {
        return Err(CliError::input("the command is empty"));
    }
    crate::exec::check_argument_sizes(&line).map_err(|e| CliError::input(format!("{e}; no schedule was added")))?;
    let cadence = match (&args.every, &args.cron) {
        (Some(every), None) => Cadence::Every(*every),
        (None, Some(cron)) => Cadence::cron(cron, args.tz.as_deref()),
        _ => return Err(CliError::input("give --every or --cron")),
    };
    cadence.first_slot_after(TokioClock::new().now()).map_err(crate::fail::in_flags)?;
    leasehold::store::validate::name_rule(&args.name)
        .map_err(|rule| CliError::input(format!("schedule name {:?}: {rule}", args.name)))?;
    leasehold::store::validate::queue_name(&args.job.queue)?;
    Ok(ScheduleSpec {
        max_attempts: args.job.max_attempts,
        timeout: args.job.timeout,
        catch_up: match args.catch_up {
            CatchUpArg::One => CatchUp::One,
            CatchUpArg::All => CatchUp::All,
            CatchUpArg::None => CatchUp::None,
        },
        overlap: if args.no_overlap { Overlap::Skip } else { Overlap::Allow },
        ..ScheduleSpec::new(&args.name, &args.job.queue, cadence, payload(&line))
    })
}

/// Runs one `schedule` command.
pub async fn run(store: &Store, args: &ScheduleArgs) -> Result<(), CliError> {
    let now = TokioClock::new().now();
    match &args.action {
        Action::Add(add) => {
            let added = store.add_schedule(&spec(add)?, now).await.map_err(crate::fail::in_flags)?;
            let next = added.next_slot.map_or_else(|| "never".to_owned(), time);
            outln!("added schedule {} ({}), next run {next}", added.spec.name, added.spec.cadence);
        }
        Action::List => list(store, now).await?,
        Action::Remove(NameArg { name }) => {
            store.remove_schedule(name).await?;
            outln!("removed schedule {name} (the jobs it queued stay)");
        }
        Action::Pause(NameArg { name }) => {
            let said = if store.pause_schedule(name, now).await? { "paused" } else { "was paused already" };
            outln!("schedule {name} {said}");
        }
        Action::Resume(NameArg { name }) => {
            let said = if store.resume_schedule(name, now).await? { "resumed" } else { "was not paused" };
            outln!("schedule {name} {said}");
        }
    }
    Ok(())
}

/// `leasehold schedule list`.
async fn list(store: &Store, now: Millis) -> Result<(), CliError> {
    let schedules = store.schedules().await?;
    if schedules.is_empty() {
        outln!("no schedules");
        return Ok(());
    }
    let mut t = table(&["name", "queue", "when", "next run", "last run", "last outcome", "policy", "command"]);
    for s in &schedules {
        t.add_row(vec![
            s.spec.name.clone(),
            s.spec.queue.clone(),
            s.spec.cadence.to_string(),
            next_run(s, now),
            s.last_run.map_or_else(|| "never".to_owned(), |last| time(last.slot)),
            s.last_run.map_or_else(String::new, |last| outcome(&last)),
            policy(s),
            crate::inspect::payload_command(&s.spec.payload),
        ]);
    }
    crate::fail::print(&format!("{t}\n"));
    Ok(())
}

/// How long past its time a next run is shown as overdue: no worker of its
/// queue has looked since (they look about once a second).
const OVERDUE_AFTER_MS: u64 = 10_000;

/// Whether `s` is active and its next run is more than
/// [`OVERDUE_AFTER_MS`] past at `now`: no worker of its queue is running.
pub fn overdue(s: &ScheduleRecord, now: Millis) -> bool {
    s.paused_at.is_none() && s.next_slot.is_some_and(|next| now.since(next) > OVERDUE_AFTER_MS)
}

fn next_run(s: &ScheduleRecord, now: Millis) -> String {
    match (s.paused_at, s.next_slot) {
        (Some(at), _) => format!("paused since {}", time(at)),
        (None, Some(next)) if overdue(s, now) => format!("{} (overdue: no worker of queue {} is running)", time(next), s.spec.queue),
        (None, Some(next)) => time(next),
        (None, None) => "never".to_owned(),
    }
}

fn outcome(last: &LastRun) -> String {
    match last.state {
        Some(state) => format!("job {} {}", last.job, state.as_str()),
        None => format!("job {} deleted", last.job),
    }
}

/// The catch-up and overlap policies, as `list` and the dashboard show them.
pub fn policy(s: &ScheduleRecord) -> String {
    let overlap = match s.spec.overlap {
        Overlap::Allow => "",
        Overlap::Skip => ", no overlap",
    };
    format!("catch-up {}{overlap}", s.spec.catch_up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(next: Option<u64>, paused: Option<u64>) -> ScheduleRecord {
        ScheduleRecord {
            spec: ScheduleSpec::new("s", "mail", Cadence::Every(Duration::from_secs(60)), payload("true")),
            created_at: Millis(0),
            paused_at: paused.map(Millis),
            next_slot: next.map(Millis),
            last_run: None,
        }
    }

    #[test]
    fn a_next_run_long_past_says_no_worker_of_its_queue_runs() {
        let now = Millis(1_800_000_000_000);
        assert_eq!(next_run(&record(Some(now.0 - 500), None), now), "2027-01-15T07:59:59.500Z");
        let overdue = next_run(&record(Some(now.0 - 60_000), None), now);
        assert!(overdue.ends_with("(overdue: no worker of queue mail is running)"), "{overdue}");
        assert!(next_run(&record(Some(now.0 - 60_000), Some(5)), now).starts_with("paused since"));
        assert_eq!(next_run(&record(None, None), now), "never");
    }
}
