//! Reading rows into the store's types, once for both backends: the SQL of
//! each backend selects the same column names (payload as text), and
//! [`DecodeRow`] gives both row types the same typed getters.

use std::time::Duration;

use leasehold_core::Millis;
use leasehold_core::lease::OwnerId;

use super::exchange::{FenceRow, RunningLease, StaleCandidate};
use super::validate::{unsigned, unsigned32};
use super::{
    AttemptOutcome, AttemptRecord, Cancellation, ClaimedJob, JobId, JobRecord, JobState, LeaseSnapshot,
    StoreError, StoreResult,
};

const JOBS: &str = "leasehold_jobs";
const ATTEMPTS: &str = "leasehold_attempts";

/// Typed column getters shared by SQLite and PostgreSQL rows.
pub(crate) trait DecodeRow {
    fn int(&self, col: &str) -> StoreResult<i64>;
    fn int32(&self, col: &str) -> StoreResult<i32>;
    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>>;
    fn text(&self, col: &str) -> StoreResult<String>;
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>>;
    /// Column `i` (from 0), an integer or NULL: for unnamed columns
    /// (an aggregate's), as are the two below.
    fn opt_int_at(&self, i: usize) -> StoreResult<Option<i64>>;
    /// Column `i`, an integer.
    fn int_at(&self, i: usize) -> StoreResult<i64>;
    /// Column `i`, a boolean (an `EXISTS`).
    fn bool_at(&self, i: usize) -> StoreResult<bool>;
    /// Column `i`, a text.
    fn text_at(&self, i: usize) -> StoreResult<String>;
}

/// Every sqlx row type whose database decodes the store's column types:
/// SQLite's and PostgreSQL's.
impl<R: sqlx::Row> DecodeRow for R
where
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    usize: sqlx::ColumnIndex<R>,
    for<'r> bool: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i32: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    fn int(&self, col: &str) -> StoreResult<i64> {
        Ok(self.try_get(col)?)
    }
    fn int32(&self, col: &str) -> StoreResult<i32> {
        Ok(self.try_get(col)?)
    }
    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>> {
        Ok(self.try_get(col)?)
    }
    fn text(&self, col: &str) -> StoreResult<String> {
        Ok(self.try_get(col)?)
    }
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
        Ok(self.try_get(col)?)
    }
    fn opt_int_at(&self, i: usize) -> StoreResult<Option<i64>> {
        Ok(self.try_get(i)?)
    }
    fn int_at(&self, i: usize) -> StoreResult<i64> {
        Ok(self.try_get(i)?)
    }
    fn bool_at(&self, i: usize) -> StoreResult<bool> {
        Ok(self.try_get(i)?)
    }
    fn text_at(&self, i: usize) -> StoreResult<String> {
        Ok(self.try_get(i)?)
    }
}

fn millis(table: &'static str, col: &str, v: i64) -> StoreResult<Millis> {
    Ok(Millis(unsigned(table, col, v)?))
}

fn opt_millis(table: &'static str, col: &str, v: Option<i64>) -> StoreResult<Option<Millis>> {
    v.map(|v| millis(table, col, v)).transpose()
}

fn payload(text: &str) -> StoreResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| StoreError::CorruptRow {
        table: JOBS,
        detail: format!("payload is not JSON: {e}"),
    })
}

/// The owner columns `{prefix}host`, `{prefix}pid`, `{prefix}nonce`,
/// `{prefix}start_time`, `{prefix}boot_id`; `None` when host is NULL.
pub(crate) fn owner(row: &(impl DecodeRow + ?Sized), prefix: &str) -> StoreResult<Option<OwnerId>> {
    let Some(host_id) = row.opt_text(&format!("{prefix}host"))? else {
        return Ok(None);
    };
    let pid = row.opt_int(&format!("{prefix}pid"))?.unwrap_or(0);
    let start_time = row.opt_int(&format!("{prefix}start_time"))?;
    Ok(Some(OwnerId {
        host_id,
        pid: unsigned32(JOBS, "owner_pid", pid)?,
        nonce: row.opt_text(&format!("{prefix}nonce"))?.unwrap_or_default(),
        start_time: start_time
            .map(|t| unsigned(JOBS, "owner_start_time", t))
            .transpose()?,
        boot_id: row.opt_text(&format!("{prefix}boot_id"))?,
    }))
}

/// A claimed job from columns id, token, payload, attempts, max_attempts,
/// timeout_ms, now.
pub(crate) fn claimed(row: &(impl DecodeRow + ?Sized), reclaimed: bool) -> StoreResult<ClaimedJob> {
    Ok(ClaimedJob {
        id: JobId(row.int("id")?),
        token: unsigned(JOBS, "token", row.int("token")?)?,
        payload: payload(&row.text("payload")?)?,
        attempt: unsigned32(JOBS, "attempts", row.int32("attempts")?.into())?,
        max_attempts: unsigned32(JOBS, "max_attempts", row.int32("max_attempts")?.into())?,
        timeout: row
            .opt_int("timeout_ms")?
            .map(|t| unsigned(JOBS, "timeout_ms", t).map(Duration::from_millis))
            .transpose()?,
        leased_at: millis(JOBS, "now", row.int("now")?)?,
        reclaimed,
    })
}

