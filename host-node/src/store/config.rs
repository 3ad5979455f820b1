//! How a store is set up: liveness rules and cadence of reclaims, retry
//! backoff, pool size, connect timeout, what completions keep.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use leasehold_core::Backoff;
use leasehold_core::lease::LivenessCheck;

use super::{StoreError, StoreResult};

/// The retry backoff of `fail`: attempt `k` (from 1) that fails is retried
/// after `min(max, initial × 2^(k−1))` (exponential, doubling; the exponent
/// stops growing at 30).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryBackoff {
    /// Delay after the first failed attempt. At most 2^32 ms.
    pub initial: Duration,
    /// The ceiling.
    pub max: Duration,
}

impl Default for RetryBackoff {
    /// 1 s doubling up to 1 h: the core's [`leasehold_core::backoff::RETRY_BACKOFF`],
    /// which every store shares.
    fn default() -> Self {
        let core = leasehold_core::backoff::RETRY_BACKOFF;
        RetryBackoff {
            initial: Duration::from_millis(core.initial_ms as u64),
            max: Duration::from_millis(core.max_ms as u64),
        }
    }
}

impl RetryBackoff {
    /// The core's backoff with these spans (doubling), after range checks.
    fn backoff(&self) -> StoreResult<Backoff> {
        let initial = i64::try_from(self.initial.as_millis()).unwrap_or(i64::MAX);
        let max = i64::try_from(self.max.as_millis()).unwrap_or(i64::MAX);
        if !(1..=1 << 32).contains(&initial) {
            return Err(StoreError::InvalidOption {
                option: "retry.initial",
                reason: "must be between 1ms and 2^32ms".to_owned(),
            });
        }
        if max < initial {
            return Err(StoreError::InvalidOption {
                option: "retry.max",
                reason: "must not be shorter than retry.initial".to_owned(),
            });
        }
        Ok(Backoff { initial_ms: initial as f64, max_ms: max as f64, multiplier: 2.0 })
    }

    /// The delays the fail statement binds, in ms ([`Backoff::delays`]):
    /// element `k − 1` follows failed attempt `k`, the last one every
    /// later attempt. Errors as [`StoreConfig::retry`] is refused.
    pub(crate) fn delays_ms(&self) -> StoreResult<Vec<i64>> {
        let delays = self.backoff()?.delays();
        Ok(delays.into_iter().map(|ms| i64::try_from(ms).unwrap_or(i64::MAX)).collect())
    }

    /// The delay after failed attempt `attempt` (from 1), as the core's
    /// [`Backoff::delay_after`] computes it; an invalid backoff (refused at
    /// connect) answers `max`.
    pub fn delay_after(&self, attempt: u32) -> Duration {
        match self.backoff() {
            Ok(backoff) => Duration::from_millis(backoff.delay_after(attempt)),
            Err(_) => self.max,
        }
    }
}

/// What a completion does with the job it completes
/// ([`StoreConfig::on_success`]).
///
/// `Keep` is what inspection needs; `Delete` is what a queue that never
/// looks back needs (graphile-worker deletes completed jobs; BullMQ's
/// `removeOnComplete`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnSuccess {
    /// The job row stays, `succeeded` with its `finished_at`; its attempt
    /// log and recorded results stay too, until [`super::Store::purge`].
    #[default]
    Keep,
    /// The completion deletes the job row, its attempt log (earlier failed
    /// or lost attempts) and its recorded results, in the same statement
    /// (PostgreSQL) or transaction (SQLite) and under the same fence. The
    /// job is then gone as if purged: [`super::Store::job`] answers
    /// [`super::StoreError::UnknownJob`], [`super::Store::counts`] counts no
    /// succeeded jobs, and its idempotency key is free again (a later
    /// enqueue with the key makes a new job). A second completion of it
    /// answers `LostMissing`. Failed and dead-lettered jobs are kept as
    /// with `Keep`.
    ///
    /// On PostgreSQL a completion then writes one tuple per job instead of
    /// a new row version and a primary-key entry: a fifth to a third more
    /// jobs per second with page claims (see the README's figures).
    Delete,
}

