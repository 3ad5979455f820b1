//! The outcomes a process's workers hold unsettled: what each handler
//! answered, kept from the moment it answered until its settle lands, so the
//! settle can be tried again and the claims can leave those jobs alone; and,
//! for a while after a refused fence, so that a job that comes back to this
//! worker is settled with what it answered rather than run again.

use crate::store::JobId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What a handler answered for one attempt, as the settle writes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reached {
    /// Complete the job, recording `result` with it if any.
    Completed(Option<serde_json::Value>),
    /// Fail the attempt with `error`, recording `result` with it if any.
    Failed { error: String, result: Option<serde_json::Value> },
}

/// The outcomes a [`super::Worker`] holds unsettled, by job, so its claims
/// never reclaim a job whose finished outcome it still holds (see
/// [`super::Worker::unsettled`]; clones share the set).
///
/// A job's stale lease is taken over with a greater token, which would fence
/// the holder's own settle out: finished work thrown away and run again. The
/// worker's claims exclude the held jobs; a peer process may still
/// take them over once stale (its claim does not know them), and then the
/// fence refuses the late settle, as it must.
///
/// The exclusion list is read when a claim is made, and the database judges
/// the leases when the statement runs: a claim held up (by a lock, a full
/// connection pool) can still take over a job that finished here meanwhile
/// and went stale. Such a job comes back to this worker under a new token;
/// the worker then moves its outcome to that token, and the
/// outcome is written instead of the work running again.
#[derive(Clone, Debug, Default)]
pub struct Unsettled(Arc<Mutex<Outcomes>>);

#[derive(Debug, Default)]
struct Outcomes {
    /// Outcomes waiting for their settle to land: (token, outcome).
    held: HashMap<JobId, (u64, Reached)>,
    /// Outcomes whose settle the fence refused, kept until the instant
    /// given: the takeover that moved the token may be this worker's own,
    /// and its answer may reach the worker after the refusal did.
    refused: HashMap<JobId, (u64, Reached, Instant)>,
}

impl Unsettled {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many outcomes are held now, waiting for their settle (refused
    /// ones are not counted).
    pub fn len(&self) -> usize {
        self.lock().held.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn hold(&self, job: JobId, token: u64, reached: Reached) {
        self.lock().held.insert(job, (token, reached));
    }

    /// The outcome held for `job` under `token`.
    pub(crate) fn get(&self, job: JobId, token: u64) -> Option<Reached> {
        self.lock().held.get(&job).filter(|(t, _)| *t == token).map(|(_, r)| r.clone())
    }

    /// Forgets `job` under `token` once its settle landed (or failed for
    /// good).
    pub(crate) fn release(&self, job: JobId, token: u64) {
        let mut outcomes = self.lock();
        if outcomes.held.get(&job).is_some_and(|(t, _)| *t == token) {
            outcomes.held.remove(&job);
        }
    }

    /// The settle of `job` under `token` was refused by the fence: the
    /// outcome stops being held, and is kept until `until` for
    /// [`Unsettled::adopt`].
    pub(crate) fn refused(&self, job: JobId, token: u64, until: Instant) {
        let mut outcomes = self.lock();
        let now = Instant::now();
        outcomes.refused.retain(|_, (_, _, kept)| *kept > now);
        if outcomes.held.get(&job).is_some_and(|(t, _)| *t == token)
            && let Some((token, reached)) = outcomes.held.remove(&job)
        {
            outcomes.refused.insert(job, (token, reached, until));
        }
    }

    /// Moves the outcome this worker has for `job` under an earlier token
    /// (held, or refused and still kept) to `token`, held again; answers
    /// whether there was one. See the type's docs for how a job comes back.
    pub(crate) fn adopt(&self, job: JobId, token: u64) -> bool {
        let mut outcomes = self.lock();
        if let Some((held, _)) = outcomes.held.get_mut(&job) {
            if *held >= token {
                return false;
            }
            *held = token;
            return true;
        }
        match outcomes.refused.remove(&job) {
            Some((earlier, reached, until)) if earlier < token && until > Instant::now() => {
                outcomes.held.insert(job, (token, reached));
                true
            }
            _ => false,
        }
    }

    /// The jobs held now, for a claim to exclude.
    pub(crate) fn jobs(&self) -> Vec<JobId> {
        self.lock().held.keys().copied().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Outcomes> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
