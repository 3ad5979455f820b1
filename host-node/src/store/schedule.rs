//! Schedules: periodic and cron jobs, each slot enqueued once across every
//! worker on every machine.
//!
//! A schedule is a row of `leasehold_schedules`: a name, the job it enqueues
//! (queue, payload, attempt budget, timeout), its [`Cadence`], its policies
//! ([`CatchUp`], [`Overlap`]) and its cursor (`last_slot`: every slot at or
//! before it was enqueued or skipped). Workers drive the schedules of their
//! queue ([`Store::run_due_schedules`], which `leasehold work` and
//! [`crate::schedule::drive`] call about once a second): each reads the due
//! schedules, lets the core decide which slots to enqueue
//! ([`leasehold_core::schedule::decide`]), and then, in ONE transaction,
//! moves the cursor with a compare-and-swap from the value it read and
//! inserts the jobs. A worker whose swap finds the cursor moved (another
//! worker enqueued those slots first) rolls back and enqueues nothing. So a
//! slot is enqueued at most once whatever the number of workers, and it
//! does not depend on any job being kept (an idempotency key would hold
//! only while its job is kept).
//!
//! Times: schedules use the caller's clock on both backends (`now`), as
//! slots are wall-clock instants every worker computes for itself; a
//! worker whose clock runs ahead enqueues early by that much, never twice.
//! Each job is due at its slot (`run_at` = the slot).

use std::time::Duration;

use leasehold_core::Millis;
use leasehold_core::schedule::{CatchUp, DEFAULT_LATE_LIMIT_MS, FireTimes, Overlap, SlotPolicy, decide};

use super::backend::{ScheduleChange, ScheduleRead};
use super::rows::DecodeRow;
use super::schedule_sql::JobRow;
use super::validate::{self, NewJob};
use super::{EnqueueOptions, JobId, JobState, Store, StoreError, StoreResult};
use crate::schedule::Cadence;

const TABLE: &str = "leasehold_schedules";

/// Most slots one round enqueues for one schedule: ten decisions' bursts.
pub const MAX_ROUND_SLOTS: usize = 10 * leasehold_core::schedule::MAX_BURST;

/// A schedule as added: its name, what it enqueues, when and how.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleSpec {
    /// 1 to 128 bytes of `A-Z a-z 0-9 _ - . :`, unique in the store.
    pub name: String,
    /// The queue its jobs go to (a queue name's rules).
    pub queue: String,
    /// Each job's payload (the CLI's: `{"command": LINE}`).
    pub payload: serde_json::Value,
    /// When its slots fall.
    pub cadence: Cadence,
    /// Each job's attempt budget, at least 1.
    pub max_attempts: u32,
    /// Each job's per-attempt timeout.
    pub timeout: Option<Duration>,
    /// Slots missed while no worker drove the schedule.
    pub catch_up: CatchUp,
    /// Slots while its previous job is queued or running.
    pub overlap: Overlap,
}

impl ScheduleSpec {
    /// A schedule of `payload` on `queue` with the defaults: 3 attempts as
    /// the CLI's `enqueue`, no timeout, [`CatchUp::One`], [`Overlap::Allow`].
    pub fn new(name: &str, queue: &str, cadence: Cadence, payload: serde_json::Value) -> ScheduleSpec {
        ScheduleSpec {
            name: name.to_owned(),
            queue: queue.to_owned(),
            payload,
            cadence,
            max_attempts: 3,
            timeout: None,
            catch_up: CatchUp::default(),
            overlap: Overlap::default(),
        }
    }
}

/// A stored schedule ([`Store::schedules`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleRecord {
    /// What was added.
    pub spec: ScheduleSpec,
    /// When it was added (the adder's clock), ms since the Unix epoch.
    pub created_at: Millis,
    /// When it was paused, while it is.
    pub paused_at: Option<Millis>,
    /// Its next slot (due then, enqueued by the first worker to look after
    /// it); `None` when the cadence has no more slots. Shown while paused
    /// too, though a resume moves it to the first slot after the resume.
    pub next_slot: Option<Millis>,
    /// Its last enqueued job, if any.
    pub last_run: Option<LastRun>,
}

/// The last job a schedule enqueued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRun {
    /// The slot it was enqueued for (its due time).
    pub slot: Millis,
    /// The job.
    pub job: JobId,
    /// Its state now; `None` once it was deleted (purged, or succeeded under
    /// delete-on-success).
    pub state: Option<JobState>,
}

/// A job one round enqueued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledJob {
    /// The schedule's name.
    pub schedule: String,
    /// The slot (the job's due time).
    pub slot: Millis,
    /// The job.
    pub job: JobId,
}