/// A store's settings. `Default`: lease-only liveness, [`RetryBackoff::default`],
/// the backend's pool size, a 5 s connect timeout, migrations on connect, a
/// vacuum of the jobs table after 10,000 single claims (PostgreSQL), a look
/// for stale leases at most once a second per queue, succeeded jobs kept,
/// reads and writes.
#[derive(Clone)]
#[non_exhaustive]
pub struct StoreConfig {
    /// Asked about the owner of each stale running job a claim finds: `true` refuses the reclaim. `None` is the lease alone:
    /// a stale lease is a gone owner. A refused
    /// job is not asked about again by this store for one more lease window.
    pub liveness: Option<Arc<dyn LivenessCheck + Send + Sync>>,
    /// Backoff between failed attempts.
    pub retry: RetryBackoff,
    /// Connections in the pool; `None`: 1 for SQLite (writes serialize on
    /// the file anyway, and one connection keeps them in FIFO order instead
    /// of busy-waiting), 10 for PostgreSQL.
    pub max_connections: Option<u32>,
    /// How long connecting (and acquiring a pooled connection) may take
    /// before the store reports the database unreachable. Longer than zero
    /// ([`super::Store::connect_with`] refuses a zero one).
    pub connect_timeout: Duration,
    /// Whether `connect` installs the queue's migrations.
    pub migrate: bool,
    /// PostgreSQL only: the store runs `VACUUM (SKIP_LOCKED)
    /// leasehold_jobs` in the background (one at a time; a failure is
    /// logged, never returned) after this many jobs claimed one per claim
    /// since its last vacuum, or ten times as many claimed in pages of 100.
    /// Every claim leaves a dead entry at the head of the queued-jobs index,
    /// where each later claim statement starts its scan, and autovacuum comes
    /// round only once a minute by default: without this, a busy queue's
    /// claims slow down as they work. The schedule estimates the entries
    /// the claims walked (jobs claimed since the last vacuum, per claim
    /// statement, empty polls included) and vacuums when they reach
    /// `vacuum_every² / 2`. `None` (or 0) leaves the table to autovacuum.
    /// Default 10,000. Needs the table's owner (or a superuser) to do
    /// anything; others get a server warning and no vacuum.
    pub vacuum_every: Option<u32>,
    /// How often a store's claims on one queue look for stale leases to
    /// reclaim: a claim looks when at least `min(reclaim_every, its own
    /// lease)` has passed since this store's last look on that queue, by the
    /// callers' `now` or by this process's monotonic clock, whichever says so
    /// first (PostgreSQL stamps leases with its own clock, so a caller's `now`
    /// may stand still). The first claim on a queue always looks, so does one
    /// whose `now` is before the last look, and so does the claim after a look
    /// that found stale jobs (a look takes at most a page of them: a dead
    /// worker's many jobs come back one claim after another). The claims in
    /// between take due queued jobs only, which saves an index scan per
    /// claim on PostgreSQL (a sixth of a one-job claim's cost) and a
    /// statement on SQLite. So a stale job waits at most this long past its
    /// stale window for a claim that takes it, on top of the claimants' own
    /// polling; the lease and liveness rules a reclaim follows are unchanged.
    /// `Duration::ZERO`: every claim looks. Default
    /// 1 s.
    pub reclaim_every: Duration,
    /// Whether completions keep succeeded jobs or delete them (see
    /// [`OnSuccess`]). Per store: each process decides for the jobs it
    /// completes. Default [`OnSuccess::Keep`].
    pub on_success: OnSuccess,
    /// A store that only reads (inspection): no migrations on connect; a
    /// SQLite file is opened read-only and never created, so a file or
    /// folder this process may not write can be read (see
    /// [`super::Store::connect_with`]); PostgreSQL sessions default to
    /// read-only transactions. Any write is then refused by the database.
    /// Default `false`.
    pub read_only: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            liveness: None,
            retry: RetryBackoff::default(),
            max_connections: None,
            connect_timeout: Duration::from_secs(5),
            migrate: true,
            vacuum_every: Some(10_000),
            reclaim_every: Duration::from_millis(leasehold_core::queue::rules::RECLAIM_EVERY_MS),
            on_success: OnSuccess::Keep,
            read_only: false,
        }
    }
}

impl StoreConfig {
    /// Sets the liveness check consulted before reclaiming a stale job.
    pub fn with_liveness(mut self, check: Arc<dyn LivenessCheck + Send + Sync>) -> Self {
        self.liveness = Some(check);
        self
    }

    /// Sets the retry backoff.
    pub fn with_retry(mut self, retry: RetryBackoff) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the pool size.
    pub fn with_max_connections(mut self, n: u32) -> Self {
        self.max_connections = Some(n);
        self
    }

    /// Sets the connect timeout.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets whether `connect` migrates.
    pub fn with_migrate(mut self, migrate: bool) -> Self {
        self.migrate = migrate;
        self
    }

    /// Sets how many jobs claimed one per claim between two vacuums of the
    /// jobs table (PostgreSQL; see [`StoreConfig::vacuum_every`]); `None`
    /// leaves it to autovacuum.
    pub fn with_vacuum_every(mut self, claims: Option<u32>) -> Self {
        self.vacuum_every = claims;
        self
    }

    /// Sets how often claims on one queue look for stale leases (see
    /// [`StoreConfig::reclaim_every`]);
    /// `Duration::ZERO`: at every claim. Any span is accepted.
    pub fn with_reclaim_every(mut self, every: Duration) -> Self {
        self.reclaim_every = every;
        self
    }

    /// Sets what completions do with succeeded jobs (see [`OnSuccess`]).
    pub fn with_on_success(mut self, on_success: OnSuccess) -> Self {
        self.on_success = on_success;
        self
    }

    /// Sets whether the store only reads (see [`StoreConfig::read_only`]).
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }
}

impl fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreConfig")
            .field(
                "liveness",
                &self
                    .liveness
                    .as_ref()
                    .map(|_| "custom")
                    .unwrap_or("lease-only"),
            )
            .field("retry", &self.retry)
            .field("max_connections", &self.max_connections)
            .field("connect_timeout", &self.connect_timeout)
            .field("migrate", &self.migrate)
            .field("vacuum_every", &self.vacuum_every)
            .field("reclaim_every", &self.reclaim_every)
            .field("on_success", &self.on_success)
            .field("read_only", &self.read_only)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_initial_up_to_max() {
        let b = RetryBackoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(1000),
        };
        let delays: Vec<u128> = (1..=6).map(|k| b.delay_after(k).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        // What the fail statement binds: the same delays, up to the ceiling.
        assert_eq!(b.delays_ms().unwrap(), [100, 200, 400, 800, 1000]);
    }

    #[test]
    fn backoff_with_max_below_initial_is_refused() {
        let b = RetryBackoff {
            initial: Duration::from_secs(2),
            max: Duration::from_secs(1),
        };
        assert!(b.delays_ms().unwrap_err().to_string().contains("retry.max"));
    }

    #[test]
    fn backoff_with_zero_initial_is_refused() {
        let b = RetryBackoff {
            initial: Duration::ZERO,
            max: Duration::from_secs(1),
        };
        assert!(
            b.delays_ms()
                .unwrap_err()
                .to_string()
                .contains("retry.initial")
        );
    }
}
