//! Faults: crashes and restarts, pauses, throttling, partitions and clock
//! steps, each drawn from its worker's fault stream while the chaos lasts.

use super::host::{Incarnation, Phase};
use super::queue::Ev;
use super::{World, NO_ITEM};
use crate::sim::store::Owner;
use crate::sim::trace::What;
use leasehold_core::lease::LeaseWatch;
use leasehold_core::runner::Runner;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fault {
    Crash,
    Restart,
    PauseStart,
    PauseEnd,
    ThrottleStart,
    ThrottleEnd,
    PartitionStart,
    PartitionEnd,
    ClockStep,
    Drift,
    WallStep,
    Reap { pid: u32 },
}

impl World {
    pub(super) fn schedule_faults(&mut self, w: u8) {
        let f = self.cfg.faults;
        let kinds = [
            (f.crash_gap_ms, Fault::Crash),
            (f.pause_gap_ms, Fault::PauseStart),
            (f.throttle_gap_ms, Fault::ThrottleStart),
            (f.partition_gap_ms, Fault::PartitionStart),
            (f.clock_step_gap_ms, Fault::ClockStep),
            (f.drift_gap_ms, Fault::Drift),
            (f.wall_step_gap_ms, Fault::WallStep),
        ];
        for (gap, fault) in kinds {
            self.next_fault(w, gap, fault, self.now);
        }
    }

    pub(super) fn next_fault(&mut self, w: u8, gap: u64, fault: Fault, after: u64) {
        if let Some(gap) = self.workers[usize::from(w)].faults.gap(gap) {
            if after + gap < self.chaos_end {
                self.at(after + gap, Ev::Fault { w, fault });
            }
        }
    }

