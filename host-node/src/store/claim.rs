//! The claim round: one claim statement (optionally settling a completion
//! in it), then the liveness judgement of the stale leases it found, and the
//! takeover of those whose owner is not called alive. The memo of refused
//! candidates and the reclaim schedule it consults live in [`Store`]'s state.

use std::time::Duration;

use leasehold_core::Millis;
use leasehold_core::lease::{FenceOutcome, LeaseWatch, LivenessContext, OwnerId};

use super::exchange::{ClaimRequest, ClaimRound, OwnerParams, TakenOver, Takeover};
use super::settle::{fence_pairs, result_texts};
use super::validate;
use super::watch::{version, watch_of};
use super::{BackendKind, ClaimedJob, Fence, JobId, MAX_PAGE, Store, StoreError, StoreResult};

impl Store {
    /// Claims at most one job of `queue` for `claimant` under a lease of
    /// `lease` (its stale window); see [`Store::claim_page`].
    pub async fn claim(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
    ) -> StoreResult<Option<ClaimedJob>> {
        Ok(self
            .claim_page(queue, claimant, now, lease, 1)
            .await?
            .into_iter()
            .next())
    }

    /// Claims up to `n` (1..=[`MAX_PAGE`]) jobs of `queue` for `claimant`.
    ///
    /// Takes stale running jobs first (their work is the oldest), then due
    /// queued jobs by priority, due time, id — in one statement on
    /// PostgreSQL, two on SQLite (a read of stale candidates, then one atomic
    /// claim); a stale job found costs one more statement for its takeover.
    /// Stale leases are looked for at most once per
    /// [`StoreConfig::reclaim_every`](super::StoreConfig::reclaim_every) (default 1 s) per queue, or per lease
    /// if that is shorter, and again at the claim after a look that found
    /// some; the claims in between take due queued jobs only (one statement
    /// on both backends). A stale job
    /// is taken only if the configured liveness check does not call its
    /// owner alive (with no check configured, a stale lease is enough), and
    /// only if it still matches the snapshot read (compare-and-swap); if that
    /// lease was its last attempt it is dead-lettered instead of handed out.
    /// Each claimed job carries a fresh fencing token and the claimant is
    /// recorded as its owner. An empty page means nothing is due.
    ///
    /// On SQLite a stale job is taken over only once this store has seen its
    /// lease unrenewed for longer than its window as well, timed on the
    /// callers' `now` (pass a clock that never steps, as the runner's does),
    /// unless the liveness check proves its owner gone
    /// ([`LivenessCheck::proven_gone`](leasehold_core::lease::LivenessCheck::proven_gone)):
    /// SQLite leases are stamped with each worker's own clock, and two
    /// workers' clocks can read a whole step apart (one started after an NTP
    /// step or a resume from sleep). Each look reads the queue's running
    /// leases for that. A lease so watched is taken over whether or not it
    /// has expired on this store's wall clock: stamped by an owner whose
    /// clock reads ahead, it would expire here only that much later.
    /// Likewise a job retried after a cancel while it ran
    /// (see [`Store::retry`]) is claimed only once this store has seen the
    /// cancelled attempt's lease unrenewed for its window: up to one window
    /// after this store's first look at it. PostgreSQL stamps and judges
    /// every lease with the server's one clock.
    pub async fn claim_page(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
    ) -> StoreResult<Vec<ClaimedJob>> {
        self.claim_page_excluding(queue, claimant, now, lease, n, &[]).await
    }

    /// [`Store::claim_page`], never taking over the stale leases of the jobs
    /// in `exclude`: a worker passes the jobs whose outcome it still holds
    /// unsettled (their leases may have gone stale while the database was
    /// away), so it does not reclaim them from itself, which would fence its
    /// own settle out and run finished work again.
    pub async fn claim_page_excluding(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
        exclude: &[JobId],
    ) -> StoreResult<Vec<ClaimedJob>> {
        Ok(self
            .claim_round(queue, claimant, now, lease, n, None, exclude)
            .await?
            .1)
    }

    /// Completes `fence` and claims up to `n` more jobs of `queue` — on
    /// PostgreSQL in ONE statement, so one commit and one round trip serve
    /// both (SQLite runs the two one after the other). For a worker slot
    /// that finished a job and wants the next: the completion is fenced
    /// exactly as [`Store::complete`] (and keeps or deletes the job as it
    /// does), the claim behaves as
    /// [`Store::claim_page`], and the completion lands whether or not the
    /// claim finds anything.
    #[allow(clippy::too_many_arguments, reason = "public API: the completion's fence and result, then claim_page's own arguments")]
    pub async fn complete_and_claim(
        &self,
        fence: Fence,
        result: Option<&serde_json::Value>,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
    ) -> StoreResult<(FenceOutcome, Vec<ClaimedJob>)> {
        let (done, page) = self
            .claim_round(queue, claimant, now, lease, n, Some((fence, result)), &[])
            .await?;
        let outcome = self.explain(&[fence], &done, None).await?[0];
        Ok((outcome, page))
    }

