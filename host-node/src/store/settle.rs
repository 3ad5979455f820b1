//! The fenced writes: renewals, completions, releases and failures, many
//! fences in one statement, each landing only while its token holds; and the
//! explanation of each fence that did not land ([`FenceOutcome`]).

use leasehold_core::Millis;
use leasehold_core::lease::{FenceOutcome, OwnerId};

use super::{FailOutcome, Fence, JobState, Store, StoreError, StoreResult, exchange, validate};

impl Store {
    /// Renews one lease: the heartbeat becomes now and the lease runs its
    /// stale window again. Fenced: lands only while the job is running under
    /// `fence.token` (even past its stale window, as long as nobody took it).
    /// Answers `Updated`, or why the claim was lost.
    pub async fn heartbeat(&self, fence: Fence, now: Millis) -> StoreResult<FenceOutcome> {
        Ok(self.heartbeat_many(&[fence], now).await?[0])
    }

    /// Renews many leases in one statement, each fenced on its own; answers
    /// in input order.
    pub async fn heartbeat_many(
        &self,
        fences: &[Fence],
        now: Millis,
    ) -> StoreResult<Vec<FenceOutcome>> {
        self.fenced(fences, now, FencedWrite::Renew { owner_nonce: None })
            .await
    }

    /// The supervision's check after a gap in renewals: renews the lease only if the job is still running under
    /// `fence.token` AND recorded as owned by `owner` (same nonce).
    pub async fn reconfirm(
        &self,
        fence: Fence,
        owner: &OwnerId,
        now: Millis,
    ) -> StoreResult<FenceOutcome> {
        let write = FencedWrite::Renew {
            owner_nonce: Some(&owner.nonce),
        };
        Ok(self.fenced(&[fence], now, write).await?[0])
    }

    /// Completes one job: `succeeded`, with `finished_at = now`, and — in
    /// the same statement (PostgreSQL) or transaction (SQLite) — `result`,
    /// if any (any JSON: the CLI stores `{"exitCode": …, "output": …}`), as
    /// the attempt's result ([`Store::results`]). One fenced write: a fence
    /// that does not hold writes neither. The succeeded attempt is not
    /// written to the attempts table: [`Store::job`] reads it off the job
    /// row (owner, token, claim time, finish time). Fenced like
    /// [`Store::heartbeat`]; a second completion answers `LostNotRunning`
    /// and changes nothing.
    ///
    /// With [`OnSuccess::Delete`](super::OnSuccess::Delete) ([`StoreConfig::on_success`](super::StoreConfig::on_success)) the
    /// completion deletes the job with its attempt log and results instead,
    /// under the same fence (`result` is not kept), and a second completion
    /// answers `LostMissing`.
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] for a token or `now` out of range, or a
    /// `result` holding the NUL character (`\u0000`, which PostgreSQL's
    /// jsonb can not store) in a string or key, on every backend;
    /// [`StoreError::Database`] when the write fails (nothing landed).
    pub async fn complete(
        &self,
        fence: Fence,
        result: Option<&serde_json::Value>,
        now: Millis,
    ) -> StoreResult<FenceOutcome> {
        Ok(self.complete_many(&[(fence, result)], now).await?[0])
    }

    /// Completes many jobs in one statement, each fenced on its own and
    /// each with its result, if any, written only where its fence holds;
    /// answers in input order. Keeps or deletes them as [`Store::complete`]
    /// does. A job listed with two tokens whose current one lands under
    /// [`OnSuccess::Delete`](super::OnSuccess::Delete) is answered `LostMissing` for both: with the
    /// row gone, nothing says which token it held (a landed completion
    /// answered lost is safe; the reverse would not be).
    pub async fn complete_many(
        &self,
        completions: &[(Fence, Option<&serde_json::Value>)],
        now: Millis,
    ) -> StoreResult<Vec<FenceOutcome>> {
        let fences: Vec<Fence> = completions.iter().map(|(fence, _)| *fence).collect();
        let results = result_texts(completions.iter().map(|(_, result)| *result))?;
        self.fenced(&fences, now, FencedWrite::Complete { results: &results })
            .await
    }

    /// Hands one claimed job back unperformed (a claim heard too late to
    /// start its work, say): see [`Store::release_many`].
    pub async fn release(&self, fence: Fence, now: Millis) -> StoreResult<FenceOutcome> {
        Ok(self.release_many(&[fence], now).await?[0])
    }

    /// Hands claimed jobs back unperformed: each is queued again at once, its
    /// attempt not counted and nothing logged, so a worker that stops with a
    /// page of claimed jobs still waiting lets others take them now rather
    /// than after their leases. Fenced like [`Store::complete`]; the next
    /// claim gives a greater token, so the released one stays dead.
    pub async fn release_many(
        &self,
        fences: &[Fence],
        now: Millis,
    ) -> StoreResult<Vec<FenceOutcome>> {
        self.fenced(fences, now, FencedWrite::Release).await
    }

    async fn fenced(
        &self,
        fences: &[Fence],
        now: Millis,
        write: FencedWrite<'_>,
    ) -> StoreResult<Vec<FenceOutcome>> {
        if fences.is_empty() {
            return Ok(Vec::new());
        }
        let now_ms = validate::millis("now", now)?;
        let pairs = fence_pairs(fences)?;
        let updated = match write {
            FencedWrite::Renew { owner_nonce } => self.backend().renew(&pairs, owner_nonce, now_ms).await,
            FencedWrite::Complete { results } => {
                let on_success = self.inner.config.on_success;
                self.backend().complete(&pairs, results, on_success, now_ms).await
            }
            FencedWrite::Release => self.backend().release(&pairs, now_ms).await,
        }?;
        let expected_nonce = match write {
            FencedWrite::Renew { owner_nonce } => owner_nonce,
            FencedWrite::Complete { .. } | FencedWrite::Release => None,
        };
        self.explain(fences, &updated, expected_nonce).await
    }

    /// Answers each fence, reading the rows of those that did not land.
    pub(super) async fn explain(
        &self,
        fences: &[Fence],
        updated: &[i64],
        expected_nonce: Option<&str>,
    ) -> StoreResult<Vec<FenceOutcome>> {
        let lost = exchange::unlanded(fences, updated);
        let rows = if lost.is_empty() {
            Vec::new()
        } else {
            self.backend().fence_rows(&lost).await?
        };
        exchange::fence_outcomes(fences, updated, &rows, expected_nonce)
    }

    /// Fails one attempt with `error`, and writes `result`, if any, as the
    /// attempt's result in the same statement (PostgreSQL) or transaction
    /// (SQLite). Fenced: a fence that does not hold writes neither. With
    /// attempts left, the job is queued again after the retry backoff
    /// ([`RetryBackoff`](super::RetryBackoff)); on the last attempt it is dead-lettered (`dead`,
    /// `last_error = error`). Either way the attempt is logged as failed
    /// with the error.
    ///
    /// The NUL character in `error` is stored as U+FFFD (PostgreSQL's text
    /// can not hold it).
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] for a token or `now` out of range, or a
    /// `result` holding the NUL character (`\u0000`, which PostgreSQL's
    /// jsonb can not store) in a string or key, on every backend;
    /// [`StoreError::Database`] when the write fails (nothing landed).
    pub async fn fail(
        &self,
        fence: Fence,
        error: &str,
        result: Option<&serde_json::Value>,
        now: Millis,
    ) -> StoreResult<FailOutcome> {
        let now_ms = validate::millis("now", now)?;
        let pair = fence_pairs(&[fence])?[0];
        let delays = &self.inner.retry_delays_ms;
        let result = result.map(result_text).transpose()?;
        let error = error_text(error);
        let settled = self.backend().fail(pair, &error, result.as_deref(), delays, now_ms).await?;
        match settled {
            Some((JobState::Dead, _)) => Ok(FailOutcome::DeadLettered),
            Some((_, run_at)) => Ok(FailOutcome::Retrying {
                at: Millis(run_at.max(0) as u64),
            }),
            None => Ok(FailOutcome::Lost(
                self.explain(&[fence], &[], None).await?[0],
            )),
        }
    }
}

