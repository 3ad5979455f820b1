//! The same-host pid probe, with pid-reuse and reboot detection.
//!
//! The decision is split from the system calls: [`SameHostPidProbe::verdict`]
//! gathers the facts (host relation, pid validity, boot id, `kill(pid, 0)`,
//! `/proc/<pid>/stat`) and the pure [`classify`] turns the last two into a
//! [`PidVerdict`], so every rule is unit-tested without a process to match.

use std::fmt;

use leasehold_core::Millis;
use leasehold_core::lease::{
    EvidenceKind, LivenessCheck, LivenessContext, LivenessEvidence, OwnerId, same_host_incarnation,
};

use super::procfs::{self, ProcStat};

/// What `kill(pid, 0)` answered. It sends no signal; it only runs the delivery
/// checks, so it tells whether a process with that pid exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillAnswer {
    /// It returned: a process with that pid exists and we may signal it.
    Delivered,
    /// `ESRCH`: no process has that pid. The only answer that means death.
    NoSuchProcess,
    /// Any other error, as its raw OS error number (`EPERM`: the process
    /// exists but belongs to another user; `EINVAL`, …). Not death: an unknown
    /// answer is not evidence.
    Refused(i32),
    /// The platform has no `kill` (not unix). Not death.
    Unsupported,
}

/// Why the probe answered as it did: one variant per rule of the
/// same-host pid probe (pid, boot id, zombie, pid reuse), each
/// either alive ([`PidVerdict::is_alive`]) or not. `Display` says which rule
/// and the answer, for logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PidVerdict {
    /// The owner is on another host. Its
    /// pid names nothing here, so it was not probed. Answers not alive: the
    /// expired lease decides, and it is no evidence of death either.
    OtherHost,
    /// The recorded pid is 0 or above `i32::MAX`: no process can be asked
    /// about it. Alive.
    InvalidPid,
    /// The owner's recorded boot id differs from this boot's: the process it
    /// names ended with the previous boot. Dead.
    OtherBoot,
    /// `kill(pid, 0)` answered `ESRCH`. Dead.
    NoSuchProcess,
    /// The process has exited and awaits reaping (`/proc/<pid>/stat` state
    /// `Z` or `X`). Dead.
    Exited,
    /// `/proc/<pid>/stat` field 22 differs from the start time recorded in the
    /// owner: the pid now names another process. Dead.
    PidReused {
        /// The start time recorded in the owner, clock ticks since boot.
        recorded: u64,
        /// The start time of the process now holding the pid.
        found: u64,
    },
    /// The process is stopped (`/proc/<pid>/stat` state `T`, stopped by a
    /// signal such as `SIGSTOP` or a terminal's ctrl-Z, or `t`, stopped by a
    /// debugger), state character attached. Not alive: a stopped process does
    /// no work and renews no lease, and may stay stopped for good, so its
    /// expired lease decides as it would for an owner on another host. Not a
    /// death either: it may resume, and then finds its claims fenced.
    Stopped(char),
    /// `kill(pid, 0)` returned and nothing contradicts it. Alive.
    Running,
    /// `kill(pid, 0)` failed with an error other than `ESRCH` (`EPERM`
    /// included), raw OS error number attached, or cannot be asked on this
    /// platform (`None`), and nothing contradicts it. Alive: an unknown
    /// answer is not death.
    Unknown(Option<i32>),
}

impl PidVerdict {
    /// The [`LivenessCheck`] answer: `true` for [`PidVerdict::InvalidPid`],
    /// [`PidVerdict::Running`] and [`PidVerdict::Unknown`]; `false` otherwise.
    #[must_use]
    pub fn is_alive(&self) -> bool {
        matches!(self, PidVerdict::InvalidPid | PidVerdict::Running | PidVerdict::Unknown(_))
    }

    /// Whether the probe found the owner dead on its own host: not alive,
    /// not [`PidVerdict::OtherHost`] (which was never probed) and not
    /// [`PidVerdict::Stopped`] (which may resume). Exactly the verdicts that
    /// justify `same-host-pid-dead` evidence.
    #[must_use]
    pub fn is_same_host_death(&self) -> bool {
        !self.is_alive() && !matches!(self, PidVerdict::OtherHost | PidVerdict::Stopped(_))
    }
}

