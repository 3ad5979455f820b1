//! Keeping a run's lease on a native host: the tokio driver of [`leasehold_core::supervision`].
//!
//! - [`heartbeat_loop`]: pulses renew the lease through a [`LeaseStore`]; the
//!   future resolves with [`LeaseEnded`] when the fence is lost or the lease
//!   lapses, so a caller races it with the work it owns.
//! - [`run_supervised`]: that race, done: the work or the lease, whichever
//!   ends first ([`Supervised`]).
//! - [`HeartbeatLoopOptions`]: hooks called after a reconfirmation renewed
//!   the lease (`on_reconfirm`) and when the lease lapses (`on_lapse`).
//! - [`Clock`], [`TokioClock`]: where the loop reads time (ms since the Unix
//!   epoch), following tokio's clock so `tokio::time::pause` drives it.
//!
//! Every decision (when to pulse, when the deadline falls, when to reconfirm,
//! when a lease lapses, whether to warn) is the core [`Supervisor`]'s; this
//! module only runs the calls it asks for, times them and reports back.
//!
//! [`Supervisor`]: leasehold_core::supervision::Supervisor

mod clock;
mod heartbeat_loop;
mod options;
mod store;
mod supervised;

pub use clock::{Clock, TokioClock};
pub use heartbeat_loop::{LeaseEnded, heartbeat_loop};
pub use options::{HeartbeatLoopOptions, HookError, LapseHook, ReceiptHook};
pub use store::LeaseStore;
pub use supervised::{Supervised, run_supervised};
