//! The hosts' process tables and the same-host pid probe (seed 003
//! `sameHostPidProbe`, issue 4's rules), as pure functions.
//!
//! `kill(pid, 0)` and `/proc/<pid>/stat` are modelled by [`ProcessTable::observe`]; the decision that
//! turns its answer into "alive or dead" is [`owner_alive`], with the
//! `EPERM`-as-dead mutation switch. The host-node crate's real probe makes the
//! same decision from the real system call.

/// What `kill(pid, 0)` answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillAnswer {
    /// It returned: the process exists and we may signal it.
    Ok,
    /// `ESRCH`: no such process.
    Esrch,
    /// `EPERM`: the process exists but belongs to another user.
    Eperm,
}

/// What the probe observed about a pid: the `kill(pid, 0)` answer, the
/// process start time and whether it is a zombie (Linux: fields 22 and 3 of
/// `/proc/<pid>/stat`, readable for any user's process).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The system call's answer.
    pub kill: KillAnswer,
    /// The start time of the process holding the pid, when one does.
    pub start_time: Option<u64>,
    /// Whether that process is a zombie (exited, not yet reaped).
    pub zombie: bool,
}

/// The liveness decision of the same-host pid probe (issue 4): `ESRCH` is
/// dead; a zombie is dead; a start time other than the recorded one is dead
/// (the pid was reused); anything else, `EPERM` included, is alive, because
/// an unknown answer is not death. `eperm_as_dead` is the mutation switch
/// that breaks the `EPERM` rule.
pub fn owner_alive(observed: Observation, recorded_start: Option<u64>, eperm_as_dead: bool) -> bool {
    match observed.kill {
        KillAnswer::Esrch => false,
        KillAnswer::Eperm if eperm_as_dead => false,
        KillAnswer::Ok | KillAnswer::Eperm => {
            if observed.zombie {
                return false;
            }
            !matches!((recorded_start, observed.start_time), (Some(r), Some(o)) if r != o)
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Process {
    host: u8,
    pid: u32,
    uid: u8,
    start_time: u64,
    zombie: bool,
}

/// Every host's processes: workers and the unrelated processes that take a
/// dead worker's pid.
#[derive(Clone, Debug, Default)]
pub struct ProcessTable {
    live: Vec<Process>,
    /// Pids that were used and are free again, per host, oldest first.
    free: Vec<(u8, u32)>,
    next_pid: u32,
}

impl ProcessTable {
    /// A table with no processes; pids start at 100.
    pub fn new() -> ProcessTable {
        ProcessTable { live: Vec::new(), free: Vec::new(), next_pid: 100 }
    }

    /// Starts a process on `host` for user `uid` at `start_time`; `reuse`
    /// picks a recycled pid when one is free. Answers its pid.
    pub fn spawn(&mut self, host: u8, uid: u8, start_time: u64, reuse: bool) -> u32 {
        let recycled = if reuse { self.free.iter().position(|&(h, _)| h == host) } else { None };
        let pid = match recycled {
            Some(index) => self.free.remove(index).1,
            None => {
                self.next_pid += 1;
                self.next_pid
            }
        };
        self.live.push(Process { host, pid, uid, start_time, zombie: false });
        pid
    }

    /// The process `pid` on `host` died. `zombie`: its parent has not reaped
    /// it yet (the pid stays taken); otherwise the pid is free.
    pub fn exit(&mut self, host: u8, pid: u32, zombie: bool) {
        if let Some(index) = self.live.iter().position(|p| p.host == host && p.pid == pid) {
            if zombie {
                self.live[index].zombie = true;
            } else {
                self.live.swap_remove(index);
                self.free.push((host, pid));
            }
        }
    }

    /// Reaps a zombie: its pid becomes free.
    pub fn reap(&mut self, host: u8, pid: u32) {
        if let Some(index) = self.live.iter().position(|p| p.host == host && p.pid == pid && p.zombie) {
            self.live.swap_remove(index);
            self.free.push((host, pid));
        }
    }

    /// What a process of user `uid` on `host` observes about `pid`.
    pub fn observe(&self, host: u8, pid: u32, uid: u8) -> Observation {
        match self.live.iter().find(|p| p.host == host && p.pid == pid) {
            None => Observation { kill: KillAnswer::Esrch, start_time: None, zombie: false },
            Some(p) => Observation {
                kill: if p.uid == uid { KillAnswer::Ok } else { KillAnswer::Eperm },
                start_time: Some(p.start_time),
                zombie: p.zombie,
            },
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn seen(kill: KillAnswer, start_time: Option<u64>, zombie: bool) -> Observation {
        Observation { kill, start_time, zombie }
    }

    #[test]
    fn esrch_is_dead_and_success_is_alive() {
        assert!(!owner_alive(seen(KillAnswer::Esrch, None, false), Some(5), false));
        assert!(owner_alive(seen(KillAnswer::Ok, Some(5), false), Some(5), false));
    }

    #[test]
    fn eperm_is_alive_unless_the_mutation_reads_it_as_dead() {
        assert!(owner_alive(seen(KillAnswer::Eperm, Some(5), false), Some(5), false));
        assert!(!owner_alive(seen(KillAnswer::Eperm, Some(5), false), Some(5), true));
    }

    #[test]
    fn a_reused_pid_or_a_zombie_is_dead() {
        assert!(!owner_alive(seen(KillAnswer::Ok, Some(9), false), Some(5), false));
        assert!(!owner_alive(seen(KillAnswer::Eperm, Some(9), false), Some(5), false));
        assert!(!owner_alive(seen(KillAnswer::Ok, Some(5), true), Some(5), false));
    }

    #[test]
    fn the_table_answers_per_user_and_recycles_pids() {
        let mut table = ProcessTable::new();
        let pid = table.spawn(0, 1, 10, false);
        assert_eq!(table.observe(0, pid, 1).kill, KillAnswer::Ok);
        assert_eq!(table.observe(0, pid, 2).kill, KillAnswer::Eperm);
        assert_eq!(table.observe(1, pid, 1).kill, KillAnswer::Esrch);
        table.exit(0, pid, true);
        assert!(table.observe(0, pid, 1).zombie);
        table.reap(0, pid);
        assert_eq!(table.observe(0, pid, 1).kill, KillAnswer::Esrch);
        assert_eq!(table.spawn(0, 2, 20, true), pid);
        assert_eq!(table.observe(0, pid, 2).start_time, Some(20));
    }
}
