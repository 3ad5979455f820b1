//! Run ownership for JavaScript: the lease policy
//! and its validator, the lease-only liveness check, `sameHostIncarnation`,
//! and the heartbeat supervision state machine behind the glue's
//! `heartbeatLoop` (`pkg/src/lease.js`).
//!
//! Every rule is `leasehold-core`'s ([`leasehold_core::lease`],
//! [`leasehold_core::supervision`]); this module only reads JS values at the
//! boundary, with the errors the JS API throws, and hands the core's answers
//! back as numbers. As in the runner, nothing here calls JavaScript: the glue
//! owns the store, the hooks, the timers and the promises.
//!
//! Liveness here is lease-only ([`leasehold_core::lease::LeaseLiveness`]):
//! a browser has no process table to ask, and a Node.js process that wants
//! a pid probe supplies its own check.

mod liveness;
mod loop_options;
mod policy;
mod supervisor;
mod watch;

pub use loop_options::read_loop_options;
pub use liveness::{lease_is_alive, lease_liveness_window, same_host_incarnation};
pub use policy::{lease_policy, read_policy, PolicyRefusal};
pub use supervisor::{supervisor_protocol, LeaseSupervisor};
pub use watch::LeaseWatch;
