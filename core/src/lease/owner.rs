//! Who owns a run: [`OwnerId`] (seed 003 `OwnerId`, extended with the
//! process start time and boot id so a reused pid is told apart).

use alloc::string::String;

/// One incarnation of one process on one host (seed 003 `OwnerId`).
///
/// - `host_id`: a stable name of the host (machine id or hostname); two owners
///   are on the same host exactly when these are equal.
/// - `pid`: the process id in that host's process namespace (0 where the host
///   has none, as in a browser).
/// - `nonce`: unique per incarnation (a fresh random value each time a runner
///   or worker starts), so two incarnations in one process are told apart.
/// - `start_time`: where the host can read it, the process start time in
///   clock ticks since boot (Linux: field 22 of `/proc/<pid>/stat`).
/// - `boot_id`: where the host can read it, the kernel boot id
///   (`/proc/sys/kernel/random/boot_id`); a pid recorded under another boot
///   names no process of this boot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnerId {
    /// Stable host name; equality defines "same host".
    pub host_id: String,
    /// Process id on that host (0: none).
    pub pid: u32,
    /// Unique per incarnation.
    pub nonce: String,
    /// Process start time in clock ticks since boot, where known.
    pub start_time: Option<u64>,
    /// Kernel boot id, where known.
    pub boot_id: Option<String>,
}
