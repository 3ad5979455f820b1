//! The queue's tables: migration set `leasehold-queue`, id block 1000.
//!
//! `leasehold_jobs` holds one row per job, including the lease of its current
//! claim (owner identity, fencing `token`, `heartbeat_at`, `lease_ms`, and
//! `expires_at = heartbeat_at + lease_ms`, which the stale-lease index
//! orders). `leasehold_attempts` holds one row per attempt that ended
//! otherwise than in success, written by the same statement that ends it
//! (fail, reclaim, steal); the running attempt and the succeeded one are
//! read off the job row (migration 3, view `leasehold_attempt_log`). So a
//! claim and a completion are each a single row update on the hot path.
//!
//! There is no foreign key from attempts to jobs on purpose: attempts are
//! written only by the statement that changes the job, and on PostgreSQL a
//! foreign-key check would take a second lock on the job row per settle.
//!
//! All times are BIGINT milliseconds since the Unix epoch. The scripts, with
//! what each migration adds, are in `core/sql/<dialect>/migrations/`.

use leasehold_core::queue::migrations;

use super::migrate::MigrationSet;

/// The queue's migration set: namespace `leasehold-queue`, ids 1000..2000;
/// each migration's scripts are the files `core/sql/<dialect>/migrations/NNNN_name.sql`.
pub const QUEUE_MIGRATIONS: MigrationSet = MigrationSet {
    namespace: migrations::NAMESPACE,
    id_block: migrations::ID_BLOCK,
    migrations: migrations::QUEUE,
};
