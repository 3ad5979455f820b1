//! `sim`: runs the deterministic simulator over many seeds, prints every
//! violation with its seed, a shrunk setup and the trace to replay it, and
//! the speed in seeds per second.
//!
//! ```text
//! cargo run -p leasehold-tests --release --bin sim -- --seeds 100000 \
//!     [--workers 4] [--items 100] [--hosts 2] [--seed-start N] \
//!     [--mutation NAME | --mutations] [--replay SEED [--full]] [--golden] \
//!     [--profile standard|throttled|boundary|reclaim|slow-exit|clock-steps] [--tolerance-ms W] [--exit-grace-ms G] [--no-late-claims] [--half-skew-band] [--no-budget-check] [--no-reclaim-own-stale]
//!     [--cancel-gap-ms N] [--operator-delay-ms N] [--wall-step-gap-ms N] [--no-watch-dead-owners]
//! ```
//!
//! - `--profile reclaim` runs `SimConfig::reclaim` (one host, recycled
//!   pids, no faults) for the reclaim-bound check.
//! - `--profile boundary` runs the validator-agreement scenario
//!   (`SimConfig::boundary`); `--tolerance-ms W` overrides the runner's
//!   `W = S − I − K − 1` to step outside the relation.
//! - `--profile throttled` runs `SimConfig::throttled` (hosts throttled
//!   most of the time over a slow store: renewals answer `false` while
//!   their owner still works).
//! - `--profile slow-exit` runs `SimConfig::slow_exit`: stopped performs
//!   take up to `G = S / 6` to end (`grace-outside-budget` is caught there).
//! - `--profile clock-steps` runs `SimConfig::clock_steps`: the standard
//!   profile whose hosts' wall clocks also step by up to ten stale windows,
//!   which a worker's clock shows once its process starts after a step
//!   (`wall-clock-takeover` is caught there).
//! - `--wall-step-gap-ms N` steps each host's wall clock about every `N` ms
//!   per worker in any profile (0: never), by up to ten stale windows
//!   unless the profile says otherwise.
//! - `--no-watch-dead-owners` turns off the store rule
//!   `SimConfig::dead_owner_watched` (on, as in the SQLite store): with
//!   `--profile clock-steps --hosts 1` the profile then finds the gap it
//!   closes (a dead owner whose clock read ahead keeps its item for the step).
//! - `--exit-grace-ms G`: a stopped perform takes up to `G` ms to end (its
//!   process exits within the grace after SIGTERM).
//! - `--no-late-claims` keeps claim answers prompt and `--half-skew-band`
//!   keeps clocks in a band of `K/2`: the standard profile without the two
//!   faults that exposed the (since fixed) core defects, for bisecting.
//!
//! - `--no-reclaim-own-stale` turns off the store rule that an owner may
//!   re-claim its own stale item on the lease alone (on by default, as in
//!   the real stores): with `--hosts 1` that shows defect 3 again.
//!
//! - `--cancel-gap-ms N` sets the operator's mean gap between two cancels
//!   (0: no operator; the standard profile's is `S / 2`), and
//!   `--operator-delay-ms N` the longest delay before its next step on an
//!   item (retry, cancel again); see `sim::config::Operator`.
//!
//! - `--mutations` runs every broken variant until a seed catches it and
//!   prints how many seeds that took.
//! - `--replay SEED` runs one seed, recording, and prints its violation (if
//!   any), the shrunk setup, and the trace lines about the item and workers
//!   concerned (`--full`: every line).
//! - `--golden` prints the golden trace hashes the determinism tests check
//!   (native and wasm32 share them).
//! - Exit status 1 when a violation was found (without `--mutations`).

