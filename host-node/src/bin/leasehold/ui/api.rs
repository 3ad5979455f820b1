//! The dashboard's JSON API: what the page reads (`GET /api/overview`,
//! `/api/jobs`, `/api/jobs/{id}`, `/api/schedules`) and the actions (`POST …/cancel`,
//! `…/retry`, `/api/queues/{queue}/pause`, `…/resume`,
//! `/api/schedules/{name}/pause`, `…/resume`). Every answer is
//! JSON; an error is `{"error": "…"}` with 400 (bad input, a malformed id,
//! query string or request body included), 404 (unknown job, queue, schedule
//! or path), 405 (a method the path does not take), 409 (a job in the wrong
//! state), 413 (a request body over axum's
//! default limit, 2 MB), 415 (a body sent as another type than
//! `application/json`), 403 (read-only) or 500.

use super::Ui;
use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use leasehold::core::Millis;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::dashboard::{JobQuery, ShownState};
use leasehold::schedule::Cadence;
use leasehold::store::{AttemptRecord, BackendKind, JobId, JobRecord, PausedQueue, ScheduleRecord, StoreError};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The overview's chart: the last hour in minutes.
const HOUR_MS: u64 = 3_600_000;
const MINUTE_MS: u64 = 60_000;

type Answer = Result<Response, Failure>;

/// An error answered as JSON with its status.
pub struct Failure(StatusCode, String);

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Failure {
        let status = match e {
            StoreError::UnknownJob(_) | StoreError::UnknownQueue(_) | StoreError::UnknownSchedule(_) => StatusCode::NOT_FOUND,
            StoreError::WrongState { .. } => StatusCode::CONFLICT,
            StoreError::InvalidOption { .. } | StoreError::InvalidQueueName { .. } => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Failure(status, e.to_string())
    }
}

/// A path segment that is not what the route wants (`/api/jobs/abc`): 400,
/// naming the segment, as JSON like every other refusal.
impl From<PathRejection> for Failure {
    fn from(e: PathRejection) -> Failure {
        Failure(StatusCode::BAD_REQUEST, e.body_text())
    }
}

/// A query string that does not parse (`?limit=-3`): 400, naming the field.
impl From<QueryRejection> for Failure {
    fn from(e: QueryRejection) -> Failure {
        Failure(StatusCode::BAD_REQUEST, e.body_text())
    }
}

/// A request body that is not what the action takes (`{"reason": 5}`, text
/// that is not JSON, another content type, too large): JSON like every other
/// refusal, with what the body should be. A body that does not parse or does
/// not fit is bad input (400, as a bad query string is), not axum's 422.
impl From<JsonRejection> for Failure {
    fn from(e: JsonRejection) -> Failure {
        let detail = innermost(&e);
        match e {
            JsonRejection::JsonSyntaxError(_) => Failure(StatusCode::BAD_REQUEST, format!("the request body is not JSON: {detail}")),
            JsonRejection::JsonDataError(_) => Failure(
                StatusCode::BAD_REQUEST,
                format!("the request body does not fit: {detail} (it is a JSON object, like {{\"reason\": \"why\"}})"),
            ),
            JsonRejection::MissingJsonContentType(_) => Failure(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a request body is sent as JSON, with the header Content-Type: application/json".to_owned(),
            ),
            other => Failure(other.status(), format!("the request body could not be read: {detail}")),
        }
    }
}

/// The innermost cause of `e` in words (serde's "invalid type: integer `5`,
/// expected a string at line 1 column 12", not axum's wrapping of it).
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// A method the path does not take (`GET /api/queues/mail/pause`): 405 as
/// JSON, naming it (axum answers an empty body).
pub async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Failure {
    Failure(StatusCode::METHOD_NOT_ALLOWED, format!("{} does not take {method}", uri.path()))
}

/// Any path no route serves: 404 as JSON, naming it.
pub async fn not_found(uri: axum::http::Uri) -> Failure {
    Failure(StatusCode::NOT_FOUND, format!("nothing is served at {}", uri.path()))
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

/// The database's kind as the page's header names it, in every answer a page
/// is drawn from (so a page opened at its own address names it too).
fn store_name(ui: &Ui) -> &'static str {
    match ui.store.kind() {
        BackendKind::Sqlite => "SQLite",
        BackendKind::Postgres => "PostgreSQL",
    }
}

fn now() -> Millis {
    TokioClock::new().now()
}