    /// One claim statement (optionally completing `settle` in it), then the
    /// liveness judgement and takeover of the stale candidates it found.
    /// Answers the ids the completion landed on, and the page. Stale leases
    /// of `exclude` are not taken over.
    #[allow(clippy::too_many_arguments)]
    async fn claim_round(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
        settle: Option<(Fence, Option<&serde_json::Value>)>,
        exclude: &[JobId],
    ) -> StoreResult<(Vec<i64>, Vec<ClaimedJob>)> {
        validate::queue_name(queue)?;
        if !(1..=MAX_PAGE).contains(&n) {
            return Err(StoreError::InvalidOption {
                option: "n",
                reason: format!("page size must be 1..={MAX_PAGE}, got {n}"),
            });
        }
        let lease_ms = validate::lease_ms(lease)?;
        let now_ms = validate::millis("now", now)?;
        let owner = OwnerParams::new(claimant)?;
        let settle_results = result_texts(settle.iter().map(|(_, result)| *result))?;
        let settle = fence_pairs(&settle.iter().map(|(fence, _)| *fence).collect::<Vec<_>>())?;
        let mut refused = self.refused_ids(now);
        refused.extend(exclude.iter().map(|id| id.0));
        let look_for_stale = self.inner.reclaim.turn(queue, now, lease_ms);
        // SQLite: what this store's watch of the queue lets go (see watch.rs).
        let (watched, watched_stale) = match self.kind() {
            BackendKind::Sqlite => {
                let watches = self.inner.watches.lock().unwrap_or_else(|e| e.into_inner());
                match watches.get(queue) {
                    Some(watch) => (watch.watched(now), if look_for_stale { watch.stale(now) } else { Vec::new() }),
                    None => (Vec::new(), Vec::new()),
                }
            }
            _ => (Vec::new(), Vec::new()),
        };
        let request = ClaimRequest {
            queue,
            owner: owner.clone(),
            lease_ms,
            n: n as i64,
            look_for_stale,
            refused: &refused,
            watched: &watched,
            watched_stale: &watched_stale,
            settle: &settle,
            settle_results: &settle_results,
            on_success: self.inner.config.on_success,
            now: now_ms,
        };
        // The lease watch times what a look read from when the read had
        // happened: `now` is when the round began, and a statement held up
        // (a lock, a busy pool) reads leases renewed after that.
        let started = std::time::Instant::now();
        let read_at = || Millis(now.0.saturating_add(started.elapsed().as_millis() as u64));
        let (round, done): (ClaimRound, Vec<i64>) =
            self.backend().claim(&request).await?;
        self.claimed(round.claimed.len());
        let takeovers = {
            let seen_at = read_at();
            // SQLite only (see `judge_stale`); locked, and the queue's watch
            // looked up, once per round.
            let mut watches;
            let watch = if self.kind() == BackendKind::Sqlite {
                watches = self.inner.watches.lock().unwrap_or_else(|e| e.into_inner());
                let watch = watch_of(&mut watches, queue);
                match &round.leases {
                    Some(leases) => {
                        // Every lease of the queue, this claim's own among them.
                        watch.look(leases, seen_at);
                        Some(&mut watch.leases)
                    }
                    None => {
                        // The leases this claim just wrote, as the next look
                        // will read them.
                        watch.sight_claimed(&round.claimed, seen_at);
                        None
                    }
                }
            } else {
                None
            };
            if round.stale.is_empty() {
                return Ok((done, round.claimed));
            }
            self.inner.reclaim.found_stale(queue);
            self.judge_stale(&round, claimant, now, watch.map(|watch| (watch, seen_at)))
        };
        let mut page = Vec::with_capacity(round.claimed.len() + takeovers.len());
        if !takeovers.is_empty() {
            let taken = self.backend().take_over(&owner, lease_ms, &takeovers, now_ms).await?;
            page.extend(taken.into_iter().filter_map(|t| match t {
                TakenOver::Claimed(mut job) => {
                    // Reclaimed from a lost worker only when the attempt
                    // before was another owner's: our own stale lease taken
                    // back is a retry, not a rescue.
                    job.reclaimed = !takeovers.iter().any(|t| t.candidate.id == job.id.0 && is_own(&t.candidate.owner, claimant));
                    Some(job)
                }
                TakenOver::DeadLettered(id) => {
                    tracing::warn!(
                        job = id,
                        queue,
                        "lease lost on the final attempt; dead-lettered"
                    );
                    None
                }
            }));
        }
        if round.leases.is_some() {
            // The leases just taken over, likewise.
            let mut watches = self.inner.watches.lock().unwrap_or_else(|e| e.into_inner());
            watch_of(&mut watches, queue).sight_claimed(&page, read_at());
        }
        page.extend(round.claimed);
        Ok((done, page))
    }