impl fmt::Display for PidVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PidVerdict::OtherHost => f.write_str("owner on another host: not probed"),
            PidVerdict::InvalidPid => f.write_str("owner pid is not a valid pid: assumed alive"),
            PidVerdict::OtherBoot => f.write_str("owner recorded under another boot: dead"),
            PidVerdict::NoSuchProcess => f.write_str("no process has the owner's pid (ESRCH): dead"),
            PidVerdict::Exited => f.write_str("owner process exited and awaits reaping (zombie): dead"),
            PidVerdict::PidReused { recorded, found } => {
                write!(f, "owner pid reused: recorded start time {recorded}, found {found}: dead")
            }
            PidVerdict::Stopped(state) => {
                write!(f, "owner process is stopped (state {state}): not alive, the expired lease decides")
            }
            PidVerdict::Running => f.write_str("owner process exists: alive"),
            PidVerdict::Unknown(Some(errno)) => {
                let error = std::io::Error::from_raw_os_error(errno);
                write!(f, "kill(pid, 0) failed with {error}, not ESRCH: assumed alive")
            }
            PidVerdict::Unknown(None) => f.write_str("no kill on this platform: assumed alive"),
        }
    }
}

/// The pure decision after the probe: from what
/// `kill(pid, 0)` answered, the process's `/proc/<pid>/stat` (`None`:
/// unreadable, which is no evidence), and the start time recorded in the
/// owner (`None`: not recorded, so not compared).
///
/// 1. `ESRCH` ([`KillAnswer::NoSuchProcess`]) → [`PidVerdict::NoSuchProcess`].
/// 2. A stat in state `Z`/`X` → [`PidVerdict::Exited`]: `kill` succeeds on a
///    zombie, but it does no more work.
/// 3. A recorded start time that differs from the stat's → [`PidVerdict::PidReused`].
///    This holds whatever `kill` answered: an `EPERM` from another user's
///    process that took the pid is no sign of the owner.
/// 4. A stat in state `T`/`t` → [`PidVerdict::Stopped`]: the process exists
///    but does no work until it is continued, which may be never.
/// 5. Otherwise `kill` decides: returned → [`PidVerdict::Running`]; any other
///    error (`EPERM` included) or no `kill` → [`PidVerdict::Unknown`], alive.
#[must_use]
pub fn classify(kill: KillAnswer, stat: Option<&ProcStat>, recorded_start_time: Option<u64>) -> PidVerdict {
    if kill == KillAnswer::NoSuchProcess {
        return PidVerdict::NoSuchProcess;
    }
    if let Some(stat) = stat {
        if stat.has_exited() {
            return PidVerdict::Exited;
        }
        match recorded_start_time {
            Some(recorded) if recorded != stat.start_time => {
                return PidVerdict::PidReused { recorded, found: stat.start_time };
            }
            _ => {}
        }
        if stat.is_stopped() {
            return PidVerdict::Stopped(stat.state);
        }
    }
    match kill {
        KillAnswer::Delivered => PidVerdict::Running,
        KillAnswer::Refused(errno) => PidVerdict::Unknown(Some(errno)),
        KillAnswer::Unsupported | KillAnswer::NoSuchProcess => PidVerdict::Unknown(None),
    }
}

/// The native host's liveness check: does the
/// recorded owner's process still exist on this host?
///
/// Asked only about a run whose lease already expired. The rules, in order:
///
/// - An owner on another host ([`same_host_incarnation`] false) is never
///   probed: a pid names a process only in its own host's process table.
///   Answer: not alive, and no evidence — the expired lease decides.
/// - A pid of 0 or above `i32::MAX` is alive: no process can be asked.
/// - Recorded and current boot ids both known and different: dead (a pid
///   from a previous boot names nothing now).
/// - `kill(pid, 0)` and `/proc/<pid>/stat`, decided by [`classify`]: `ESRCH`
///   dead; zombie dead; a recorded start time that differs from field 22 dead
///   (the pid was reused); stopped (`T`/`t`) not alive (a stopped owner
///   would otherwise hold its jobs for as long as it stays stopped, while its
///   guard has already ended their commands);
///   success alive; any other error (`EPERM` included) alive.
///
/// Limits: an owner recorded with the claimant's own pid is
/// alive while this process lives (two engines in one process differ only by
/// nonce, and must not steal each other's live runs); an owner recorded
/// without a start time cannot be told from a process that reused its pid,
/// which delays its reclaim until that process ends, never breaks it.
///
/// Cost: one `kill` and one read of a `/proc` file (memory-backed, no disk),
/// so it is cheap enough to call from an async task. The current boot id is
/// read once, at construction.
#[derive(Clone, Debug)]
pub struct SameHostPidProbe {
    boot_id: Option<String>,
}