/// `GET /api/overview`: the queues with their counts, the last hour by
/// minute, the workers, and what this server allows.
pub async fn overview(State(ui): State<Ui>) -> Answer {
    let now = now();
    let overview = ui.store.overview(now).await?;
    let since = Millis((now.0 / MINUTE_MS) * MINUTE_MS + MINUTE_MS - HOUR_MS);
    let activity = ui.store.activity(since, MINUTE_MS, now).await?;
    let workers: Vec<Value> = ui.store.workers().await?.iter().map(worker).collect();
    Ok(Json(json!({
        "store": store_name(&ui),
        "readOnly": ui.read_only,
        "now": now.0,
        "overview": overview,
        "activity": activity,
        "workers": workers,
    }))
    .into_response())
}

fn worker(w: &leasehold::store::WorkerRecord) -> Value {
    let c = &w.counters;
    json!({
        "queue": w.queue, "host": w.owner.host_id, "hostname": w.hostname, "pid": w.owner.pid,
        "owner": w.owner.nonce, "startedAt": w.started_at.0, "lastSeen": w.last_seen.0,
        "stoppedAt": w.stopped_at.map(|m| m.0),
        "counters": { "claimed": c.claimed, "succeeded": c.succeeded, "failed": c.failed,
            "deadLettered": c.dead_lettered, "renewals": c.renewals, "lapses": c.lapses,
            "losses": c.losses, "steals": c.steals },
    })
}

/// The query string of `GET /api/jobs`.
#[derive(Deserialize)]
pub struct JobsParams {
    queue: Option<String>,
    state: Option<String>,
    q: Option<String>,
    before: Option<i64>,
    limit: Option<u32>,
}

/// `GET /api/jobs?queue=&state=&q=&before=&limit=`: a page of jobs, newest
/// first (each with whether its queue is paused), and where the next starts.
pub async fn jobs(State(ui): State<Ui>, params: Result<Query<JobsParams>, QueryRejection>) -> Answer {
    let Query(p) = params?;
    let blank = |v: Option<String>| v.filter(|s| !s.is_empty());
    let state = match blank(p.state) {
        Some(name) => Some(ShownState::parse(&name).ok_or_else(|| {
            Failure(StatusCode::BAD_REQUEST, format!("{name:?} is not a state: queued, scheduled, retrying, running, succeeded, dead or cancelled"))
        })?),
        None => None,
    };
    // Ids start at 1: a page before 0 or -5 is no page (it answered an empty one).
    if let Some(before) = p.before.filter(|before| *before < 1) {
        return Err(Failure(StatusCode::BAD_REQUEST, format!("before must be a job id (a whole number from 1), got {before}")));
    }
    let query = JobQuery {
        queue: blank(p.queue),
        state,
        text: blank(p.q),
        before: p.before.map(JobId),
        limit: p.limit.unwrap_or(50),
    };
    let now = now();
    let page = ui.store.job_page(&query, now).await?;
    let paused = ui.store.paused_queues().await?;
    let jobs: Vec<Value> = page.jobs.iter().map(|j| job_row(j, now, &paused)).collect();
    Ok(Json(json!({
        "jobs": jobs,
        "next": page.next.map(|id| id.0),
        "searchedDownTo": page.searched_down_to.map(|id| id.0),
        "store": store_name(&ui),
        "readOnly": ui.read_only,
    }))
    .into_response())
}

/// Whether `queue` is paused, as a job's answer says it: `{"at": ms since
/// the Unix epoch, "by": who}`, or null.
fn paused_of(queue: &str, paused: &[PausedQueue]) -> Value {
    paused.iter().find(|p| p.queue == queue).map_or(Value::Null, |p| json!({ "at": p.paused_at.0, "by": p.paused_by }))
}

/// A job as a listing shows it, with whether its queue is paused.
fn job_row(job: &JobRecord, now: Millis, paused: &[PausedQueue]) -> Value {
    json!({
        "id": job.id.0,
        "queue": job.queue,
        "queuePaused": paused_of(&job.queue, paused),
        "state": ShownState::of(job, now),
        "attempts": job.attempts,
        "maxAttempts": job.max_attempts,
        "createdAt": job.created_at.0,
        "runAt": job.run_at.0,
        "finishedAt": job.finished_at.map(|m| m.0),
        "command": crate::inspect::cell(&crate::inspect::command(job)),
        "lastError": job.last_error.as_deref().map(crate::inspect::cell),
    })
}