    // ---- events ------------------------------------------------------------
    pub(super) fn fault(&mut self, w: u8, fault: Fault) {
        let f = self.cfg.faults;
        let now = self.now;
        let starts = !matches!(
            fault,
            Fault::PauseEnd | Fault::ThrottleEnd | Fault::PartitionEnd | Fault::Restart | Fault::Reap { .. }
        );
        if self.calm && starts {
            return;
        }
        let i = usize::from(w);
        match fault {
            Fault::Crash => {
                self.crash(w);
                self.next_fault(w, f.crash_gap_ms, Fault::Crash, now);
            }
            Fault::Restart => {
                if self.workers[i].inc.is_none() {
                    self.restart(w);
                }
            }
            Fault::Reap { pid } => {
                let host = self.workers[i].host;
                self.table.reap(host, pid);
            }
            Fault::PauseStart => {
                let duration = self.workers[i].faults.range(1, f.pause_max_ms.max(1));
                if self.workers[i].inc.is_some() && !self.workers[i].paused {
                    self.workers[i].paused = true;
                    self.stats.stalls += 1;
                    if let Some(inc) = self.workers[i].inc.as_mut() {
                        inc.timer = None;
                    }
                    self.log(What::PauseStart, w, NO_ITEM, duration, 0);
                }
                self.at(now + duration, Ev::Fault { w, fault: Fault::PauseEnd });
                self.next_fault(w, f.pause_gap_ms, Fault::PauseStart, now + duration);
            }
            Fault::PauseEnd => self.resume(w),
            Fault::ThrottleStart => {
                let duration = self.workers[i].faults.range(1, f.throttle_max_ms.max(1));
                let period = self.workers[i].faults.range(1, f.throttle_period_max_ms.max(1));
                if self.workers[i].inc.is_some() && self.workers[i].throttle.is_none() {
                    self.workers[i].throttle = Some(period);
                    self.stats.stalls += 1;
                    self.log(What::ThrottleStart, w, NO_ITEM, duration, period);
                    self.arm(w);
                }
                self.at(now + duration, Ev::Fault { w, fault: Fault::ThrottleEnd });
                self.next_fault(w, f.throttle_gap_ms, Fault::ThrottleStart, now + duration);
            }
            Fault::ThrottleEnd => self.unthrottle(w),
            Fault::PartitionStart => {
                let duration = self.workers[i].faults.range(1, f.partition_max_ms.max(1));
                let hang = self.workers[i].faults.chance(500);
                self.workers[i].partition = Some(hang);
                self.log(What::PartitionStart, w, NO_ITEM, duration, u64::from(hang));
                self.at(now + duration, Ev::Fault { w, fault: Fault::PartitionEnd });
                self.next_fault(w, f.partition_gap_ms, Fault::PartitionStart, now + duration);
            }
            Fault::PartitionEnd => {
                if self.workers[i].partition.take().is_some() {
                    self.log(What::PartitionEnd, w, NO_ITEM, 0, 0);
                }
            }
            Fault::ClockStep => {
                let to = if f.clock_extremes {
                    self.workers[i].faults.below(2) * self.spans.skew
                } else {
                    self.workers[i].faults.range(0, self.spans.skew)
                };
                self.set_clock(w, to);
                self.next_fault(w, f.clock_step_gap_ms, Fault::ClockStep, now);
            }
            Fault::Drift => {
                let by = self.workers[i].faults.range(1, f.drift_max_ms.max(1));
                let offset = self.workers[i].offset;
                let to = if self.workers[i].faults.chance(500) { offset.saturating_sub(by) } else { (offset + by).min(self.spans.skew) };
                self.set_clock(w, to);
                self.next_fault(w, f.drift_gap_ms, Fault::Drift, now);
            }
            Fault::WallStep => {
                let max = f.wall_step_max_ms;
                let by = self.workers[i].faults.range(max / 10, max) as i64;
                let back = self.workers[i].faults.chance(500);
                let host = self.workers[i].host;
                let from = self.host_wall[usize::from(host)];
                let limit = max as i64;
                let to = (if back { from - by } else { from + by }).clamp(-limit, limit);
                if to != from {
                    // Nothing running reads it: its workers' clocks were
                    // anchored when their processes started.
                    self.host_wall[usize::from(host)] = to;
                    self.log(What::WallStep, w, NO_ITEM, u64::from(host), to as u64);
                }
                self.next_fault(w, f.wall_step_gap_ms, Fault::WallStep, now);
            }
        }
    }

    pub(super) fn set_clock(&mut self, w: u8, to: u64) {
        let from = self.workers[usize::from(w)].offset;
        if from != to {
            self.workers[usize::from(w)].offset = to;
            self.log(What::ClockSet, w, NO_ITEM, from, to);
        }
    }

    pub(super) fn resume(&mut self, w: u8) {
        let i = usize::from(w);
        if !self.workers[i].paused {
            return;
        }
        self.workers[i].paused = false;
        self.workers[i].stall_end = self.now;
        self.log(What::PauseEnd, w, NO_ITEM, 0, 0);
        // Overdue timers first: the host reads its clock when it wakes.
        let local = self.local(w);
        if let Some(inc) = self.workers[i].inc.as_mut() {
            let due = inc.runner.poll_timeout();
            if due.is_some_and(|t| t <= local) {
                if due.is_some_and(|t| t < local) {
                    self.workers[i].late_timer = self.now;
                }
                let inc = self.workers[i].inc.as_mut().expect("alive");
                inc.runner.handle_timeout(local);
            }
        }
        self.drive(w);
        let deferred = std::mem::take(&mut self.workers[i].deferred);
        for ev in deferred {
            self.handle(ev);
        }
        self.arm(w);
    }

    pub(super) fn unthrottle(&mut self, w: u8) {
        let i = usize::from(w);
        if self.workers[i].throttle.take().is_some() {
            self.workers[i].stall_end = self.now;
            self.log(What::ThrottleEnd, w, NO_ITEM, 0, 0);
            let now = self.now;
            if let Some(inc) = self.workers[i].inc.as_mut() {
                if inc.timer.is_some() && inc.due < now {
                    // The timer was due during the throttle and still waits.
                    self.workers[i].late_timer = now;
                }
                let inc = self.workers[i].inc.as_mut().expect("alive");
                inc.timer = None;
            }
            self.arm(w);
        }
    }