    /// Counts one claim statement that claimed `n` jobs; on PostgreSQL,
    /// starts the background vacuum of the jobs table when one is due (see
    /// [`StoreConfig::vacuum_every`]).
    fn claimed(&self, n: usize) {
        if let Some(turn) = self.inner.vacuum.claimed(n)
            && let Some(vacuum) = self.backend().vacuum()
        {
            tokio::spawn(async move {
                vacuum.await;
                drop(turn);
            });
        }
    }

    /// Asks the liveness check about each stale candidate; remembers the
    /// refused ones for one more lease window. With a `watch` (SQLite), a
    /// candidate whose owner is not proven gone must also have been seen
    /// unrenewed for longer than its window, timed on the callers' clock
    /// (`now`, plus the time the round took up to the read); one not seen
    /// that long yet is remembered as refused until it could have been, so
    /// that it does not take the page's room at every look. One it has seen
    /// that long is taken whatever the wall clock says (`watched`: the swap
    /// does not judge it by the wall clock again), as the stale read names
    /// such leases too.
    ///
    /// Why SQLite needs the watch: its leases are stamped and judged with
    /// each worker's own clock, and two workers' clocks can disagree by a
    /// whole step. The runner's clock is the system time read when it
    /// started, carried on by the monotonic clock, so a worker started after
    /// an NTP step or a resume from sleep judges an older worker's renewals
    /// that far in the past, at every look; a clock read afresh would step
    /// under every worker at once instead. Seen unrenewed on the claimant's
    /// own clock, a lease is stale whatever the wall clocks did. PostgreSQL
    /// stamps and judges every lease with the server's one clock.
    fn judge_stale<'a>(
        &self,
        round: &'a ClaimRound,
        claimant: &OwnerId,
        now: Millis,
        mut watch: Option<(&mut LeaseWatch, Millis)>,
    ) -> Vec<Takeover<'a>> {
        let statement_now = Millis(u64::try_from(round.now).unwrap_or(0));
        let mut refused = self.inner.refused.lock().unwrap_or_else(|e| e.into_inner());
        round
            .stale
            .iter()
            .filter_map(|c| {
                // Our own incarnation's stale job: its claim landed but the
                // answer never reached us (a dropped connection), or our
                // supervision already lapsed the work before the lease went
                // stale, on this very clock. Either way nobody works on it,
                // and a pid probe would call us alive forever: the expired
                // lease alone decides.
                if is_own(&c.owner, claimant) {
                    return Some((c, false));
                }
                let context = LivenessContext {
                    claimant,
                    heartbeat_at: c.heartbeat_at.map(|h| Millis(h.max(0) as u64)),
                    now: statement_now,
                };
                let check = self.inner.config.liveness.as_deref();
                if check.is_some_and(|check| check.is_alive(&c.owner, &context)) {
                    refused.insert(c.id, now.0.saturating_add(c.lease_ms.max(0) as u64));
                    return None;
                }
                match watch.as_mut() {
                    Some((watch, seen_at)) => {
                        let window = c.lease_ms.max(0) as u64;
                        let seen = watch.sight(c.id.max(0) as u64, version(c.token, c.heartbeat_at), seen_at.0);
                        if seen > window {
                            // Seen unrenewed on our own clock: taken whatever
                            // the wall clocks say (the owner's may read ahead).
                            // That holds for an owner proven gone too, whose
                            // last stamp may lie a clock step in the future.
                            return Some((c, true));
                        }
                        if check.is_some_and(|check| check.proven_gone(&c.owner, &context)) {
                            // Proven gone: no need to wait for the watch, so
                            // taken now if the wall clock calls it stale too
                            // (the swap checks that), else once the watch lets
                            // it go, as above.
                            return Some((c, false));
                        }
                        // Not named again until the watch could let it go: a
                        // refused candidate would otherwise fill the page of
                        // every look (looks follow one another while they find
                        // stale leases) and the claimant would claim no queued
                        // job while its owner works. The leases read at each
                        // look keep the watch current meanwhile.
                        refused.insert(c.id, now.0.saturating_add(window - seen + 1));
                        None
                    }
                    // Taken if the wall clock calls it stale too (the swap
                    // checks that).
                    _ => Some((c, false)),
                }
            })
            .map(|(candidate, watched)| Takeover {
                candidate,
                note: format!(
                    "lease expired; reclaimed by {} pid {}",
                    claimant.host_id, claimant.pid
                ),
                watched,
            })
            .collect()
    }

    /// The refused ids still inside their window at `now`; forgets the rest.
    fn refused_ids(&self, now: Millis) -> Vec<i64> {
        let mut refused = self.inner.refused.lock().unwrap_or_else(|e| e.into_inner());
        refused.retain(|_, until| *until > now.0);
        refused.keys().copied().collect()
    }
}

/// Whether `owner` is `claimant`'s own incarnation (same host, same nonce).
fn is_own(owner: &OwnerId, claimant: &OwnerId) -> bool {
    owner.nonce == claimant.nonce && owner.host_id == claimant.host_id
}
