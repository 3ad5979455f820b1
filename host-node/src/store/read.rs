//! Inspection: one job with its attempt log, read the same way on both
//! databases. (The jobs per queue and state are the overview's reads:
//! [`Store::counts`] in `dashboard`.)

use super::{AttemptRecord, JobId, JobRecord, Store, StoreError, StoreResult, rows};

impl Store {
    /// One job with its attempts (oldest first; a running attempt is last).
    /// Errors: [`StoreError::UnknownJob`].
    pub async fn job(&self, id: JobId) -> StoreResult<JobRecord> {
        // One snapshot: the job's row (which carries the running attempt,
        // if any), then its ended attempts.
        let mut job: Option<(JobRecord, Option<AttemptRecord>)> = None;
        let mut ended = Vec::new();
        self.read_together(&["job", "job_attempts"], &[("id", id.0.into())], |read, row| {
            if read == 0 {
                let record = rows::job(row)?;
                let running = rows::running_attempt(row, &record)?;
                job = Some((record, running));
            } else {
                ended.push(rows::attempt(row)?);
            }
            Ok(())
        })
        .await?;
        let (mut record, running) = job.ok_or(StoreError::UnknownJob(id))?;
        ended.extend(running);
        record.attempt_log = ended;
        Ok(record)
    }
}

