//! The guard each command runs under, so that nothing a job started outlives
//! a worker killed outright (SIGKILL).
//!
//! The worker can not act once it is SIGKILLed, and the kernel's parent-death
//! signal (Linux `PR_SET_PDEATHSIG`) reaches only the worker's direct child.
//! So that child is this guard: `leasehold __guard WORKER_PID PROGRAM
//! [ARGS…]`, a small process (no runtime) that leads the job's process group,
//! starts the command in it, and waits. Its parent-death signal is SIGUSR1,
//! which it catches: the worker is gone, so it SIGKILLs its whole group,
//! itself included, and the reclaimed job can never run beside an orphan.
//! Otherwise it exits as the command did (a signal death as 128 + signal), so
//! the worker sees the command's outcome.
//!
//! The worker's own stop signals go to the group: SIGTERM reaches the
//! command, and the guard catches and ignores it (it keeps waiting to report
//! how the command ended); SIGKILL after the grace ends everyone. Signals the
//! job sends its own group are caught and ignored by the guard the same way. Caught
//! signals are reset to their defaults in the command (exec does that), and
//! std resets the signal mask, so the command starts as if run directly.

use signal_hook::consts::{
    SIGABRT, SIGALRM, SIGCHLD, SIGHUP, SIGINT, SIGIO, SIGPIPE, SIGPROF, SIGQUIT, SIGSYS, SIGTERM, SIGTRAP, SIGUSR1,
    SIGUSR2, SIGVTALRM, SIGXCPU, SIGXFSZ,
};
use signal_hook::iterator::Signals;
use std::process::{Command, ExitCode};

/// Signals the guard catches (and, but for SIGCHLD and its parent-death
/// SIGUSR1, ignores): every one whose default would end it, so that a job
/// that signals its own process group (`kill -HUP 0`) does not end its guard.
/// Caught, not ignored: an ignored disposition would be inherited by the
/// command, a handler is reset by exec.
const CAUGHT: [i32; 17] = [
    SIGCHLD, SIGUSR1, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF,
    SIGXCPU, SIGXFSZ, SIGIO, SIGSYS, SIGTRAP,
];

/// The argument that makes `leasehold` the guard (not a documented command).
pub const GUARD_ARG: &str = "__guard";

/// Exit code of a guard whose command could not start (as shells use 127
/// for a command not found); stderr carries [`NOT_STARTED`] and the reason.
pub const NOT_STARTED_CODE: u8 = 127;

/// The start of the stderr line a guard writes when its command could not
/// start, before the reason.
pub const NOT_STARTED: &str = "leasehold-guard: cannot start the command: ";

/// Sends SIGKILL to the guard's process group: the command, whatever it
/// started there, and the guard.
fn kill_group() -> ! {
    let _ = rustix::process::kill_current_process_group(rustix::process::Signal::KILL);
    std::process::exit(137)
}

/// Runs the guard for `args` (after [`GUARD_ARG`]): `WORKER_PID PROGRAM
/// [ARGS…]`.
pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let Some((parent, argv)) = args.split_first() else { return ExitCode::from(2) };
    let Some((program, rest)) = argv.split_first() else { return ExitCode::from(2) };
    let parent: i32 = parent.to_str().and_then(|p| p.parse().ok()).unwrap_or(0);
    // Registered before anything can arrive: a SIGCHLD from a quick command
    // or the worker's death waits in the iterator.
    let Ok(mut signals) = Signals::new(CAUGHT) else { return ExitCode::from(NOT_STARTED_CODE) };
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::USR1));
    }
    // The worker may have died before the line above took effect.
    if rustix::process::Pid::as_raw(rustix::process::getppid()) != parent {
        kill_group();
    }
    let mut child = match Command::new(program).args(rest).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("{NOT_STARTED}{e}");
            return ExitCode::from(NOT_STARTED_CODE);
        }
    };
    for signal in signals.forever() {
        match signal {
            // Our parent-death signal, or the job signalling its own group
            // (`kill -USR1 0`): only a worker that is gone ends the group.
            SIGUSR1 if rustix::process::Pid::as_raw(rustix::process::getppid()) != parent => kill_group(),
            SIGCHLD => match child.try_wait() {
                Ok(Some(status)) => {
                    return ExitCode::from(crate::exec::exit_code(status).clamp(0, 255) as u8);
                }
                Ok(None) => {}
                Err(_) => return ExitCode::from(NOT_STARTED_CODE),
            },
            // The worker's stop (SIGTERM), or a signal the job sent its own
            // group: the command got it too; keep waiting for it.
            _ => {}
        }
    }
    ExitCode::from(NOT_STARTED_CODE)
}