/// `GET /api/jobs/{id}`: the job (with whether its queue is paused), every
/// attempt with what it produced (exit code, output), and its settlements.
pub async fn job(State(ui): State<Ui>, id: Result<Path<i64>, PathRejection>) -> Answer {
    let Path(id) = id?;
    let job = ui.store.job(JobId(id)).await.map_err(|e| match e {
        StoreError::UnknownJob(_) => Failure(
            StatusCode::NOT_FOUND,
            format!("no job {id}: never queued, or deleted once finished (purged, or by work --delete-succeeded)"),
        ),
        e => e.into(),
    })?;
    let results: HashMap<u64, Value> = ui.store.results(job.id).await?.into_iter().collect();
    let settlements = ui.store.job_settlements(&job).await?;
    let paused = ui.store.paused_queues().await?;
    let now = now();
    let attempts: Vec<Value> = job.attempt_log.iter().enumerate().map(|(n, a)| attempt(n + 1, a, results.get(&a.token))).collect();
    let settlements: Vec<Value> = settlements
        .iter()
        .map(|s| {
            json!({
                "id": s.id, "type": s.outcome.event_type(), "attempt": s.attempt, "token": s.token,
                "owner": s.owner.as_ref().map(|o| format!("{} pid {}", o.host_id, o.pid)),
                "error": s.error, "at": s.at.0,
                "retryAt": match s.outcome { leasehold::store::SettlementOutcome::Retrying { at } => Some(at.0), _ => None },
            })
        })
        .collect();
    Ok(Json(json!({
        "job": {
            "id": job.id.0, "queue": job.queue, "state": ShownState::of(&job, now),
            "queuePaused": paused_of(&job.queue, &paused),
            "command": crate::inspect::command(&job), "payload": job.payload,
            "attempts": job.attempts, "maxAttempts": job.max_attempts, "priority": job.priority,
            "createdAt": job.created_at.0, "runAt": job.run_at.0, "finishedAt": job.finished_at.map(|m| m.0),
            "timeoutMs": job.timeout.map(|t| t.as_millis() as u64), "idempotencyKey": job.idempotency_key,
            "lastError": job.last_error, "token": job.token,
            "cancellation": job.cancellation.as_ref().map(|c| json!({ "at": c.at.0, "by": c.by, "reason": c.reason })),
        },
        "attempts": attempts,
        "settlements": settlements,
        "store": store_name(&ui),
        "readOnly": ui.read_only,
    }))
    .into_response())
}

fn attempt(n: usize, a: &AttemptRecord, result: Option<&Value>) -> Value {
    json!({
        "n": n, "token": a.token, "outcome": a.outcome.as_str(),
        "owner": { "host": a.owner.host_id, "pid": a.owner.pid, "nonce": a.owner.nonce },
        "startedAt": a.started_at.0, "endedAt": a.ended_at.map(|m| m.0), "error": a.error,
        "exitCode": result.and_then(|r| r.get("exitCode")).cloned(),
        "resultError": result.and_then(|r| r.get("error")).cloned(),
        "output": result.and_then(|r| r.get("output")).cloned(),
        // What another kind of worker answered (a `leasehold/postgres` handler, a
        // Rust service's handler) has no exit code or output: its JSON is the result.
        "result": result.filter(|r| r.get("output").is_none()),
    })
}

/// `GET /api/schedules`: every schedule by name, with what `leasehold
/// schedule list` shows of it: cadence, paused or not, next run (and whether
/// it is overdue), last run and that job's state now.
pub async fn schedules(State(ui): State<Ui>) -> Answer {
    let now = now();
    let schedules: Vec<Value> = ui.store.schedules().await?.iter().map(|s| schedule_row(s, now)).collect();
    Ok(Json(json!({
        "schedules": schedules,
        "now": now.0,
        "store": store_name(&ui),
        "readOnly": ui.read_only,
    }))
    .into_response())
}

fn schedule_row(s: &ScheduleRecord, now: Millis) -> Value {
    let (every_ms, cron, time_zone) = match &s.spec.cadence {
        Cadence::Every(period) => (Some(period.as_millis() as u64), None, None),
        Cadence::Cron { expression, time_zone } => (None, Some(expression), Some(time_zone)),
    };
    json!({
        "name": s.spec.name,
        "queue": s.spec.queue,
        "cadence": s.spec.cadence.to_string(),
        "everyMs": every_ms, "cron": cron, "timeZone": time_zone,
        "pausedAt": s.paused_at.map(|m| m.0),
        "nextRun": s.next_slot.map(|m| m.0),
        "overdue": crate::schedule::overdue(s, now),
        // The job's state as stored; null once the job was deleted.
        "lastRun": s.last_run.map(|last| json!({ "slot": last.slot.0, "job": last.job.0, "state": last.state.map(|state| state.as_str()) })),
        "policy": crate::schedule::policy(s),
        "maxAttempts": s.spec.max_attempts,
        "timeoutMs": s.spec.timeout.map(|t| t.as_millis() as u64),
        "createdAt": s.created_at.0,
        "command": crate::inspect::payload_command(&s.spec.payload),
    })
}

