//! This process's owner identity, with the start time and
//! boot id that let [`super::SameHostPidProbe`] tell a reused pid apart.

use leasehold_core::lease::OwnerId;

use super::procfs::{self, ProcStat};

/// A fresh [`OwnerId`] for this process: call once per incarnation (each
/// runner or worker start), since each call draws a new nonce.
///
/// - `host_id`: what makes "same host" mean "same process table". The machine
///   id (`/etc/machine-id`), else the host name (`uname`), joined with the pid
///   namespace (`/proc/self/ns/pid`, e.g. `3d12…/pid:[4026531836]`) where it
///   is readable. The namespace is there because containers that share a
///   machine id (an image that bakes it in, or a bind mount of the host's)
///   still have separate pid tables, and a probe across them would answer
///   about an unrelated process. Where neither the machine id nor a host name
///   is readable, the nonce stands in, so this owner is on no one else's
///   host: no peer ever probes its pid, the lease decides.
/// - `pid`: [`std::process::id`].
/// - `nonce`: a random UUID v4 (hyphenated), new on every call.
/// - `start_time`: field 22 of `/proc/self/stat`, clock ticks since boot;
///   `None` where unreadable (not Linux).
/// - `boot_id`: `/proc/sys/kernel/random/boot_id`; `None` where unreadable.
///
/// Never fails: whatever cannot be read is left out, which only weakens the
/// probe: without a start time a process that reused the pid counts as this
/// owner, and without a boot id so does one holding the pid after a reboot.
#[must_use]
pub fn current_owner() -> OwnerId {
    let nonce = uuid::Uuid::new_v4().hyphenated().to_string();
    let base = procfs::machine_id().or_else(host_name);
    let host_id = match (base, procfs::pid_namespace()) {
        (Some(base), Some(namespace)) => format!("{base}/{namespace}"),
        (Some(base), None) => base,
        (None, _) => format!("unnamed-host-{nonce}"),
    };
    OwnerId {
        host_id,
        pid: std::process::id(),
        nonce,
        start_time: ProcStat::read_self().map(|stat| stat.start_time),
        boot_id: procfs::boot_id(),
    }
}

/// The host name from `uname` (unix); `None` where empty or not unix.
pub(crate) fn host_name() -> Option<String> {
    #[cfg(unix)]
    {
        let uname = rustix::system::uname();
        let name = uname.nodename().to_string_lossy().trim().to_owned();
        (!name.is_empty()).then_some(name)
    }
    #[cfg(not(unix))]
    {
        std::env::var("COMPUTERNAME").ok().filter(|name| !name.is_empty())
    }
}