use leasehold_tests::sim::{run_seed, run_seeds, shrink, Mutation, Operator, Outcome, SimConfig};
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    seeds: u64,
    start: u64,
    workers: u8,
    items: u32,
    hosts: Option<u8>,
    mutation: Mutation,
    all_mutations: bool,
    replay: Option<u64>,
    full: bool,
    golden: bool,
    profile: Profile,
    tolerance_ms: Option<u64>,
    exit_grace_ms: Option<u64>,
    no_late_claims: bool,
    half_band: bool,
    no_budget: bool,
    no_reclaim_own: bool,
    cancel_gap_ms: Option<u64>,
    operator_delay_ms: Option<u64>,
    wall_step_gap_ms: Option<u64>,
    no_watch_dead_owners: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        seeds: 1_000,
        start: 0,
        workers: 4,
        items: 100,
        hosts: None,
        mutation: Mutation::None,
        all_mutations: false,
        replay: None,
        full: false,
        golden: false,
        profile: Profile::Standard,
        tolerance_ms: None,
        exit_grace_ms: None,
        no_late_claims: false,
        half_band: false,
        no_budget: false,
        no_reclaim_own: false,
        cancel_gap_ms: None,
        operator_delay_ms: None,
        wall_step_gap_ms: None,
        no_watch_dead_owners: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, v: String| v.parse::<u64>().map_err(|_| format!("{name}: not a whole number: {v}"));
        match flag.as_str() {
            "--seeds" => args.seeds = number("--seeds", value("--seeds")?)?,
            "--seed-start" => args.start = number("--seed-start", value("--seed-start")?)?,
            "--workers" => {
                args.workers = u8::try_from(number("--workers", value("--workers")?)?)
                    .ok()
                    .filter(|w| (1..=32).contains(w))
                    .ok_or("--workers must be 1..=32")?;
            }
            "--items" => {
                args.items = u32::try_from(number("--items", value("--items")?)?)
                    .ok()
                    .filter(|i| *i >= 1)
                    .ok_or("--items must be at least 1")?;
            }
            "--hosts" => {
                args.hosts = Some(
                    u8::try_from(number("--hosts", value("--hosts")?)?)
                        .ok()
                        .filter(|h| *h >= 1)
                        .ok_or("--hosts must be at least 1")?,
                );
            }
            "--mutation" => {
                let name = value("--mutation")?;
                args.mutation = Mutation::parse(&name).ok_or_else(|| {
                    let names: Vec<&str> = Mutation::BROKEN.iter().map(|m| m.name()).collect();
                    format!("unknown mutation {name}; one of: none, {}", names.join(", "))
                })?;
            }
            "--mutations" => args.all_mutations = true,
            "--replay" => args.replay = Some(number("--replay", value("--replay")?)?),
            "--full" => args.full = true,
            "--golden" => args.golden = true,
            "--profile" => {
                let name = value("--profile")?;
                args.profile = Profile::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
                    let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                    format!("unknown profile {name}; one of: {}", names.join(", "))
                })?;
            }
            "--tolerance-ms" => args.tolerance_ms = Some(number("--tolerance-ms", value("--tolerance-ms")?)?),
            "--exit-grace-ms" => args.exit_grace_ms = Some(number("--exit-grace-ms", value("--exit-grace-ms")?)?),
            "--no-late-claims" => args.no_late_claims = true,
            "--half-skew-band" => args.half_band = true,
            "--no-budget-check" => args.no_budget = true,
            "--no-reclaim-own-stale" => args.no_reclaim_own = true,
            "--no-watch-dead-owners" => args.no_watch_dead_owners = true,
            "--cancel-gap-ms" => args.cancel_gap_ms = Some(number("--cancel-gap-ms", value("--cancel-gap-ms")?)?),
            "--operator-delay-ms" => args.operator_delay_ms = Some(number("--operator-delay-ms", value("--operator-delay-ms")?)?),
            "--wall-step-gap-ms" => args.wall_step_gap_ms = Some(number("--wall-step-gap-ms", value("--wall-step-gap-ms")?)?),
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

fn setup(args: &Args, mutation: Mutation) -> SimConfig {
    let mut cfg = match args.profile {
        Profile::Boundary => SimConfig::boundary(SimConfig::boundary_params()),
        Profile::Reclaim => SimConfig::reclaim(args.workers),
        Profile::Throttled => SimConfig::throttled(args.workers, args.items),
        Profile::Standard => SimConfig::standard(args.workers, args.items),
        Profile::SlowExit => SimConfig::slow_exit(args.workers, args.items),
        Profile::ClockSteps => SimConfig::clock_steps(args.workers, args.items),
    }
    .with_mutation(mutation);
    if args.no_late_claims {
        cfg.faults.late_claims = false;
    }
    if args.half_band {
        cfg.faults.clock_band_ms = cfg.params.skew_ms / 2;
    }
    if let Some(hosts) = args.hosts {
        cfg.hosts = hosts;
    }
    if args.tolerance_ms.is_some() {
        cfg.params.tolerance_ms = args.tolerance_ms;
    }
    if let Some(grace) = args.exit_grace_ms {
        cfg.params.exit_grace_ms = grace;
    }
    cfg.budget_check = !args.no_budget;
    cfg.reclaim_own_stale &= !args.no_reclaim_own;
    cfg.dead_owner_watched &= !args.no_watch_dead_owners;
    if let Some(gap) = args.cancel_gap_ms {
        if gap == 0 {
            cfg.operator = Operator::OFF;
        } else {
            let defaults = Operator::standard(cfg.params.stale_after_ms);
            cfg.operator = Operator { cancel_gap_ms: gap, ..if cfg.operator == Operator::OFF { defaults } else { cfg.operator } };
        }
    }
    if let Some(delay) = args.operator_delay_ms {
        cfg.operator.delay_max_ms = delay;
    }
    if let Some(gap) = args.wall_step_gap_ms {
        cfg.faults.wall_step_gap_ms = gap;
        if cfg.faults.wall_step_max_ms == 0 {
            cfg.faults.wall_step_max_ms = 10 * cfg.params.stale_after_ms;
        }
    }
    cfg
}