/// A stale candidate from columns id, token, owner_*, claimed_at,
/// heartbeat_at, lease_ms.
pub(crate) fn stale(row: &(impl DecodeRow + ?Sized)) -> StoreResult<StaleCandidate> {
    let id = row.int("id")?;
    let owner = owner(row, "owner_")?.ok_or_else(|| StoreError::CorruptRow {
        table: JOBS,
        detail: format!("running job {id} has no owner"),
    })?;
    Ok(StaleCandidate {
        id,
        token: row.int("token")?,
        owner,
        claimed_at: row.opt_int("claimed_at")?.unwrap_or(0),
        heartbeat_at: row.opt_int("heartbeat_at")?,
        lease_ms: row.opt_int("lease_ms")?.unwrap_or(0),
    })
}

/// A running lease from columns id, token, heartbeat_at.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn running_lease(row: &(impl DecodeRow + ?Sized)) -> StoreResult<RunningLease> {
    Ok(RunningLease {
        id: row.int("id")?,
        token: row.int("token")?,
        heartbeat_at: row.opt_int("heartbeat_at")?,
        lease_ms: row.opt_int("lease_ms")?,
        cancelled: row.int("cancelled")? != 0,
    })
}

/// A fence row from columns id, token, state, owner_nonce.
pub(crate) fn fence_row(row: &(impl DecodeRow + ?Sized)) -> StoreResult<FenceRow> {
    Ok(FenceRow {
        id: row.int("id")?,
        token: row.int("token")?,
        state: row.text("state")?,
        owner_nonce: row.opt_text("owner_nonce")?,
    })
}

fn state(row: &(impl DecodeRow + ?Sized)) -> StoreResult<JobState> {
    job_state(&row.text("state")?)
}

/// A job's `state` column as read; an unknown one is a corrupt row.
pub(crate) fn job_state(text: &str) -> StoreResult<JobState> {
    JobState::parse(text).ok_or_else(|| StoreError::CorruptRow {
        table: JOBS,
        detail: format!("unknown state {text:?}"),
    })
}

/// A job record (without attempts) from every column of `leasehold_jobs`.
pub(crate) fn job(row: &(impl DecodeRow + ?Sized)) -> StoreResult<JobRecord> {
    let state = state(row)?;
    let token = unsigned(JOBS, "token", row.int("token")?)?;
    let owner = owner(row, "owner_")?;
    let heartbeat_at = opt_millis(JOBS, "heartbeat_at", row.opt_int("heartbeat_at")?)?;
    let lease_ms = row.opt_int("lease_ms")?;
    let lease = match (state, owner, lease_ms) {
        (JobState::Running, Some(owner), Some(lease_ms)) => Some(LeaseSnapshot {
            owner,
            token,
            heartbeat_at,
            lease_ms: unsigned(JOBS, "lease_ms", lease_ms)?,
        }),
        _ => None,
    };
    Ok(JobRecord {
        id: JobId(row.int("id")?),
        queue: row.text("queue")?,
        state,
        payload: payload(&row.text("payload")?)?,
        priority: row.int32("priority")?,
        run_at: millis(JOBS, "run_at", row.int("run_at")?)?,
        attempts: unsigned32(JOBS, "attempts", row.int32("attempts")?.into())?,
        max_attempts: unsigned32(JOBS, "max_attempts", row.int32("max_attempts")?.into())?,
        idempotency_key: row.opt_text("idempotency_key")?,
        timeout: row
            .opt_int("timeout_ms")?
            .map(|t| unsigned(JOBS, "timeout_ms", t).map(Duration::from_millis))
            .transpose()?,
        token,
        lease,
        last_error: row.opt_text("last_error")?,
        created_at: millis(JOBS, "created_at", row.int("created_at")?)?,
        finished_at: opt_millis(JOBS, "finished_at", row.opt_int("finished_at")?)?,
        cancellation: match opt_millis(JOBS, "cancelled_at", row.opt_int("cancelled_at")?)? {
            Some(at) => Some(Cancellation {
                at,
                by: row.opt_text("cancelled_by")?.unwrap_or_default(),
                reason: row.opt_text("cancel_reason")?,
            }),
            None => None,
        },
        attempt_log: Vec::new(),
    })
}

/// The running attempt of a job record, read off its lease and claim time.
pub(crate) fn running_attempt(
    row: &(impl DecodeRow + ?Sized),
    record: &JobRecord,
) -> StoreResult<Option<AttemptRecord>> {
    let Some(lease) = &record.lease else {
        return Ok(None);
    };
    Ok(Some(AttemptRecord {
        token: lease.token,
        owner: lease.owner.clone(),
        started_at: millis(JOBS, "claimed_at", row.opt_int("claimed_at")?.unwrap_or(0))?,
        ended_at: None,
        outcome: AttemptOutcome::Running,
        error: None,
    }))
}

/// An ended attempt from a row of `leasehold_attempt_log`.
pub(crate) fn attempt(row: &(impl DecodeRow + ?Sized)) -> StoreResult<AttemptRecord> {
    let outcome = row.text("outcome")?;
    Ok(AttemptRecord {
        token: unsigned(ATTEMPTS, "token", row.int("token")?)?,
        owner: owner(row, "owner_")?.ok_or_else(|| StoreError::CorruptRow {
            table: ATTEMPTS,
            detail: "attempt without owner".to_owned(),
        })?,
        started_at: millis(ATTEMPTS, "started_at", row.int("started_at")?)?,
        ended_at: opt_millis(ATTEMPTS, "ended_at", row.opt_int("ended_at")?)?,
        outcome: AttemptOutcome::parse(&outcome).ok_or_else(|| StoreError::CorruptRow {
            table: ATTEMPTS,
            detail: format!("unknown outcome {outcome:?}"),
        })?,
        error: row.opt_text("error")?,
    })
}