    pub(super) fn crash(&mut self, w: u8) {
        let i = usize::from(w);
        let Some(inc) = self.workers[i].inc.take() else { return };
        self.stats.crashes += 1;
        let now = self.now;
        self.execs.worker_died(w, inc.number, now);
        let settling = inc.held.iter().flatten().filter(|h| h.phase == Phase::Settling).map(|h| h.item).collect();
        self.workers[i].crashed_settling = (inc.number, settling);
        self.ended_now.retain(|(t, _, _)| *t == now);
        self.ended_now.extend(inc.held.iter().flatten().map(|h| (now, w, *h)));
        let worker = &mut self.workers[i];
        if worker.paused || worker.throttle.is_some() {
            // It was stalled until this very moment.
            worker.stall_end = now;
        }
        worker.paused = false;
        worker.throttle = None;
        worker.deferred.clear();
        let (host, pid) = (worker.host, inc.owner.pid);
        let zombie = worker.faults.chance(300);
        let squat = worker.faults.chance(self.cfg.faults.pid_squat_per_mille);
        let restart = worker.faults.chance(self.cfg.faults.restart_per_mille);
        let restart_in = worker.faults.range(0, self.cfg.faults.restart_delay_max_ms);
        self.table.exit(host, pid, zombie);
        self.log(What::Crash, w, NO_ITEM, u64::from(pid), 0);
        if zombie {
            let reap_in = self.workers[i].faults.range(1, self.cfg.params.stale_after_ms);
            self.at(self.now + reap_in, Ev::Fault { w, fault: Fault::Reap { pid } });
        } else if squat {
            // An unrelated process of another user takes the freed pid.
            let uid = self.workers[i].uid ^ 1;
            self.table.spawn(host, uid, self.now, true);
        }
        if restart && !self.calm {
            self.at(self.now + restart_in, Ev::Fault { w, fault: Fault::Restart });
        }
    }

    pub(super) fn restart(&mut self, w: u8) {
        let i = usize::from(w);
        let reuse = self.workers[i].faults.chance(self.cfg.faults.pid_reuse_per_mille);
        let (host, uid) = (self.workers[i].host, self.workers[i].uid);
        let pid = self.table.spawn(host, uid, self.now, reuse);
        let number = self.workers[i].incarnations;
        self.workers[i].incarnations += 1;
        let nonce = (u64::from(w) << 32) | u64::from(number);
        let owner = Owner { worker: w, incarnation: number, host, pid, start_time: self.now, nonce };
        self.owners[i].push(owner);
        let mut watch = LeaseWatch::new();
        watch.set_mutation(self.cfg.mutation.watch());
        self.watches[i].push(watch);
        // Its clock: the host's wall clock as it reads now, from now on
        // carried by the monotonic clock (steps after this one pass it by).
        let anchor = self.host_wall[usize::from(host)];
        self.anchors[i].push(anchor);
        // The settle phase, as the native host runs it: an outcome reached is
        // settled until the store answers, whatever the lease does meanwhile.
        let mut runner = Runner::new(self.config, false).with_settle_phase();
        runner.set_supervision_mutation(self.cfg.mutation.supervision());
        let pool = self.config.pool_size() as usize;
        self.workers[i].inc = Some(Incarnation { number, owner, runner, held: vec![None; pool], declined: Vec::new(), timer: None, due: 0 });
        self.workers[i].paused = false;
        self.log(What::Restart, w, NO_ITEM, u64::from(pid), nonce);
        if anchor != 0 {
            self.log(What::ClockAnchored, w, NO_ITEM, anchor as u64, 0);
        }
        let local = self.local(w);
        self.inc_mut(w).runner.start(local);
        self.drive(w);
    }

}
