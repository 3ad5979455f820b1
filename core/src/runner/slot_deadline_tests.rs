//! The slots' kept deadlines (see `Deadlines`) never go stale: a pool under a
//! heartbeat, driven through every kind of item change (claims, settles,
//! renewals that land, are refused, raise or never answer, lapses, aborts,
//! timeouts), answers the same [`Runner::poll_timeout`] as deadlines computed
//! afresh from each item after every input, so no renewal, deadline or lapse
//! is missed or fired late because of them.

use super::{Action, ItemKey, Runner};
use crate::options::OptionsInput;
use crate::supervision::CallId;
use crate::Millis;
use alloc::vec::Vec;

/// What the host will answer.
enum Answer {
    Claim,
    Settle(ItemKey, Result<(), u32>),
    Renewal(ItemKey, CallId, Result<bool, u32>),
    Tick,
}

/// A deterministic pseudo-random sequence (a 64-bit LCG), so a failure replays.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn pool(concurrency: f64) -> Runner<u32> {
    let input = OptionsInput {
        interval_ms: 100.0,
        stale_after_ms: 3_000.0,
        heartbeat: true,
        heartbeat_every_ms: Some(250.0),
        concurrency: Some(concurrency),
        batch_limit: Some(40.0),
        ..OptionsInput::default()
    };
    Runner::new(input.validate().expect("valid options"), true)
}

/// The runner's next timeout with every slot's deadline computed afresh from
/// its item (the oracle; `poll_timeout` keeps them between asks).
fn fresh(runner: &Runner<u32>) -> Option<Millis> {
    let loop_timer = runner.timer.map(|(at, _)| at);
    runner.slots.iter().filter_map(super::Slot::deadline).chain(loop_timer).min()
}

/// Drives `runner` for `steps` inputs with answers drawn from `dice`,
/// checking its timeout against the oracle after each; answers how many
/// renewals and aborts it asked for (so the drive is known to reach them).
fn drive(mut runner: Runner<u32>, dice: &mut Dice, steps: usize) -> (usize, usize) {
    let mut now = Millis(1_000);
    let mut pending: Vec<(Millis, Answer)> = Vec::new();
    let (mut renewals, mut aborts) = (0, 0);
    runner.tick(now);
    for step in 0..steps {
        while let Some(action) = runner.poll_action() {
            let at = now.after(dice.below(1_500));
            match action {
                Action::Claim { .. } => pending.push((now.after(dice.below(30)), Answer::Claim)),
                Action::Perform { key } => pending.push((now.after(dice.below(4_000)), Answer::Settle(key, Ok(())))),
                Action::Renew { key, call, .. } => {
                    renewals += 1;
                    let answer = match dice.below(20) {
                        0 => continue, // never answers: the claim may lapse
                        1 => Err(7),
                        2 => Ok(false),
                        _ => Ok(true),
                    };
                    pending.push((at, Answer::Renewal(key, call, answer)));
                }
                Action::Abort { key, .. } => {
                    aborts += 1;
                    pending.push((now.after(dice.below(200)), Answer::Settle(key, Err(3))));
                }
                Action::PassEnded { .. } => pending.push((now.after(dice.below(300)), Answer::Tick)),
                _ => {}
            }
        }
        assert_eq!(runner.poll_timeout(), fresh(&runner), "step {step}: a kept deadline differs from its item's own");
        // The next input: the earliest answer due, or the runner's timeout.
        let next = pending.iter().enumerate().min_by_key(|(_, (at, _))| *at).map(|(i, (at, _))| (i, *at));
        match (next, runner.poll_timeout()) {
            (Some((_, at)), Some(timeout)) if timeout < at => {
                now = now.max(timeout);
                runner.handle_timeout(now);
            }
            (Some((index, at)), _) => {
                now = now.max(at);
                match pending.swap_remove(index).1 {
                    Answer::Claim => {
                        runner.claim_found(now);
                    }
                    Answer::Settle(key, outcome) => runner.item_settled(now, key, outcome),
                    Answer::Renewal(key, call, outcome) => runner.renewal_answered(now, key, call, outcome),
                    Answer::Tick => {
                        runner.tick(now);
                    }
                }
            }
            (None, Some(timeout)) => {
                now = now.max(timeout);
                runner.handle_timeout(now);
            }
            (None, None) => break,
        }
    }
    (renewals, aborts)
}

#[test]
fn kept_deadlines_match_the_items_own_after_every_input() {
    for (seed, concurrency) in [(1, 1.0), (2, 4.0), (3, 16.0), (4, 64.0)] {
        let (renewals, aborts) = drive(pool(concurrency), &mut Dice(seed), 20_000);
        assert!(renewals > 100 && aborts > 5, "the drive reached renewals ({renewals}) and aborts ({aborts})");
    }
}