/// The fenced writes over many jobs at once.
#[derive(Clone, Copy)]
enum FencedWrite<'a> {
    Renew { owner_nonce: Option<&'a str> },
    /// With each fence's result as JSON text, in the fences' order.
    Complete { results: &'a [Option<String>] },
    Release,
}

/// Results as the JSON text the statements bind, in order; a result holding
/// the NUL character is refused before anything is written, on SQLite too:
/// PostgreSQL's jsonb refuses it with a database error, which a worker's
/// settle would try again for ever.
pub(super) fn result_texts<'a>(results: impl Iterator<Item = Option<&'a serde_json::Value>>) -> StoreResult<Vec<Option<String>>> {
    results.map(|r| r.map(result_text).transpose()).collect()
}

/// One result as the JSON text a statement binds (see [`result_texts`]).
fn result_text(result: &serde_json::Value) -> StoreResult<String> {
    if validate::holds_nul(result) {
        return Err(StoreError::InvalidOption {
            option: "result",
            reason: validate::NUL_IN_JSON.to_owned(),
        });
    }
    Ok(result.to_string())
}

/// An attempt's error as its text column stores it: PostgreSQL can not
/// store the NUL character in text, so it becomes U+FFFD (as the npm
/// package's queues write it), on SQLite too.
fn error_text(error: &str) -> std::borrow::Cow<'_, str> {
    if error.contains('\0') {
        error.replace('\0', "\u{FFFD}").into()
    } else {
        error.into()
    }
}

/// Fences as bound into SQL: `(job id, token)`.
pub(super) fn fence_pairs(fences: &[Fence]) -> StoreResult<Vec<(i64, i64)>> {
    fences
        .iter()
        .map(|f| {
            let token = i64::try_from(f.token).map_err(|_| StoreError::InvalidOption {
                option: "fence.token",
                reason: format!("{} does not fit in i64", f.token),
            })?;
            Ok((f.job.0, token))
        })
        .collect()
}
