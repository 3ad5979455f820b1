//! The steering statements (`store::steer`), by backend: the catalogue's
//! (`core/sql/*/`), under the names `steer` runs them by.
//!
//! Cancel and retry pick their jobs with one selector: the ids given (NULL:
//! any), the queue (NULL: any) and the states the action applies to. The
//! caller runs them in a transaction and rolls back when fewer jobs changed
//! than were named, so a list of ids changes all of them or none.

#[cfg(feature = "sqlite")]
pub(super) mod sqlite {
    use leasehold_core::queue::statements::sqlite as sql;

    pub const LOG_CANCELLED: &str = sql::ATTEMPTS_CANCELLED.text;
    pub const JOURNAL_CANCELLED: &str = sql::JOURNAL_CANCELLED.text;
    pub const CANCEL: &str = sql::CANCEL.text;
    pub const RETRY: &str = sql::RETRY.text;
    pub const STATES: &str = sql::JOB_STATES.text;
    pub const KNOWN_QUEUE: &str = sql::KNOWN_QUEUE.text;
    pub const PAUSE: &str = sql::PAUSE_QUEUE.text;
    pub const RESUME: &str = sql::RESUME_QUEUE.text;
    pub const PAUSED: &str = sql::PAUSED_QUEUES.text;
}

#[cfg(feature = "postgres")]
pub(super) mod postgres {
    use leasehold_core::queue::statements::postgres as sql;

    pub const CANCEL: &str = sql::CANCEL.text;
    pub const RETRY: &str = sql::RETRY.text;
    pub const STATES: &str = sql::JOB_STATES.text;
    pub const KNOWN_QUEUE: &str = sql::KNOWN_QUEUE.text;
    pub const PAUSE: &str = sql::PAUSE_QUEUE.text;
    pub const RESUME: &str = sql::RESUME_QUEUE.text;
    pub const PAUSED: &str = sql::PAUSED_QUEUES.text;
}
