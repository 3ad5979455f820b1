//! The channel between a worker and the guard of one of its commands (see
//! `guard`): a connected Unix stream socket pair, one end kept by the worker,
//! the other inherited by the guard as file descriptor number `fd`.
//!
//! - Worker → guard: each new exit deadline of the command's lease, as 8
//!   bytes, little-endian, of nanoseconds on `CLOCK_MONOTONIC` (the same
//!   clock for every process on the machine, unlike the runner's `Millis`).
//!   The first is written before the guard starts; every confirmed renewal
//!   writes the next. Only the latest counts.
//! - Guard → worker: the one byte [`ENDED`], written when the guard ends the
//!   command's group itself because the deadline passed unmoved, before it
//!   sends the first signal (so it is there to read even if the guard is
//!   killed afterwards).
//! - The worker's end closing (the worker died, or gave the command up) is
//!   end-of-file for the guard.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// The byte a guard writes back when it ended its command at the deadline.
pub const ENDED: u8 = b'E';

/// Bytes of one deadline record.
pub const RECORD: usize = 8;

/// Now on `CLOCK_MONOTONIC`, in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (now.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(now.tv_nsec as u64)
}

/// `at` as nanoseconds on `CLOCK_MONOTONIC`, by its distance from now (both
/// clocks read together: an error of microseconds).
pub fn monotonic_ns_of(at: Instant) -> u64 {
    let (now, now_ns) = (Instant::now(), monotonic_ns());
    match at.checked_duration_since(now) {
        Some(ahead) => now_ns.saturating_add(ahead.as_nanos() as u64),
        None => now_ns.saturating_sub(now.duration_since(at).as_nanos() as u64),
    }
}

/// The worker's end of the channel.
#[derive(Debug)]
pub struct WorkerEnd {
    stream: UnixStream,
    /// The last deadline sent, ns.
    sent: Option<u64>,
}

impl WorkerEnd {
    /// A new channel: the worker's end, and the guard's end to pass on
    /// (both close on exec; the spawn clears that flag on the guard's end in
    /// the child only).
    pub fn pair() -> std::io::Result<(WorkerEnd, UnixStream)> {
        let (ours, theirs) = UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        Ok((WorkerEnd { stream: ours, sent: None }, theirs))
    }

    /// Sends `deadline_ns` unless it is the one last sent. A full buffer
    /// (the guard not reading 8 000 deadlines in a row) or a guard gone is
    /// not an error: the guard then acts on the deadline it has.
    pub fn send(&mut self, deadline_ns: u64) {
        if self.sent == Some(deadline_ns) {
            return;
        }
        // No SIGPIPE to fear from a guard gone: Rust ignores it in this
        // process, and the write answers an error instead.
        if (&self.stream).write(&deadline_ns.to_le_bytes()).is_ok_and(|n| n == RECORD) {
            self.sent = Some(deadline_ns);
        }
    }

    /// Whether the guard reported [`ENDED`] (read once the guard has
    /// exited; anything else it wrote is ignored).
    pub fn guard_ended_it(&mut self) -> bool {
        let mut buf = [0u8; 16];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) if buf[..n].contains(&ENDED) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
}

/// The guard's end of the channel.
#[derive(Debug)]
pub struct GuardEnd {
    stream: UnixStream,
    /// A record read in part.
    partial: Vec<u8>,
}

impl AsFd for GuardEnd {
    /// The descriptor, to poll.
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.stream.as_fd()
    }
}

/// What reading the guard's end found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heard {
    /// Nothing new.
    Nothing,
    /// The latest deadline, ns on `CLOCK_MONOTONIC`.
    Deadline(u64),
    /// The worker's end closed.
    Closed,
}

impl GuardEnd {
    /// Takes over `stream` (the inherited descriptor), non-blocking and
    /// closed on exec, so the command never inherits it.
    pub fn new(stream: UnixStream) -> std::io::Result<GuardEnd> {
        stream.set_nonblocking(true)?;
        rustix::io::fcntl_setfd(stream.as_fd(), rustix::io::FdFlags::CLOEXEC)?;
        Ok(GuardEnd { stream, partial: Vec::with_capacity(RECORD) })
    }


    /// Reads everything waiting.
    pub fn read(&mut self) -> Heard {
        let mut heard = Heard::Nothing;
        let mut buf = [0u8; 512];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return Heard::Closed,
                Ok(n) => {
                    self.partial.extend_from_slice(&buf[..n]);
                    let whole = self.partial.len() / RECORD * RECORD;
                    if whole > 0 {
                        let last: [u8; RECORD] = self.partial[whole - RECORD..whole].try_into().expect("8 bytes");
                        heard = Heard::Deadline(u64::from_le_bytes(last));
                        self.partial.drain(..whole);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return heard,
                Err(_) => return Heard::Closed,
            }
        }
    }

    /// Tells the worker the guard ended the command.
    pub fn report_ended(&mut self) {
        let _ = self.stream.write(&[ENDED]);
    }
}