/// What one [`Store::run_due_schedules`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduleRound {
    /// The jobs it enqueued, by schedule then slot.
    pub enqueued: Vec<ScheduledJob>,
    /// Due slots it skipped by policy (missed under catch-up `one`/`none`,
    /// or overlapping under `skip`), where the cadence can count them
    /// (periods can; cron expressions count as one per decision).
    pub skipped: u64,
    /// The earliest next slot of the queue's active schedules afterwards
    /// (when to look again); `None` when there is none.
    pub next_due: Option<Millis>,
}

/// The compare-and-swap of one schedule's cursor: from the value read to
/// the new one, with the first slot after it (stored values, ms).
#[derive(Clone, Copy)]
pub(crate) struct Swap {
    pub(crate) id: i64,
    pub(crate) from: i64,
    pub(crate) to: i64,
    pub(crate) next: Option<i64>,
}

/// A row read back: the record, plus what the swap needs.
pub(crate) struct ScheduleRow {
    id: i64,
    last_slot: i64,
    record: ScheduleRecord,
}

impl Store {
    /// Adds a schedule; its first slot is the first after `now` (the
    /// caller's clock). Answers the stored record.
    ///
    /// # Errors
    /// Before anything is written: [`StoreError::InvalidOption`] naming
    /// `name`, `every`, `cron`, `time_zone` (see [`Cadence::fire_times`]),
    /// `max_attempts`, `timeout` or `payload`, or `cron` for an expression
    /// with no slot after `now`; [`StoreError::InvalidQueueName`];
    /// [`StoreError::DuplicateSchedule`] when the name is taken (the stored
    /// schedule is left as it was). [`StoreError::Database`].
    pub async fn add_schedule(&self, spec: &ScheduleSpec, now: Millis) -> StoreResult<ScheduleRecord> {
        schedule_name(&spec.name)?;
        validate::queue_name(&spec.queue)?;
        let options = EnqueueOptions { max_attempts: spec.max_attempts, timeout: spec.timeout, ..Default::default() };
        let job = NewJob::new(&spec.payload, &options)?;
        let now_ms = validate::millis("now", now)?;
        let next = spec.cadence.first_slot_after(now)?;
        let next_ms = validate::millis("next slot", next)?;
        let (every_ms, cron, zone) = match &spec.cadence {
            Cadence::Every(period) => (Some(validate::duration_ms("every", *period)?), None, None),
            Cadence::Cron { expression, time_zone } => (None, Some(expression.as_str()), Some(time_zone.as_str())),
        };
        let offered = [
            ("name", spec.name.as_str().into()),
            ("queue", spec.queue.as_str().into()),
            ("payload", job.payload.as_str().into()),
            ("max_attempts", job.max_attempts.into()),
            ("timeout_ms", job.timeout_ms.into()),
            ("every_ms", every_ms.into()),
            ("cron", cron.into()),
            ("time_zone", zone.unwrap_or(crate::schedule::DEFAULT_TIME_ZONE).into()),
            ("catch_up", spec.catch_up.as_str().into()),
            ("overlap", spec.overlap.as_str().into()),
            ("now", now_ms.into()),
            ("next_slot", next_ms.into()),
        ];
        let added = self.backend().add_schedule(&offered).await?;
        if added.is_none() {
            return Err(StoreError::DuplicateSchedule(spec.name.clone()));
        }
        self.schedule(&spec.name).await
    }

    /// Every schedule, by name.
    ///
    /// # Errors
    /// [`StoreError::CorruptRow`] for a row this build cannot read,
    /// [`StoreError::Database`].
    pub async fn schedules(&self) -> StoreResult<Vec<ScheduleRecord>> {
        Ok(self.read_schedules(None).await?.into_iter().map(|row| row.record).collect())
    }

    /// One schedule by name.
    ///
    /// # Errors
    /// [`StoreError::UnknownSchedule`], [`StoreError::Database`].
    pub async fn schedule(&self, name: &str) -> StoreResult<ScheduleRecord> {
        let mut rows = self.read_schedules(Some(name)).await?;
        rows.pop().map(|row| row.record).ok_or_else(|| StoreError::UnknownSchedule(name.to_owned()))
    }

    async fn read_schedules(&self, name: Option<&str>) -> StoreResult<Vec<ScheduleRow>> {
        self.backend().read_schedules(ScheduleRead::List, &[("name", name.into())]).await
    }

    /// Removes a schedule; the jobs it enqueued stay as they are.
    ///
    /// # Errors
    /// [`StoreError::UnknownSchedule`], [`StoreError::Database`].
    pub async fn remove_schedule(&self, name: &str) -> StoreResult<()> {
        let gone = self.backend().change_schedule(ScheduleChange::Remove, &[("name", name.into())]).await?;
        if gone == 0 {
            return Err(StoreError::UnknownSchedule(name.to_owned()));
        }
        Ok(())
    }

