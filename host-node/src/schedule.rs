//! Schedules' cadences and the task that drives them.
//!
//! A [`Cadence`] says when a schedule's slots fall: every fixed period
//! (aligned to whole multiples of the period since the Unix epoch), or at
//! the instants a cron expression names on the wall clock of a time zone.
//! The core decides which due slots to enqueue
//! ([`leasehold_core::schedule::decide`]); this module answers it the slot
//! instants ([`FireTimes`]): arithmetic for a period, the `croner` crate over
//! `jiff`'s time zones for a cron expression.
//!
//! # Cron expressions and daylight saving time
//!
//! Five fields (minute hour day-of-month month day-of-week), or six with
//! seconds first, or seven with a year last; `@daily`-style nicknames,
//! `L`, `W` and `#` as `croner` reads them. Without a zone, UTC. In a zone
//! with daylight saving time (`croner`'s rules, after the Open Cron Pattern
//! Specification):
//!
//! - A wall-clock time that does not exist (spring forward: 02:30 on the day
//!   Europe/Berlin goes from 02:00 to 03:00) fires once, at the first
//!   instant after the gap (03:00 local), when the expression names fixed
//!   hours and minutes. An expression with a wildcard or step in its
//!   seconds, minutes or hours simply has no slots in the gap.
//! - A wall-clock time that happens twice (fall back: 02:00–03:00 on the day
//!   Europe/Berlin goes from 03:00 back to 02:00) fires once, at the first of
//!   the two instants, when the expression names fixed hours and minutes;
//!   an expression with a wildcard or step fires at both instants.
//!
//! Every worker computes slots from the stored expression and zone, so they
//! agree as long as their time zone databases agree; when they do not, the
//! store's compare-and-swap still enqueues each slot at most once.

use std::str::FromStr;
use std::time::Duration;

use croner::Cron;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use leasehold_core::Millis;
use leasehold_core::schedule::{Every, FireTimes};

use crate::runner::{Clock, TokioClock};
use crate::store::{Store, StoreError, StoreResult};

/// The zone of a cron expression given none.
pub const DEFAULT_TIME_ZONE: &str = "UTC";

/// How often [`drive`] looks for due slots at most: 1 s, so a slot is
/// enqueued within about a second of its time.
pub const DRIVE_EVERY: Duration = Duration::from_secs(1);

/// When a schedule's slots fall.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cadence {
    /// Every period: slots at whole multiples of it since the Unix epoch
    /// (`every 1h` fires on the hour, `every 5m` at :00, :05, …). At least
    /// 1 s, at most 366 days, whole milliseconds.
    Every(Duration),
    /// At the instants a cron expression names, on the wall clock of
    /// `time_zone` (an IANA name such as `Europe/Berlin`, or `UTC`).
    Cron {
        /// The expression as given.
        expression: String,
        /// The IANA time zone name.
        time_zone: String,
    },
}

impl Cadence {
    /// A cron cadence in `time_zone` (UTC when `None`).
    pub fn cron(expression: &str, time_zone: Option<&str>) -> Cadence {
        Cadence::Cron {
            expression: expression.to_owned(),
            time_zone: time_zone.unwrap_or(DEFAULT_TIME_ZONE).to_owned(),
        }
    }

    /// Checks the cadence and answers its slot instants.
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] naming `every` (a period under 1 s,
    /// over 366 days, or not whole milliseconds), `cron` (an expression
    /// `croner` does not read: the reason names the field at fault, what it
    /// holds and the field's range) or `time_zone` (a name this machine's time
    /// zone database does not hold).
    pub fn fire_times(&self) -> StoreResult<Slots> {
        match self {
            Cadence::Every(period) => {
                let ms = u64::try_from(period.as_millis()).unwrap_or(u64::MAX);
                if period.subsec_nanos() % 1_000_000 != 0 {
                    return Err(invalid("every", format!("{period:?} is not a whole number of milliseconds")));
                }
                Every::new(ms).map(Slots::Every).map_err(|e| invalid("every", format!("{e} (given: {})", humanize(*period))))
            }
            Cadence::Cron { expression, time_zone } => {
                let cron = Cron::from_str(expression).map_err(|e| invalid("cron", cron_mistake(expression, &e)))?;
                let zone = TimeZone::get(time_zone).map_err(|e| {
                    invalid(
                        "time_zone",
                        format!("{time_zone:?} is not a time zone this machine knows (IANA names such as Europe/Berlin, or UTC): {e}"),
                    )
                })?;
                Ok(Slots::Cron(Box::new(CronSlots { cron, zone })))
            }
        }
    }

    /// Checks the cadence and answers its first slot after `now` (ms since
    /// the Unix epoch).
    ///
    /// # Errors
    /// Those of [`Cadence::fire_times`], and [`StoreError::InvalidOption`]
    /// naming `cron` for an expression with no slot after `now` (a year
    /// past).
    pub fn first_slot_after(&self, now: Millis) -> StoreResult<Millis> {
        self.fire_times()?
            .next_after(now)
            .ok_or_else(|| invalid("cron", format!("{self} has no slot after now")))
    }

    /// The period of an `every` cadence, for counting skipped slots.
    pub fn every(&self) -> Option<Every> {
        match self {
            Cadence::Every(period) => Every::new(u64::try_from(period.as_millis()).ok()?).ok(),
            Cadence::Cron { .. } => None,
        }
    }
}