/// `GET /metrics`: the store's Prometheus text.
pub async fn metrics(State(ui): State<Ui>) -> Answer {
    let text = leasehold::metrics::render_store(&ui.store, TokioClock::new().now()).await?;
    Ok(([(header::CONTENT_TYPE, leasehold::metrics::CONTENT_TYPE)], text).into_response())
}

/// The body of a cancel: why (optional). Another field is refused, not
/// dropped: a mistyped `reason` would cancel without the reason given.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CancelBody {
    reason: Option<String>,
}

/// Who steers from the dashboard, as recorded.
fn who() -> String {
    format!("{} (leasehold ui)", crate::steer::who())
}

fn done(ui: &Ui, message: String) -> Answer {
    ui.live.check_now();
    Ok(Json(json!({ "ok": true, "message": message })).into_response())
}

/// `POST /api/jobs/{id}/cancel` with `{"reason": "…"}` (optional).
/// No body (or one without a content type) is no reason.
pub async fn cancel(
    State(ui): State<Ui>,
    id: Result<Path<i64>, PathRejection>,
    body: Result<Option<Json<CancelBody>>, JsonRejection>,
) -> Answer {
    let Path(id) = id?;
    let reason = body?.and_then(|Json(b)| b.reason).filter(|r| !r.trim().is_empty());
    ui.store.cancel(&[JobId(id)], reason.as_deref(), &who(), now()).await?;
    done(&ui, format!("cancelled job {id}"))
}

/// `POST /api/jobs/{id}/retry`.
pub async fn retry(State(ui): State<Ui>, id: Result<Path<i64>, PathRejection>) -> Answer {
    let Path(id) = id?;
    let retried = ui.store.retry(&[JobId(id)], now()).await?;
    let wait = retried.first().and_then(crate::steer::retry_wait).map(|wait| format!(", {wait}")).unwrap_or_default();
    done(&ui, format!("queued job {id} again{wait}"))
}

/// `POST /api/queues/{queue}/pause`: 200 whether it paused the queue or
/// the queue was paused already (the message says which), as for resume.
pub async fn pause(State(ui): State<Ui>, queue: Result<Path<String>, PathRejection>) -> Answer {
    let Path(queue) = queue?;
    let paused = ui.store.pause_queue(&queue, &who(), now()).await?;
    done(&ui, if paused { format!("paused queue {queue}") } else { format!("queue {queue} was paused already") })
}

/// `POST /api/queues/{queue}/resume`: 200 whether it resumed the queue or
/// the queue was not paused (the message says which).
pub async fn resume(State(ui): State<Ui>, queue: Result<Path<String>, PathRejection>) -> Answer {
    let Path(queue) = queue?;
    let resumed = ui.store.resume_queue(&queue).await?;
    done(&ui, crate::steer::resume_message(&queue, resumed))
}

/// `POST /api/schedules/{name}/pause`.
pub async fn pause_schedule(State(ui): State<Ui>, name: Result<Path<String>, PathRejection>) -> Answer {
    let Path(name) = name?;
    let paused = ui.store.pause_schedule(&name, now()).await?;
    done(&ui, if paused { format!("paused schedule {name}") } else { format!("schedule {name} was paused already") })
}

/// `POST /api/schedules/{name}/resume`: from the next slot after now.
pub async fn resume_schedule(State(ui): State<Ui>, name: Result<Path<String>, PathRejection>) -> Answer {
    let Path(name) = name?;
    let resumed = ui.store.resume_schedule(&name, now()).await?;
    done(&ui, if resumed { format!("resumed schedule {name}") } else { format!("schedule {name} was not paused") })
}

/// Any action under `--read-only`.
pub async fn refuse_read_only() -> Failure {
    Failure(StatusCode::FORBIDDEN, "this dashboard is read-only (started with --read-only): it changes nothing".to_owned())
}
