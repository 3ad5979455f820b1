//! Run ownership (seed 003): owner identity, the lease policy and its
//! validator, liveness evidence and its acceptance rules.
//!
//! The heartbeat supervision state machine that keeps a lease renewed lives in
//! [`crate::supervision`], shared with the job runner.