    /// Pauses a schedule at `now`: no slot is enqueued until it is resumed.
    /// Answers `false` when it was paused already (nothing changes).
    ///
    /// # Errors
    /// [`StoreError::UnknownSchedule`], [`StoreError::Database`].
    pub async fn pause_schedule(&self, name: &str, now: Millis) -> StoreResult<bool> {
        let now_ms = validate::millis("now", now)?;
        let offered = [("name", name.into()), ("now", now_ms.into())];
        let paused = self.backend().change_schedule(ScheduleChange::Pause, &offered).await?;
        if paused == 0 {
            self.schedule(name).await?;
        }
        Ok(paused == 1)
    }

    /// Resumes a paused schedule at `now`: its next slot is the first after
    /// `now`; the slots that fell due while it was paused are skipped,
    /// whatever its catch-up policy (a pause says "not these"). Answers
    /// `false` when it was not paused (nothing changes).
    ///
    /// # Errors
    /// [`StoreError::UnknownSchedule`], [`StoreError::Database`], and the
    /// cadence errors of [`Cadence::fire_times`] (a time zone this machine
    /// no longer knows).
    pub async fn resume_schedule(&self, name: &str, now: Millis) -> StoreResult<bool> {
        let now_ms = validate::millis("now", now)?;
        let record = self.schedule(name).await?;
        let next = record.spec.cadence.fire_times()?.next_after(now).map(|at| at.0 as i64);
        let offered = [("name", name.into()), ("last_slot", now_ms.into()), ("next_slot", next.into())];
        let resumed = self.backend().change_schedule(ScheduleChange::Resume, &offered).await?;
        Ok(resumed == 1)
    }

    /// One round of the schedules of `queue` at `now` (the caller's clock):
    /// enqueues each due slot the policies keep, each schedule's slots in one
    /// transaction with the compare-and-swap of its cursor (see the module
    /// docs). Safe to call from any number of workers at once: a slot another
    /// worker enqueued first is not enqueued again. A burst cut at
    /// [`leasehold_core::schedule::MAX_BURST`] goes on in the same round, up
    /// to [`MAX_ROUND_SLOTS`] slots per schedule; the rest of a longer
    /// backlog (catch-up `all` after a long downtime) is left to the next
    /// rounds, so one schedule never holds up the others.
    ///
    /// # Errors
    /// [`StoreError::InvalidQueueName`], [`StoreError::Database`] (the
    /// schedules decided before it keep their jobs), [`StoreError::CorruptRow`].
    /// A schedule whose cadence no longer checks (a zone this machine does
    /// not know) is logged and left alone.
    pub async fn run_due_schedules(&self, queue: &str, now: Millis) -> StoreResult<ScheduleRound> {
        validate::queue_name(queue)?;
        let now_ms = validate::millis("now", now)?;
        let offered = [("queue", queue.into()), ("now", now_ms.into())];
        let due = self.backend().read_schedules(ScheduleRead::Due, &offered).await?;
        let mut round = ScheduleRound::default();
        for row in due {
            self.run_one(row, now, &mut round).await?;
        }
        let next = self.backend().next_due(queue).await?;
        round.next_due = next.map(|at| Millis(at.max(0) as u64));
        if !round.enqueued.is_empty() {
            self.inner.wakers.wake(queue);
        }
        Ok(round)
    }

    /// Decides and enqueues one schedule's due slots, deciding again while a
    /// burst left more due; stops at the first swap another worker won.
    async fn run_one(&self, mut row: ScheduleRow, now: Millis, round: &mut ScheduleRound) -> StoreResult<()> {
        let spec = &row.record.spec;
        let mut slots = match spec.cadence.fire_times() {
            Ok(slots) => slots,
            Err(e) => {
                tracing::warn!(schedule = spec.name, "schedule left alone: {e}");
                return Ok(());
            }
        };
        let policy = SlotPolicy { catch_up: spec.catch_up, overlap: spec.overlap, late_limit_ms: DEFAULT_LATE_LIMIT_MS };
        let every = spec.cadence.every();
        let payload = spec.payload.to_string();
        let job = JobRow {
            queue: &spec.queue,
            payload: &payload,
            max_attempts: i32::try_from(spec.max_attempts).unwrap_or(i32::MAX),
            timeout_ms: spec.timeout.map(|t| t.as_millis() as i64),
        };
        let mut active = row
            .record
            .last_run
            .is_some_and(|last| matches!(last.state, Some(JobState::Queued | JobState::Running)));
        let cursor = Millis(row.last_slot.max(0) as u64);
        let Some(mut decision) = decide(cursor, now, active, &policy, &mut slots) else {
            // Its stored next slot was due, but its cadence says not yet (a
            // worker whose time zone data differs): store the cadence's answer.
            let next = slots.next_after(cursor).map(|at| at.0 as i64);
            let swap = Swap { id: row.id, from: row.last_slot, to: row.last_slot, next };
            self.advance(&swap, &[], &job, now).await?;
            return Ok(());
        };
        let mut decided = 0;
        loop {
            let cursor_ms = decision.cursor.0 as i64;
            let swap = Swap { id: row.id, from: row.last_slot, to: cursor_ms, next: decision.next.map(|at| at.0 as i64) };
            let Some(ids) = self.advance(&swap, &decision.enqueue, &job, now).await? else {
                return Ok(());
            };
            round.skipped += decision.skipped(every).unwrap_or(u64::from(decision.enqueue.is_empty()));
            round.enqueued.extend(decision.enqueue.iter().zip(ids).map(|(&slot, id)| ScheduledJob {
                schedule: spec.name.clone(),
                slot,
                job: JobId(id),
            }));
            active |= !decision.enqueue.is_empty();
            row.last_slot = cursor_ms;
            decided += decision.enqueue.len();
            if !decision.more_due(now) || decided >= MAX_ROUND_SLOTS {
                return Ok(());
            }
            match decide(decision.cursor, now, active, &policy, &mut slots) {
                Some(again) => decision = again,
                None => return Ok(()),
            }
        }
    }

