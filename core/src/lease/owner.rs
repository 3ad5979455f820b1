//! Who owns a run: [`OwnerId`].

use alloc::string::String;

/// One incarnation of one process on one host.
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

impl OwnerId {
    /// An owner with only the three identity parts (`host_id`, `pid`,
    /// `nonce`); `start_time` and `boot_id` are `None`, so a pid probe can
    /// tell neither a reboot nor a reused pid: it asks only about the process
    /// now at that pid (whether it exists, is a zombie, or is stopped). Hosts
    /// that can read the process start time and boot id fill them in
    /// afterwards.
    pub fn new(host_id: impl Into<String>, pid: u32, nonce: impl Into<String>) -> OwnerId {
        OwnerId { host_id: host_id.into(), pid, nonce: nonce.into(), start_time: None, boot_id: None }
    }
}

/// Whether `expected` and `claimant` are incarnations on the same host: their `host_id`s are equal.
///
/// The predicate a pid probe applies first: `expected.pid` names a process in
/// the claimant's own process namespace only when the hosts match, so a probe
/// that read another host's pid would be answering about an unrelated process.
/// The nonce, pid, start time and boot id play no part: two incarnations in
/// one process, or a restarted process, are on the same host.
pub fn same_host_incarnation(expected: &OwnerId, claimant: &OwnerId) -> bool {
    expected.host_id == claimant.host_id
}

/// Compact form for logs and error messages: `host_id/pid/nonce`, followed by
/// ` started=<ticks>` and ` boot=<id>` when known. Meant for people, not for
/// parsing: store the fields, not this string.
impl core::fmt::Display for OwnerId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}/{}/{}", self.host_id, self.pid, self.nonce)?;
        if let Some(start_time) = self.start_time {
            write!(f, " started={start_time}")?;
        }
        if let Some(boot_id) = &self.boot_id {
            write!(f, " boot={boot_id}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn same_host_incarnation_compares_hosts_only() {
        let owner = OwnerId::new("h1", 10, "a");
        let same_host_other_process =
            OwnerId { start_time: Some(5), boot_id: Some("b".into()), ..OwnerId::new("h1", 11, "b") };
        let other_host_same_pid = OwnerId::new("h2", 10, "a");
        assert!(same_host_incarnation(&owner, &same_host_other_process));
        assert!(same_host_incarnation(&owner, &OwnerId::new("h1", 10, "fresh-nonce")));
        assert!(!same_host_incarnation(&owner, &other_host_same_pid));
    }

    #[test]
    fn display_names_host_pid_nonce_then_known_extras() {
        assert_eq!(OwnerId::new("h1", 42, "n").to_string(), "h1/42/n");
        let full = OwnerId { start_time: Some(777), boot_id: Some("b-1".into()), ..OwnerId::new("h1", 42, "n") };
        assert_eq!(full.to_string(), "h1/42/n started=777 boot=b-1");
    }
}