fn replay_line(seed: u64, args: &Args, mutation: Mutation) -> String {
    let mut line = format!("cargo run -p leasehold-tests --release --bin sim -- --replay {seed}");
    match args.profile {
        Profile::Boundary => line += " --profile boundary",
        Profile::Reclaim => line += &format!(" --profile reclaim --workers {}", args.workers),
        Profile::Throttled => line += &format!(" --profile throttled --workers {} --items {}", args.workers, args.items),
        Profile::Standard => line += &format!(" --workers {} --items {}", args.workers, args.items),
        Profile::SlowExit => line += &format!(" --profile slow-exit --workers {} --items {}", args.workers, args.items),
        Profile::ClockSteps => line += &format!(" --profile clock-steps --workers {} --items {}", args.workers, args.items),
    }
    if let Some(w) = args.tolerance_ms {
        line += &format!(" --tolerance-ms {w}");
    }
    if let Some(g) = args.exit_grace_ms {
        line += &format!(" --exit-grace-ms {g}");
    }
    if args.no_late_claims {
        line += " --no-late-claims";
    }
    if args.half_band {
        line += " --half-skew-band";
    }
    if args.no_budget {
        line += " --no-budget-check";
    }
    if args.no_reclaim_own {
        line += " --no-reclaim-own-stale";
    }
    if args.no_watch_dead_owners {
        line += " --no-watch-dead-owners";
    }
    if let Some(hosts) = args.hosts {
        line += &format!(" --hosts {hosts}");
    }
    if let Some(gap) = args.cancel_gap_ms {
        line += &format!(" --cancel-gap-ms {gap}");
    }
    if let Some(delay) = args.operator_delay_ms {
        line += &format!(" --operator-delay-ms {delay}");
    }
    if let Some(gap) = args.wall_step_gap_ms {
        line += &format!(" --wall-step-gap-ms {gap}");
    }
    if mutation != Mutation::None {
        line += &format!(" --mutation {}", mutation.name());
    }
    line
}

fn print_trace(outcome: &Outcome, full: bool) {
    let Some(v) = &outcome.violation else {
        for line in &outcome.trace {
            println!("  {line}");
        }
        return;
    };
    let relevant: Vec<_> = outcome
        .trace
        .iter()
        .filter(|l| l.time <= v.time)
        .filter(|l| full || v.item == Some(l.item) || (l.item == u32::MAX && v.workers.contains(&l.worker)))
        .collect();
    let skip = if full { 0 } else { relevant.len().saturating_sub(120) };
    if skip > 0 {
        println!("  … {skip} earlier lines (--full shows all)");
    }
    for line in &relevant[skip..] {
        println!("  {line}");
    }
}

