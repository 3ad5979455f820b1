//! The trace context stored with each job (feature `otel`): the W3C
//! `traceparent` of the span that enqueued it, written right after the
//! insert by the enqueue (only when a tracer records that span) and read
//! by a worker for the jobs it claimed (only when a tracer records the
//! claim), so the span of each attempt links to its enqueue.

use std::collections::HashMap;

use super::{JobId, Pool, Store, StoreResult};

#[cfg(feature = "postgres")]
use leasehold_core::queue::statements::postgres as pg_sql;
#[cfg(feature = "sqlite")]
use leasehold_core::queue::statements::sqlite as lite_sql;

impl Store {
    /// Stores `traceparent` with the jobs `ids` that have none yet.
    pub(crate) async fn set_trace_context(&self, ids: &[JobId], traceparent: &str) -> StoreResult<()> {
        let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
        match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let ids = serde_json::to_string(&ids).expect("numbers serialize");
                sqlx::query(lite_sql::TRACE_CONTEXT_SET.text).bind(traceparent).bind(ids).execute(pool).await?;
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                sqlx::query(pg_sql::TRACE_CONTEXT_SET.text).bind(traceparent).bind(ids).execute(pool).await?;
            }
        }
        Ok(())
    }

    /// The trace contexts stored with the jobs `ids` (those with one).
    pub(crate) async fn trace_contexts(&self, ids: &[JobId]) -> StoreResult<HashMap<JobId, String>> {
        let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
        let rows: Vec<(i64, String)> = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let ids = serde_json::to_string(&ids).expect("numbers serialize");
                sqlx::query_as(lite_sql::TRACE_CONTEXTS.text).bind(ids).fetch_all(pool).await?
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                sqlx::query_as(pg_sql::TRACE_CONTEXTS.text).bind(ids).fetch_all(pool).await?
            }
        };
        Ok(rows.into_iter().map(|(id, context)| (JobId(id), context)).collect())
    }
}