    /// One transaction: the swap of the cursor (with the next slot), then
    /// the jobs of `slots`, then the schedule's last job. Answers the new
    /// jobs' ids, or `None` when the swap found the cursor moved (or the
    /// schedule paused or removed) and nothing was written.
    async fn advance(&self, swap: &Swap, slots: &[Millis], job: &JobRow<'_>, now: Millis) -> StoreResult<Option<Vec<i64>>> {
        self.backend().advance(swap, slots, job, now.0 as i64).await
    }
}

/// Checks a schedule name: the rules of a queue name (it travels in the
/// same places: command lines, logs).
fn schedule_name(name: &str) -> StoreResult<()> {
    validate::name_rule(name).map_err(|reason| StoreError::InvalidOption {
        option: "name",
        reason: format!("{name:?}: {reason}"),
    })
}

/// Reads one row of [`schedule_sql`]'s `LIST` / `DUE` shape.
pub(crate) fn read_row(row: &(impl DecodeRow + ?Sized)) -> StoreResult<ScheduleRow> {
    let corrupt = |detail: String| StoreError::CorruptRow { table: TABLE, detail };
    let millis = |col: &str, v: i64| validate::unsigned(TABLE, col, v).map(Millis);
    let name = row.text("name")?;
    let cadence = match (row.opt_int("every_ms")?, row.opt_text("cron")?) {
        (Some(ms), None) => Cadence::Every(Duration::from_millis(validate::unsigned(TABLE, "every_ms", ms)?)),
        (None, Some(expression)) => Cadence::Cron { expression, time_zone: row.text("time_zone")? },
        _ => return Err(corrupt(format!("schedule {name:?} has neither or both of every_ms and cron"))),
    };
    let catch_up = row.text("catch_up")?;
    let overlap = row.text("overlap")?;
    let payload = row.text("payload")?;
    let spec = ScheduleSpec {
        queue: row.text("queue")?,
        payload: serde_json::from_str(&payload).map_err(|e| corrupt(format!("payload is not JSON: {e}")))?,
        cadence,
        max_attempts: validate::unsigned32(TABLE, "max_attempts", i64::from(row.int32("max_attempts")?))?,
        timeout: row.opt_int("timeout_ms")?.map(|ms| validate::unsigned(TABLE, "timeout_ms", ms).map(Duration::from_millis)).transpose()?,
        catch_up: CatchUp::parse(&catch_up).ok_or_else(|| corrupt(format!("catch_up is {catch_up:?}")))?,
        overlap: Overlap::parse(&overlap).ok_or_else(|| corrupt(format!("overlap is {overlap:?}")))?,
        name,
    };
    let last_run = match (row.opt_int("last_job_id")?, row.opt_int("last_run_slot")?) {
        (Some(job), Some(slot)) => Some(LastRun {
            slot: millis("last_run_slot", slot)?,
            job: JobId(job),
            state: row.opt_text("last_state")?.as_deref().and_then(JobState::parse),
        }),
        _ => None,
    };
    Ok(ScheduleRow {
        id: row.int("id")?,
        last_slot: row.int("last_slot")?,
        record: ScheduleRecord {
            spec,
            created_at: millis("created_at", row.int("created_at")?)?,
            paused_at: row.opt_int("paused_at")?.map(|at| millis("paused_at", at)).transpose()?,
            next_slot: row.opt_int("next_slot")?.map(|at| millis("next_slot", at)).transpose()?,
            last_run,
        },
    })
}