impl std::fmt::Display for Cadence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cadence::Every(period) => write!(f, "every {}", humanize(*period)),
            Cadence::Cron { expression, time_zone } => write!(f, "cron {expression:?} {time_zone}"),
        }
    }
}

/// `90s` → `1m 30s`: the period as a person writes it (`0s` for zero, which
/// an error message may have to echo).
fn humanize(period: Duration) -> String {
    let mut left = period.as_millis() as u64;
    let mut parts = Vec::new();
    for (unit, ms) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)] {
        if left >= ms {
            parts.push(format!("{}{unit}", left / ms));
            left %= ms;
        }
    }
    if parts.is_empty() {
        return "0s".to_owned();
    }
    parts.join(" ")
}

fn invalid(option: &'static str, reason: String) -> StoreError {
    StoreError::InvalidOption { option, reason }
}

/// A cron field: its name, and its range as an error says it.
struct CronField {
    name: &'static str,
    takes: &'static str,
}

const SECOND: CronField = CronField { name: "second", takes: "seconds go from 0 to 59" };
const MINUTE: CronField = CronField { name: "minute", takes: "minutes go from 0 to 59" };
const HOUR: CronField = CronField { name: "hour", takes: "hours go from 0 to 23" };
const DAY_OF_MONTH: CronField = CronField { name: "day-of-month", takes: "days of the month go from 1 to 31 (L is the last)" };
const MONTH: CronField = CronField { name: "month", takes: "months go from 1 to 12, or JAN to DEC" };
const DAY_OF_WEEK: CronField =
    CronField { name: "day-of-week", takes: "days of the week go from 0 to 7 (0 and 7 are Sunday), or SUN to SAT" };
const YEAR: CronField = CronField { name: "year", takes: "years go from 1 to 5000" };

/// The fields of an expression of `n` fields, in order; `None` for a count
/// no cron expression has.
fn cron_fields(n: usize) -> Option<&'static [CronField]> {
    match n {
        5 => Some(&[MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK]),
        6 => Some(&[SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK]),
        7 => Some(&[SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR]),
        _ => None,
    }
}

const ORDINALS: [&str; 7] = ["1st", "2nd", "3rd", "4th", "5th", "6th", "7th"];

/// Why `expression` is no cron expression, naming the field at fault, what
/// it holds and the field's range (`"0 25 * * *"`: the hour field, 25, 0 to
/// 23). The field is found by the parser itself: each field is tried alone,
/// every other one `*`, and the first one refused is named. A mistake no
/// single field makes is said as the parser says it.
fn cron_mistake(expression: &str, error: &croner::errors::CronError) -> String {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    let start = format!("{expression:?} is not a cron expression");
    if fields.first().is_some_and(|f| f.starts_with('@')) {
        return format!("{start}: the nicknames are @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly");
    }
    let Some(kinds) = cron_fields(fields.len()) else {
        return format!(
            "{start}: it has {} field{}; give 5 (minute hour day-of-month month day-of-week), 6 with a second field first, \
             or 7 with seconds first and a year last",
            fields.len(),
            if fields.len() == 1 { "" } else { "s" }
        );
    };
    let layout = kinds.iter().map(|k| k.name).collect::<Vec<_>>().join(" ");
    for (i, (field, kind)) in fields.iter().zip(kinds).enumerate() {
        let alone: Vec<&str> = (0..fields.len()).map(|j| if j == i { *field } else { "*" }).collect();
        let Err(e) = Cron::from_str(&alone.join(" ")) else { continue };
        let text = e.to_string();
        let why = if text.contains("Range out of bounds") {
            "is a range that runs backwards or out of range".to_owned()
        } else if text.contains("out of bounds") {
            "is out of range".to_owned()
        } else if text.contains("Step cannot be zero") {
            "has a step of 0".to_owned()
        } else if text.contains("illegal character") {
            "is not a number, name, range (a-b), list (a,b) or step (*/n)".to_owned()
        } else {
            format!("is refused ({})", text.trim_end_matches('.'))
        };
        return format!(
            "{start}: its {} field ({} of {}: {layout}), {field}, {why}: {}",
            kind.name,
            ORDINALS[i],
            fields.len(),
            kind.takes
        );
    }
    format!("{start}: {error}")
}

