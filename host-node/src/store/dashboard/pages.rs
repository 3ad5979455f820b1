//! Pages of jobs by id (keyset), with queue, state and text filters, and
//! the change marker a live view polls.

use leasehold_core::Millis;

use super::{JobPage, JobQuery, MAX_SEARCH_TEXT, PAGE_WINDOW, ShownState};
use crate::store::{JobId, JobRecord, Store, StoreError, StoreResult, rows, validate};

impl Store {
    /// One page of jobs matching `query`, newest first, without attempt
    /// logs; `now` (SQLite; PostgreSQL uses its own clock) tells queued,
    /// scheduled and retrying apart. Pages by id (keyset): a page costs the
    /// same at any depth. A state with an index of its own (running, dead,
    /// cancelled) is read through it; any other filter looks at up to
    /// [`PAGE_WINDOW`] ids and may end the page early ([`JobPage::next`]).
    ///
    /// # Errors
    /// [`StoreError::InvalidQueueName`] for a malformed queue;
    /// [`StoreError::InvalidOption`] (`limit`, `text`) for a limit outside 1
    /// to 500 or a text empty or longer than [`MAX_SEARCH_TEXT`];
    /// [`StoreError::Database`] when the read fails.
    pub async fn job_page(&self, query: &JobQuery, now: Millis) -> StoreResult<JobPage> {
        if let Some(queue) = &query.queue {
            validate::queue_name(queue)?;
        }
        if !(1..=500).contains(&query.limit) {
            return Err(StoreError::InvalidOption { option: "limit", reason: format!("{} is not 1 to 500", query.limit) });
        }
        if query.text.as_ref().is_some_and(|t| t.is_empty() || t.len() > MAX_SEARCH_TEXT) {
            return Err(StoreError::InvalidOption {
                option: "text",
                reason: format!("give 1 to {MAX_SEARCH_TEXT} bytes to search for"),
            });
        }
        // PostgreSQL splits queued jobs by its own clock.
        let now_ms = validate::millis("now", now)?;
        let indexed = matches!(query.state, Some(ShownState::Running | ShownState::Dead | ShownState::Cancelled));
        let span = self.rows("dashboard_span", &[], |row| Ok((row.opt_int_at(0)?, row.opt_int_at(1)?))).await?;
        let Some(&span) = span.first() else {
            return Err(sqlx::Error::RowNotFound.into());
        };
        let (Some(oldest), Some(newest)) = span else {
            return Ok(JobPage { jobs: Vec::new(), next: None, searched_down_to: None });
        };
        let below = query.before.map_or(newest.saturating_add(1), |b| b.0.min(newest.saturating_add(1)));
        let floor = if indexed { oldest } else { below.saturating_sub(PAGE_WINDOW).max(oldest) };
        let queue = query.queue.as_deref();
        let stored = query.state.map(|s| s.stored().as_str());
        let split = query.state.and_then(ShownState::queued_split);
        let text = query.text.as_deref();
        let limit = i64::from(query.limit);
        let statement = match query.state {
            Some(ShownState::Running) => "dashboard_page_running",
            Some(ShownState::Dead | ShownState::Cancelled) => "dashboard_page_parked",
            _ => "dashboard_page",
        };
        let offered = [
            ("below", below.into()),
            ("floor", floor.into()),
            ("queue", queue.into()),
            ("state", stored.into()),
            ("split", split.into()),
            ("now", now_ms.into()),
            ("text", text.into()),
            ("limit", limit.into()),
        ];
        let found = self.rows(statement, &offered, rows::job).await?;
        Ok(page(found, query.limit as usize, floor, oldest))
    }

    /// A text that changes when jobs change state: enqueued, claimed,
    /// settled, cancelled, retried, purged, a queue paused or resumed, or
    /// a schedule added, removed, paused, resumed or moved on to its next
    /// slot (not at a lease renewal). Compare two answers for equality; the text
    /// itself means nothing. Cheap: a few index lookups.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the read fails.
    pub async fn change_marker(&self) -> StoreResult<String> {
        let marker = self.rows("dashboard_change_marker", &[], |row| row.text_at(0)).await?;
        marker.into_iter().next().ok_or_else(|| sqlx::Error::RowNotFound.into())
    }
}

/// The page's `next`: after a full page, its last id; after a short one,
/// its window's floor when older jobs remain below it.
fn page(jobs: Vec<JobRecord>, limit: usize, floor: i64, oldest: i64) -> JobPage {
    if jobs.len() >= limit {
        let next = jobs.last().map(|j| j.id).filter(|id| id.0 > oldest);
        return JobPage { jobs, next, searched_down_to: None };
    }
    let more = floor > oldest;
    JobPage {
        jobs,
        next: more.then_some(JobId(floor)),
        searched_down_to: more.then_some(JobId(floor)),
    }
}
