//! Totals over the settlements journal, for metrics and dashboards.

use super::rows::DecodeRow;
use super::validate::unsigned;
use super::{Store, StoreResult};

/// How many settlements of one queue have one outcome
/// ([`Store::settlement_totals`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SettlementTotal {
    /// The queue.
    pub queue: String,
    /// The outcome as the journal stores it: `done`, `retrying`, `dead`,
    /// `lost`, `released` or `cancelled` (see
    /// [`super::SettlementOutcome`]).
    pub outcome: String,
    /// Rows in the journal with that queue and outcome.
    pub count: u64,
}

impl Store {
    /// The settlements journal's rows counted by queue and outcome, queues
    /// and outcomes in name order. One statement, a scan of the journal:
    /// its cost grows with the rows kept (`purge` removes old ones).
    ///
    /// # Errors
    /// [`super::StoreError::Database`], [`super::StoreError::CorruptRow`].
    pub async fn settlement_totals(&self) -> StoreResult<Vec<SettlementTotal>> {
        self.rows("settlement_totals", &[], total).await
    }
}

fn total(row: &(impl DecodeRow + ?Sized)) -> StoreResult<SettlementTotal> {
    Ok(SettlementTotal {
        queue: row.text("queue")?,
        outcome: row.text("outcome")?,
        count: unsigned("leasehold_settlements", "count", row.int("n")?)?,
    })
}
