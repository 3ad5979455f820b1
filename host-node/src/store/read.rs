//! Inspection: the jobs per queue and state, and one job with its attempt
//! log, read the same way on both databases.

use super::{AttemptRecord, JobId, JobRecord, QueueCounts, Store, StoreError, StoreResult, rows};

impl Store {
    /// Jobs per queue by state, queues in name order.
    pub async fn counts(&self) -> StoreResult<Vec<QueueCounts>> {
        let mut counts = Vec::new();
        self.backend().fetch("counts", &[], &mut |row| rows::count_into(&mut counts, row)).await?;
        Ok(counts)
    }

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