/// The slot instants of a checked [`Cadence`].
#[derive(Debug)]
pub enum Slots {
    /// A fixed period.
    Every(Every),
    /// A cron expression in a zone.
    Cron(Box<CronSlots>),
}

impl FireTimes for Slots {
    fn next_after(&mut self, t: Millis) -> Option<Millis> {
        match self {
            Slots::Every(every) => every.next_after(t),
            Slots::Cron(cron) => cron.next_after(t),
        }
    }

    fn last_in(&mut self, floor: Millis, t: Millis) -> Option<Millis> {
        match self {
            Slots::Every(every) => every.last_in(floor, t),
            Slots::Cron(cron) => cron.last_in(floor, t),
        }
    }
}

/// A cron expression's instants on a zone's wall clock (whole seconds).
#[derive(Debug)]
pub struct CronSlots {
    cron: Cron,
    zone: TimeZone,
}

impl CronSlots {
    /// `t` floored to its whole second, in the zone; `None` outside the
    /// range `jiff` represents.
    fn zoned(&self, t: Millis) -> Option<jiff::Zoned> {
        let seconds = i64::try_from(t.0 / 1000).ok()?;
        Some(Timestamp::from_second(seconds).ok()?.to_zoned(self.zone.clone()))
    }

    fn millis(zoned: &jiff::Zoned) -> Option<Millis> {
        u64::try_from(zoned.timestamp().as_millisecond()).ok().map(Millis)
    }
}

impl FireTimes for CronSlots {
    fn next_after(&mut self, t: Millis) -> Option<Millis> {
        // Slots are whole seconds: the first after t's second is after t.
        let next = self.cron.find_next_occurrence(&self.zoned(t)?, false).ok()?;
        Self::millis(&next)
    }

    fn last_in(&mut self, floor: Millis, t: Millis) -> Option<Millis> {
        let last = self.cron.find_previous_occurrence(&self.zoned(t)?, true).ok()?;
        Self::millis(&last).filter(|&at| at > floor)
    }
}

/// Drives the schedules of `queue` until the future is dropped: at most
/// every [`DRIVE_EVERY`], sooner when a slot falls earlier, enqueues the due
/// slots through [`Store::run_due_schedules`] with the system clock. Any
/// number of drivers on any number of machines may run over one database:
/// each slot is enqueued once. A failed round is logged (once until a round
/// succeeds again) and tried again at the next tick.
///
/// # Errors
/// [`StoreError::InvalidQueueName`] at once, naming the queue and the rule,
/// for a `queue` no store accepts (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`):
/// every round would fail, said only in the logs. Otherwise it never
/// returns.
pub async fn drive(store: Store, queue: String) -> StoreResult<()> {
    crate::store::validate::queue_name(&queue)?;
    let clock = TokioClock::new();
    let mut failing = false;
    loop {
        let now = clock.now();
        let wait = match store.run_due_schedules(&queue, now).await {
            Ok(round) => {
                if std::mem::take(&mut failing) {
                    tracing::info!(queue, "schedules can be driven again");
                }
                for job in &round.enqueued {
                    tracing::debug!(queue, schedule = job.schedule, slot = job.slot.0, job = job.job.0, "scheduled job enqueued");
                }
                // A next slot that is due already is one this round left to
                // another worker (whose swap is committing) or could not
                // check: looking again at once would only spin.
                let now = clock.now();
                round.next_due.filter(|&at| at > now).map_or(DRIVE_EVERY, |at| Duration::from_millis(at.since(now)).min(DRIVE_EVERY))
            }
            Err(e) => {
                if !std::mem::replace(&mut failing, true) {
                    tracing::warn!(queue, "cannot drive the schedules (said once until it works again): {e}");
                }
                DRIVE_EVERY
            }
        };
        tokio::time::sleep(wait).await;
    }
}
