//! Where a heartbeat loop reads time: the runner's clock (ms since the Unix
//! epoch, following `tokio::time::pause` in tests).

pub use crate::runner::{Clock, TokioClock};
