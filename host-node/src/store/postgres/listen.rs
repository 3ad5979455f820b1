//! The store's `LISTEN` connection: wake-ups from every process's `NOTIFY`
//! on the queues of this store's schema.

use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgListener;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::StoreResult;
use crate::store::wake::NOTIFY_CHANNEL;

/// The store's LISTEN connection on [`NOTIFY_CHANNEL`], and the schema its
/// tables live in. Notifications are `<schema>/<queue>`: the channel is
/// database-wide, and two stores in different schemas of one database must
/// not wake each other's workers.
pub(crate) struct Listener {
    listener: PgListener,
    prefix: String,
}

/// Opens the store's LISTEN connection.
pub(crate) async fn open_listener(pool: &PgPool) -> StoreResult<Listener> {
    let mut listener = PgListener::connect_with(pool).await?;
    let schema: String = sqlx::query_scalar(sql::CURRENT_SCHEMA.text)
        .fetch_one(&mut listener)
        .await?;
    listener.listen(NOTIFY_CHANNEL).await?;
    Ok(Listener {
        listener,
        prefix: format!("{schema}/"),
    })
}

/// Forwards notifications of this store's schema until `deliver` answers
/// `false` (the store is gone): `Some(queue)` per notification, `None` after
/// the connection was lost (notifications may have been missed; sqlx
/// reconnects on the next receive).
pub(crate) async fn forward_notifications(
    Listener {
        mut listener,
        prefix,
    }: Listener,
    deliver: impl Fn(Option<&str>) -> bool + Send + 'static,
) {
    loop {
        let keep = match listener.try_recv().await {
            Ok(Some(notification)) => match notification.payload().strip_prefix(prefix.as_str()) {
                Some(queue) => deliver(Some(queue)),
                None => true,
            },
            Ok(None) => deliver(None),
            Err(error) => {
                tracing::warn!(%error, "leasehold LISTEN connection failed; retrying in 1s");
                let keep = deliver(None);
                tokio::time::sleep(Duration::from_secs(1)).await;
                keep
            }
        };
        if !keep {
            return;
        }
    }
}
