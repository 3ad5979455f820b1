//! Running seeds and shrinking a counterexample.

use super::config::SimConfig;
use super::world::{Outcome, World};

/// Runs one seed. `record` keeps the whole trace (for a replay).
pub fn run_seed(seed: u64, cfg: &SimConfig, record: bool) -> Outcome {
    World::new(seed, cfg, record).run(seed)
}

/// What a batch of seeds answered.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Seeds run.
    pub seeds: u64,
    /// The failing runs (seed and first violation), in seed order.
    pub failures: Vec<Outcome>,
    /// A hash over every seed's trace hash, in seed order.
    pub hash: u64,
    /// Events processed in all.
    pub events: u64,
    /// Items settled, dead-lettered; steals, lapses, losses, crashes, stalls,
    /// excused overlaps, declined claims; the operator's cancels, retries,
    /// items left cancelled; takeovers across a wall-clock step; summed.
    pub totals: [u64; 13],
}

/// Runs `count` seeds from `start`, stopping early once `stop_after`
/// failures were found (0: never).
pub fn run_seeds(start: u64, count: u64, cfg: &SimConfig, stop_after: usize) -> Summary {
    let mut summary = Summary { hash: 0xcbf2_9ce4_8422_2325, ..Summary::default() };
    for seed in start..start.saturating_add(count) {
        let outcome = run_seed(seed, cfg, false);
        summary.seeds += 1;
        summary.hash = (summary.hash ^ outcome.hash).wrapping_mul(0x0000_0100_0000_01b3);
        summary.events += outcome.stats.events;
        let s = outcome.stats;
        let add = [
            s.settled,
            s.dead_lettered,
            s.steals,
            s.lapses,
            s.losses,
            s.crashes,
            s.stalls,
            s.excused_overlaps,
            s.claims_declined,
            s.cancels,
            s.retries,
            s.left_cancelled,
            s.takeovers_across_steps,
        ];
        for (total, value) in summary.totals.iter_mut().zip(add) {
            *total += u64::from(value);
        }
        if outcome.violation.is_some() {
            summary.failures.push(outcome);
            if stop_after > 0 && summary.failures.len() >= stop_after {
                break;
            }
        }
    }
    summary
}

/// The smallest setup, by greedy steps, under which `seed` still breaks
/// the same invariant: fewer items, fewer workers, each fault kind off.
/// Answers the shrunk setup and its failing outcome (recorded).
pub fn shrink(seed: u64, cfg: &SimConfig) -> (SimConfig, Outcome) {
    let first = run_seed(seed, cfg, false);
    let Some(target) = first.violation.as_ref().map(|v| v.invariant) else {
        return (*cfg, run_seed(seed, cfg, true));
    };
    let fails = |c: &SimConfig| run_seed(seed, c, false).violation.is_some_and(|v| v.invariant == target);
    let mut best = *cfg;
    let mut improved = true;
    while improved {
        improved = false;
        for candidate in candidates(&best) {
            if fails(&candidate) {
                best = candidate;
                improved = true;
                break;
            }
        }
    }
    (best, run_seed(seed, &best, true))
}

fn candidates(cfg: &SimConfig) -> Vec<SimConfig> {
    let mut out = Vec::new();
    let w = cfg.workload;
    if w.items > 1 {
        for items in [w.items / 2, w.items - 1] {
            let mut c = *cfg;
            c.workload.items = items.max(1);
            out.push(c);
        }
    }
    if cfg.workers > 2 {
        let mut c = *cfg;
        c.workers -= 1;
        out.push(c);
    }
    let f = cfg.faults;
    let switches: [fn(&mut SimConfig); 13] = [
        |c| c.faults.crash_gap_ms = 0,
        |c| c.faults.pause_gap_ms = 0,
        |c| c.faults.throttle_gap_ms = 0,
        |c| c.faults.partition_gap_ms = 0,
        |c| c.faults.clock_step_gap_ms = 0,
        |c| c.faults.drift_gap_ms = 0,
        |c| c.faults.wall_step_gap_ms = 0,
        |c| c.faults.call_fail_per_mille = 0,
        |c| c.faults.call_hang_per_mille = 0,
        |c| c.faults.call_late_per_mille = 0,
        |c| c.faults.call_slow_per_mille = 0,
        |c| c.faults.late_claims = false,
        |c| c.faults.clock_band_ms /= 2,
    ];
    for switch in switches {
        let mut c = *cfg;
        switch(&mut c);
        if c.faults != f {
            out.push(c);
        }
    }
    if cfg.workload.work_fail_per_mille > 0 {
        let mut c = *cfg;
        c.workload.work_fail_per_mille = 0;
        out.push(c);
    }
    out
}