fn replay(args: &Args, seed: u64) -> ExitCode {
    let cfg = setup(args, args.mutation);
    let outcome = run_seed(seed, &cfg, true);
    println!("seed {seed}: trace hash {:016x}, {} events, {} ms simulated", outcome.hash, outcome.stats.events, outcome.duration_ms);
    println!("stats: {:?}", outcome.stats);
    let Some(violation) = &outcome.violation else {
        println!("no violation");
        if args.full {
            print_trace(&outcome, true);
        }
        return ExitCode::SUCCESS;
    };
    println!("VIOLATION {violation}");
    let (small, shrunk) = shrink(seed, &cfg);
    if small != cfg {
        println!("shrunk setup still failing: workers {}, items {}, faults {:?}", small.workers, small.workload.items, small.faults);
        if let Some(v) = &shrunk.violation {
            println!("shrunk violation: {v}");
        }
        println!("trace of the shrunk run:");
        print_trace(&shrunk, args.full);
    } else {
        print_trace(&outcome, args.full);
    }
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("sim: {message}");
            }
            eprintln!(
                "usage: sim [--seeds N] [--seed-start N] [--workers N] [--items N] [--hosts N] \
                 [--mutation NAME | --mutations] [--replay SEED [--full]] [--golden] \
                 [--profile standard|throttled|boundary|reclaim|slow-exit|clock-steps] [--tolerance-ms W] [--exit-grace-ms G] [--no-late-claims] [--half-skew-band] [--no-budget-check] [--no-reclaim-own-stale] [--no-watch-dead-owners] \
                 [--cancel-gap-ms N] [--operator-delay-ms N] [--wall-step-gap-ms N]"
            );
            return ExitCode::from(2);
        }
    };
    if let Some(seed) = args.replay {
        return replay(&args, seed);
    }
    if args.golden {
        for (name, cfg, start, count) in leasehold_tests_golden() {
            let summary = run_seeds(start, count, &cfg, 0);
            println!("{name} {start} {count} {:016x}", summary.hash);
        }
        return ExitCode::SUCCESS;
    }
    if args.all_mutations {
        for mutation in Mutation::BROKEN {
            let cfg = setup(&args, mutation);
            let started = Instant::now();
            let summary = run_seeds(args.start, args.seeds, &cfg, 1);
            let elapsed = started.elapsed().as_secs_f64();
            match summary.failures.first() {
                Some(failure) => println!(
                    "{:<22} caught by seed {} after {} seeds ({:.2}s): {}",
                    mutation.name(),
                    failure.seed,
                    summary.seeds,
                    elapsed,
                    failure.violation.as_ref().expect("a failure")
                ),
                None => println!("{:<22} NOT caught in {} seeds", mutation.name(), summary.seeds),
            }
        }
        return ExitCode::SUCCESS;
    }
    let cfg = setup(&args, args.mutation);
    let started = Instant::now();
    let chunk = 1_000.max(args.seeds / 20);
    let mut failures = Vec::new();
    let mut done = 0;
    let mut events = 0;
    let mut totals = [0u64; 13];
    while done < args.seeds {
        let count = chunk.min(args.seeds - done);
        let summary = run_seeds(args.start + done, count, &cfg, 0);
        done += summary.seeds;
        events += summary.events;
        for (t, v) in totals.iter_mut().zip(summary.totals) {
            *t += v;
        }
        for failure in summary.failures {
            println!("VIOLATION seed {}: {}", failure.seed, failure.violation.as_ref().expect("a failure"));
            println!("  replay: {}", replay_line(failure.seed, &args, args.mutation));
            failures.push(failure.seed);
        }
        let elapsed = started.elapsed().as_secs_f64();
        eprintln!("{done}/{} seeds, {} violations, {:.0} seeds/s", args.seeds, failures.len(), done as f64 / elapsed);
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{} seeds ({}..{}), {} workers, {} items, mutation {}: {} violations",
        done,
        args.start,
        args.start + done,
        args.workers,
        args.items,
        args.mutation.name(),
        failures.len()
    );
    println!(
        "totals: settled {}, dead-lettered {}, steals {}, lapses {}, losses {}, crashes {}, stalls {}, excused overlaps {}, claims declined {}",
        totals[0], totals[1], totals[2], totals[3], totals[4], totals[5], totals[6], totals[7], totals[8]
    );
    println!("operator: cancels {}, retries {}, left cancelled {}", totals[9], totals[10], totals[11]);
    println!("takeovers across a wall-clock step: {}", totals[12]);
    println!(
        "{:.2}s, {:.0} seeds/s, {:.2} M events/s",
        elapsed,
        done as f64 / elapsed,
        events as f64 / elapsed / 1e6
    );
    if let Some(first) = failures.first() {
        println!("first counterexample: {}", replay_line(*first, &args, args.mutation));
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// A named setup (`--profile`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Profile {
    Standard,
    Throttled,
    Boundary,
    Reclaim,
    SlowExit,
    ClockSteps,
}

impl Profile {
    const ALL: [Profile; 6] =
        [Profile::Standard, Profile::Throttled, Profile::Boundary, Profile::Reclaim, Profile::SlowExit, Profile::ClockSteps];

    fn name(self) -> &'static str {
        match self {
            Profile::Standard => "standard",
            Profile::Throttled => "throttled",
            Profile::Boundary => "boundary",
            Profile::Reclaim => "reclaim",
            Profile::SlowExit => "slow-exit",
            Profile::ClockSteps => "clock-steps",
        }
    }
}

fn leasehold_tests_golden() -> Vec<(&'static str, SimConfig, u64, u64)> {
    leasehold_tests::sim::golden::cases()
}