impl SameHostPidProbe {
    /// A probe for this boot (reads `/proc/sys/kernel/random/boot_id`; where
    /// unreadable, boot ids are not compared).
    #[must_use]
    pub fn new() -> SameHostPidProbe {
        SameHostPidProbe { boot_id: procfs::boot_id() }
    }

    /// Probes `expected` on behalf of `claimant` and says why it answered as
    /// it did (see the type's rules).
    #[must_use]
    pub fn verdict(&self, expected: &OwnerId, claimant: &OwnerId) -> PidVerdict {
        if !same_host_incarnation(expected, claimant) {
            return PidVerdict::OtherHost;
        }
        let Ok(pid) = i32::try_from(expected.pid) else {
            return PidVerdict::InvalidPid;
        };
        if pid == 0 {
            return PidVerdict::InvalidPid;
        }
        if let (Some(recorded), Some(current)) = (&expected.boot_id, &self.boot_id)
            && recorded != current
        {
            return PidVerdict::OtherBoot;
        }
        let kill = kill_zero(pid);
        // After ESRCH there is no process to read; otherwise read the stat
        // after `kill`, so a pid reused in between shows the newer start time.
        let stat = if kill == KillAnswer::NoSuchProcess { None } else { ProcStat::read(expected.pid) };
        classify(kill, stat.as_ref(), expected.start_time)
    }

    /// Evidence for the steal rules: `Some`
    /// `same-host-pid-dead` observed at `now` when the probe found the owner
    /// dead on this host ([`PidVerdict::is_same_host_death`]); `None` when it
    /// is alive, or on another host (where this kind of evidence means
    /// nothing). `now` must be the consuming operation's `now`, exactly.
    #[must_use]
    pub fn evidence(&self, expected: &OwnerId, claimant: &OwnerId, now: Millis) -> Option<LivenessEvidence> {
        self.verdict(expected, claimant)
            .is_same_host_death()
            .then_some(LivenessEvidence { kind: EvidenceKind::SameHostPidDead, checked_at: now })
    }
}

impl Default for SameHostPidProbe {
    /// [`SameHostPidProbe::new`].
    fn default() -> SameHostPidProbe {
        SameHostPidProbe::new()
    }
}

impl LivenessCheck for SameHostPidProbe {
    /// [`SameHostPidProbe::verdict`] for the context's claimant, then
    /// [`PidVerdict::is_alive`]. The heartbeat and `now` are not consulted.
    fn is_alive(&self, expected: &OwnerId, context: &LivenessContext<'_>) -> bool {
        let verdict = self.verdict(expected, context.claimant);
        tracing::debug!(owner = %expected, %verdict, "same-host pid probe");
        verdict.is_alive()
    }

    /// [`PidVerdict::is_same_host_death`]: the owner's process is gone from
    /// this host (no such pid, a zombie, a reused pid, another boot).
    fn proven_gone(&self, expected: &OwnerId, context: &LivenessContext<'_>) -> bool {
        self.verdict(expected, context.claimant).is_same_host_death()
    }
}

/// `kill(pid, 0)` through rustix; `pid` is positive.
#[cfg(unix)]
fn kill_zero(pid: i32) -> KillAnswer {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return KillAnswer::Refused(rustix::io::Errno::INVAL.raw_os_error());
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => KillAnswer::Delivered,
        Err(rustix::io::Errno::SRCH) => KillAnswer::NoSuchProcess,
        Err(errno) => KillAnswer::Refused(errno.raw_os_error()),
    }
}

