//! Reading attempt results: what an attempt produced (for the CLI, a
//! command's exit code and the tail of its output). They are written by the
//! settle statements themselves (`complete`, `fail`), under the attempt's
//! fence, so a result is never left behind by a settle that did not land.

use super::{JobId, Store, StoreResult};

impl Store {
    /// The results recorded for `job`'s attempts, by fencing token, oldest
    /// first. A result whose text is not JSON (it cannot be, as written) is
    /// skipped.
    ///
    /// # Errors
    /// [`StoreError::Database`](super::StoreError::Database) when the read fails.
    pub async fn results(&self, job: JobId) -> StoreResult<Vec<(u64, serde_json::Value)>> {
        let found = self.rows("results", &[("id", job.0.into())], |row| Ok((row.int("token")?, row.text_at(1)?))).await?;
        Ok(found
            .into_iter()
            .filter_map(|(token, text)| Some((token.max(0) as u64, serde_json::from_str(&text).ok()?)))
            .collect())
    }
}
