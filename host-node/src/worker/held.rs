//! The outcomes a process's workers hold unsettled: what each handler
//! answered, kept from the moment it answered until its settle lands or its
//! fence is refused, so the settle can be tried again and the claims can
//! leave those jobs alone.

use crate::store::JobId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
#[derive(Clone, Debug, Default)]
pub struct Unsettled(Arc<Mutex<HashMap<JobId, (u64, Reached)>>>);

impl Unsettled {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many outcomes are held now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn hold(&self, job: JobId, token: u64, reached: Reached) {
        self.lock().insert(job, (token, reached));
    }

    /// The outcome held for `job` under `token`.
    pub(crate) fn get(&self, job: JobId, token: u64) -> Option<Reached> {
        self.lock().get(&job).filter(|(t, _)| *t == token).map(|(_, r)| r.clone())
    }

    /// Forgets `job` under `token` once its settle ended.
    pub(crate) fn release(&self, job: JobId, token: u64) {
        let mut held = self.lock();
        if held.get(&job).is_some_and(|(t, _)| *t == token) {
            held.remove(&job);
        }
    }

    /// The jobs held now, for a claim to exclude.
    pub(crate) fn jobs(&self) -> Vec<JobId> {
        self.lock().keys().copied().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<JobId, (u64, Reached)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
