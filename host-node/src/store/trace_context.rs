//! The trace context stored with each job (feature `otel`): the W3C
//! `traceparent` of the span that enqueued it, written right after the
//! insert by the enqueue (only when a tracer records that span) and read
//! by a worker for the jobs it claimed (only when a tracer records the
//! claim), so the span of each attempt links to its enqueue.

use std::collections::HashMap;

use super::{JobId, Store, StoreResult};

impl Store {
    /// Stores `traceparent` with the jobs `ids` that have none yet.
    pub(crate) async fn set_trace_context(&self, ids: &[JobId], traceparent: &str) -> StoreResult<()> {
        let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
        self.run("trace_context_set", &[("traceparent", traceparent.into()), ("ids", ids.as_slice().into())]).await?;
        Ok(())
    }

    /// The trace contexts stored with the jobs `ids` (those with one).
    pub(crate) async fn trace_contexts(&self, ids: &[JobId]) -> StoreResult<HashMap<JobId, String>> {
        let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
        let offered = [("ids", ids.as_slice().into())];
        let found = self.rows("trace_contexts", &offered, |row| Ok((JobId(row.int("id")?), row.text("trace_context")?))).await?;
        Ok(found.into_iter().collect())
    }
}