#[cfg(not(unix))]
fn kill_zero(_pid: i32) -> KillAnswer {
    KillAnswer::Unsupported
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPERM: i32 = 1;
    const EINVAL: i32 = 22;

    fn running(start_time: u64) -> ProcStat {
        ProcStat { state: 'S', start_time }
    }

    #[test]
    fn esrch_is_dead() {
        assert_eq!(classify(KillAnswer::NoSuchProcess, None, Some(5)), PidVerdict::NoSuchProcess);
        assert!(!PidVerdict::NoSuchProcess.is_alive());
    }

    #[test]
    fn kill_success_is_alive() {
        assert_eq!(classify(KillAnswer::Delivered, Some(&running(5)), Some(5)), PidVerdict::Running);
        assert!(PidVerdict::Running.is_alive());
    }

    #[test]
    fn eperm_is_alive() {
        let verdict = classify(KillAnswer::Refused(EPERM), Some(&running(5)), Some(5));
        assert_eq!(verdict, PidVerdict::Unknown(Some(EPERM)));
        assert!(verdict.is_alive());
        // Without a readable stat (hidepid) and without a recorded start time.
        assert!(classify(KillAnswer::Refused(EPERM), None, None).is_alive());
    }

    #[test]
    fn any_other_kill_error_is_alive() {
        assert!(classify(KillAnswer::Refused(EINVAL), None, Some(5)).is_alive());
        assert_eq!(classify(KillAnswer::Unsupported, None, Some(5)), PidVerdict::Unknown(None));
        assert!(PidVerdict::Unknown(None).is_alive());
    }

    #[test]
    fn zombie_is_dead_though_kill_succeeds() {
        let zombie = ProcStat { state: 'Z', start_time: 5 };
        assert_eq!(classify(KillAnswer::Delivered, Some(&zombie), Some(5)), PidVerdict::Exited);
        assert_eq!(classify(KillAnswer::Delivered, Some(&ProcStat { state: 'X', ..zombie }), None), PidVerdict::Exited);
    }

    #[test]
    fn different_start_time_is_a_reused_pid() {
        let verdict = classify(KillAnswer::Delivered, Some(&running(9)), Some(5));
        assert_eq!(verdict, PidVerdict::PidReused { recorded: 5, found: 9 });
        assert!(!verdict.is_alive());
        // Reused by another user's process: kill says EPERM, still not the owner.
        assert_eq!(
            classify(KillAnswer::Refused(EPERM), Some(&running(9)), Some(5)),
            PidVerdict::PidReused { recorded: 5, found: 9 }
        );
    }

    #[test]
    fn stopped_is_not_alive_and_not_a_death() {
        for state in ['T', 't'] {
            let stopped = ProcStat { state, start_time: 5 };
            let verdict = classify(KillAnswer::Delivered, Some(&stopped), Some(5));
            assert_eq!(verdict, PidVerdict::Stopped(state));
            assert!(!verdict.is_alive(), "{verdict:?}");
            assert!(!verdict.is_same_host_death(), "{verdict:?}");
        }
        // A stopped process that took a reused pid is still not the owner.
        let stopped = ProcStat { state: 'T', start_time: 9 };
        assert_eq!(
            classify(KillAnswer::Delivered, Some(&stopped), Some(5)),
            PidVerdict::PidReused { recorded: 5, found: 9 }
        );
    }

    #[test]
    fn start_time_is_compared_only_when_recorded_and_readable() {
        assert_eq!(classify(KillAnswer::Delivered, Some(&running(9)), None), PidVerdict::Running);
        assert_eq!(classify(KillAnswer::Delivered, None, Some(5)), PidVerdict::Running);
    }

    #[test]
    fn only_probed_deaths_are_same_host_deaths() {
        assert!(!PidVerdict::OtherHost.is_alive());
        assert!(!PidVerdict::OtherHost.is_same_host_death());
        for dead in [
            PidVerdict::OtherBoot,
            PidVerdict::NoSuchProcess,
            PidVerdict::Exited,
            PidVerdict::PidReused { recorded: 1, found: 2 },
        ] {
            assert!(dead.is_same_host_death(), "{dead:?}");
        }
        for alive in [PidVerdict::InvalidPid, PidVerdict::Running, PidVerdict::Unknown(Some(EPERM))] {
            assert!(!alive.is_same_host_death(), "{alive:?}");
        }
    }

    #[test]
    fn verdicts_say_why() {
        assert_eq!(
            PidVerdict::PidReused { recorded: 5, found: 9 }.to_string(),
            "owner pid reused: recorded start time 5, found 9: dead"
        );
        assert!(PidVerdict::Unknown(Some(EPERM)).to_string().starts_with("kill(pid, 0) failed with "));
    }
}
