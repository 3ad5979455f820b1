//! Schedules: which slots of a periodic job to enqueue, given what was
//! enqueued before and what time it is.
//!
//! A schedule fires at *slots*: instants given by its cadence (every N
//! milliseconds, or a cron expression in a time zone). Its durable state is a
//! *cursor*: every slot at or before it has been dealt with (enqueued, or
//! skipped by a policy); the first slot after it is the next to deal with.
//! A host asks [`decide`] what to do at `now`, then moves the stored cursor
//! from the old value to [`Decision::cursor`] with a compare-and-swap in the
//! same transaction as the inserts of [`Decision::enqueue`]: whoever loses
//! the swap enqueues nothing, so each slot is enqueued at most once however
//! many workers decide at the same time, and exactly once while any of them
//! runs.
//!
//! The cadence reaches the core as [`FireTimes`]: two questions about
//! instants ("the first slot after T", "the last slot in (floor, T]").
//! [`Every`] answers them here with arithmetic; a cron cadence needs a time
//! zone database and is answered by the host.
//!
//! # Policies
//!
//! - Missed slots ([`CatchUp`]), when several slots fell due since the
//!   cursor (the workers were down): `All` enqueues each of them (at most
//!   [`MAX_BURST`] per decision; the host decides again at once while
//!   [`Decision::more_due`]); `One` (the default) enqueues the latest and
//!   skips the rest — one catch-up run, not a burst; `None` enqueues the
//!   latest only when it is at most `late_limit_ms` old, so a slot that was
//!   missed is skipped while one seen on time (a worker polls a little after
//!   the slot) still runs.
//! - Overlap ([`Overlap`]): `Allow` (the default) enqueues whatever the
//!   previous job of the schedule is doing; `Skip` skips every slot decided
//!   while that job is queued or running, and under `All` enqueues only the
//!   first due slot (the slots after it would overlap the job just queued).
//!
//! Skipped slots move the cursor too: they are dealt with, never enqueued
//! later.

use alloc::vec::Vec;
use core::fmt;

use crate::Millis;

/// The shortest period of an `every` cadence: one second.
pub(crate) const MIN_EVERY_MS: u64 = 1_000;
/// The longest period of an `every` cadence: 366 days (a longer one is a
/// typo, not a schedule).
pub(crate) const MAX_EVERY_MS: u64 = 366 * 24 * 3_600 * 1_000;
/// Most slots one decision enqueues under [`CatchUp::All`].
pub const MAX_BURST: usize = 100;
/// How late a slot may be seen and still count as on time under
/// [`CatchUp::None`] (the native host's default): 10 seconds, well above a
/// worker's polling delay, well below any downtime worth the name.
pub const DEFAULT_LATE_LIMIT_MS: u64 = 10_000;

/// What happens to slots that fell due while no worker was driving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CatchUp {
    /// Enqueue every missed slot, oldest first.
    All,
    /// Enqueue the latest due slot only: one catch-up run.
    #[default]
    One,
    /// Enqueue no missed slot; a slot seen within the late limit is on time.
    None,
}

/// What happens to a slot while the previous job of its schedule is still
/// queued or running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Overlap {
    /// Enqueue it anyway.
    #[default]
    Allow,
    /// Skip it.
    Skip,
}

impl CatchUp {
    /// The stored and command-line spelling: `all`, `one`, `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            CatchUp::All => "all",
            CatchUp::One => "one",
            CatchUp::None => "none",
        }
    }

    /// Reads [`CatchUp::as_str`]'s spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<CatchUp> {
        Some(match text {
            "all" => CatchUp::All,
            "one" => CatchUp::One,
            "none" => CatchUp::None,
            _ => return None,
        })
    }
}

impl Overlap {
    /// The stored spelling: `allow`, `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Allow => "allow",
            Overlap::Skip => "skip",
        }
    }

    /// Reads [`Overlap::as_str`]'s spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<Overlap> {
        Some(match text {
            "allow" => Overlap::Allow,
            "skip" => Overlap::Skip,
            _ => return None,
        })
    }
}

impl fmt::Display for CatchUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The slot instants of a cadence. Implementations must answer instants
/// strictly after (`next_after`) or within (`last_in`) what they are asked;
/// [`decide`] treats an answer that is not as "no more slots", so a faulty
/// cadence stalls its schedule instead of looping.
pub trait FireTimes {
    /// The first slot strictly after `t`, or `None` when there is none (a
    /// cadence that ends, or one past the representable range).
    fn next_after(&mut self, t: Millis) -> Option<Millis>;

    /// The last slot in `(floor, t]`, or `None` when that span holds none.
    /// The default walks [`FireTimes::next_after`] from `floor`; override it
    /// when the cadence can answer directly (a long downtime holds many slots).
    fn last_in(&mut self, floor: Millis, t: Millis) -> Option<Millis> {
        let mut last = None;
        let mut at = floor;
        while let Some(slot) = self.next_after(at).filter(|&s| s > at && s <= t) {
            last = Some(slot);
            at = slot;
        }
        last
    }
}

/// A fixed period: slots at every whole multiple of `period_ms` since the
/// epoch (the Unix epoch for the native host), so `every 1h` fires on the
/// hour and every worker computes the same slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Every {
    /// The period in ms, from 1 second to 366 days (see [`Every::new`]).
    period_ms: u64,
}

/// A period shorter than 1 second (1,000 ms) or longer than 366 days.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EveryOutOfRange {
    /// The period given, in ms.
    pub period_ms: u64,
}

impl fmt::Display for EveryOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.period_ms < MIN_EVERY_MS {
            write!(f, "a period of {} ms is shorter than the shortest, 1 second", self.period_ms)
        } else {
            write!(f, "a period of {} ms is longer than the longest, 366 days", self.period_ms)
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EveryOutOfRange {}

impl Every {
    /// A period of `period_ms` milliseconds; [`EveryOutOfRange`] unless
    /// from 1 second (1,000 ms) to 366 days.
    pub fn new(period_ms: u64) -> Result<Every, EveryOutOfRange> {
        if (MIN_EVERY_MS..=MAX_EVERY_MS).contains(&period_ms) {
            Ok(Every { period_ms })
        } else {
            Err(EveryOutOfRange { period_ms })
        }
    }
}

impl FireTimes for Every {
    fn next_after(&mut self, t: Millis) -> Option<Millis> {
        (t.0 / self.period_ms).checked_add(1)?.checked_mul(self.period_ms).map(Millis)
    }

    fn last_in(&mut self, floor: Millis, t: Millis) -> Option<Millis> {
        let last = Millis(t.0 / self.period_ms * self.period_ms);
        (last > floor).then_some(last)
    }
}

/// The policies of one schedule's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotPolicy {
    /// Missed slots.
    pub catch_up: CatchUp,
    /// Slots while the previous job is queued or running.
    pub overlap: Overlap,
    /// Under [`CatchUp::None`], how old (ms) the latest due slot may be and
    /// still be enqueued ([`DEFAULT_LATE_LIMIT_MS`] in the native host).
    pub late_limit_ms: u64,
}

/// What to do now: enqueue these slots and move the cursor here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Slots to enqueue, oldest first (empty when every due slot is skipped).
    pub enqueue: Vec<Millis>,
    /// The new cursor: the last slot dealt with by this decision.
    pub cursor: Millis,
    /// The first due slot (after the old cursor): slots from it up to
    /// `cursor` that are not in `enqueue` were skipped.
    pub first_due: Millis,
    /// The first slot after `cursor`, or `None` when the cadence has no more.
    pub next: Option<Millis>,
}

impl Decision {
    /// Whether the next slot is due already (a burst cut at [`MAX_BURST`]):
    /// decide again at once, from the new cursor.
    pub fn more_due(&self, now: Millis) -> bool {
        self.next.is_some_and(|next| next <= now)
    }

    /// How many due slots this decision skips rather than enqueues, when the
    /// cadence can count them (`None` otherwise; [`Every`] can).
    pub fn skipped(&self, every: Option<Every>) -> Option<u64> {
        let period = every?.period_ms;
        let due = (self.cursor.0 - self.first_due.0) / period + 1;
        Some(due - self.enqueue.len() as u64)
    }
}

/// Decides which slots to enqueue at `now`, for a schedule whose stored
/// cursor is `cursor`, whose previous job is queued or running when
/// `previous_active`, under `policy`, with slots from `times`.
///
/// Answers `None` when no slot is due (the first slot after `cursor` is
/// later than `now`, or there is none). Otherwise the decision's
/// [`Decision::cursor`] is greater than `cursor`, at most `now`, and every
/// slot in `enqueue` is in `(cursor, decision.cursor]`. See the module docs
/// for the policies.
pub fn decide(
    cursor: Millis,
    now: Millis,
    previous_active: bool,
    policy: &SlotPolicy,
    times: &mut dyn FireTimes,
) -> Option<Decision> {
    let first_due = times.next_after(cursor).filter(|&s| s > cursor && s <= now)?;
    let skip = policy.overlap == Overlap::Skip;
    let (enqueue, new_cursor) = match policy.catch_up {
        CatchUp::All if skip => {
            let latest = times_last(times, cursor, now, first_due);
            let enqueue = if previous_active { Vec::new() } else { alloc::vec![first_due] };
            (enqueue, latest)
        }
        CatchUp::All => {
            let mut enqueue = alloc::vec![first_due];
            let mut at = first_due;
            while enqueue.len() < MAX_BURST {
                match times.next_after(at).filter(|&s| s > at && s <= now) {
                    Some(slot) => {
                        enqueue.push(slot);
                        at = slot;
                    }
                    None => break,
                }
            }
            (enqueue, at)
        }
        CatchUp::One | CatchUp::None => {
            let latest = times_last(times, cursor, now, first_due);
            let late = policy.catch_up == CatchUp::None && now.since(latest) > policy.late_limit_ms;
            let enqueue = if late || (skip && previous_active) { Vec::new() } else { alloc::vec![latest] };
            (enqueue, latest)
        }
    };
    let next = times.next_after(new_cursor).filter(|&s| s > new_cursor);
    Some(Decision { enqueue, cursor: new_cursor, first_due, next })
}

/// The latest due slot, at least `first_due` (a cadence whose `last_in`
/// disagrees with its `next_after` is held to the slot already found).
fn times_last(times: &mut dyn FireTimes, cursor: Millis, now: Millis, first_due: Millis) -> Millis {
    times.last_in(cursor, now).filter(|&s| s >= first_due && s <= now).unwrap_or(first_due)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    const MIN: u64 = 60_000;

    fn policy(catch_up: CatchUp, overlap: Overlap) -> SlotPolicy {
        SlotPolicy { catch_up, overlap, late_limit_ms: DEFAULT_LATE_LIMIT_MS }
    }

    fn minutes() -> Every {
        Every::new(MIN).unwrap()
    }

    fn ms(minutes: u64) -> Millis {
        Millis(minutes * MIN)
    }

    #[test]
    fn nothing_is_due_before_the_first_slot_after_the_cursor() {
        let p = policy(CatchUp::One, Overlap::Allow);
        assert_eq!(decide(ms(3), ms(3) + 59_999, false, &p, &mut minutes()), None);
    }

    #[test]
    fn the_slot_at_the_cursor_itself_was_dealt_with_already() {
        let p = policy(CatchUp::All, Overlap::Allow);
        assert_eq!(decide(ms(3), ms(3), false, &p, &mut minutes()), None);
    }

    #[test]
    fn one_due_slot_is_enqueued_under_every_catch_up_policy() {
        for catch_up in [CatchUp::All, CatchUp::One, CatchUp::None] {
            let d = decide(ms(3), ms(4) + 200, false, &policy(catch_up, Overlap::Allow), &mut minutes()).unwrap();
            assert_eq!(d.enqueue, vec![ms(4)], "{catch_up}");
            assert_eq!((d.cursor, d.next), (ms(4), Some(ms(5))), "{catch_up}");
            assert!(!d.more_due(ms(4) + 200));
        }
    }

    #[test]
    fn catch_up_all_enqueues_every_missed_slot_oldest_first() {
        let d = decide(ms(0), ms(10) + 30_000, false, &policy(CatchUp::All, Overlap::Allow), &mut minutes()).unwrap();
        assert_eq!(d.enqueue, (1..=10).map(ms).collect::<Vec<_>>());
        assert_eq!(d.cursor, ms(10));
        assert_eq!(d.skipped(Some(minutes())), Some(0));
    }

    #[test]
    fn catch_up_all_stops_at_the_burst_limit_and_says_more_are_due() {
        let now = ms(250);
        let p = policy(CatchUp::All, Overlap::Allow);
        let d = decide(ms(0), now, false, &p, &mut minutes()).unwrap();
        assert_eq!(d.enqueue.len(), MAX_BURST);
        assert_eq!(d.cursor, ms(MAX_BURST as u64));
        assert!(d.more_due(now));
        let again = decide(d.cursor, now, false, &p, &mut minutes()).unwrap();
        assert_eq!(again.enqueue.first(), Some(&ms(MAX_BURST as u64 + 1)));
    }

    #[test]
    fn catch_up_one_enqueues_only_the_latest_missed_slot() {
        let d = decide(ms(0), ms(10) + 30_000, false, &policy(CatchUp::One, Overlap::Allow), &mut minutes()).unwrap();
        assert_eq!(d.enqueue, vec![ms(10)]);
        assert_eq!((d.first_due, d.cursor, d.next), (ms(1), ms(10), Some(ms(11))));
        assert_eq!(d.skipped(Some(minutes())), Some(9));
    }

    #[test]
    fn catch_up_none_skips_slots_seen_past_the_late_limit() {
        let p = policy(CatchUp::None, Overlap::Allow);
        let d = decide(ms(0), ms(10) + DEFAULT_LATE_LIMIT_MS + 1, false, &p, &mut minutes()).unwrap();
        assert!(d.enqueue.is_empty());
        assert_eq!((d.cursor, d.next), (ms(10), Some(ms(11))));
        assert_eq!(d.skipped(Some(minutes())), Some(10));
    }

    #[test]
    fn catch_up_none_still_enqueues_the_latest_slot_seen_within_the_late_limit() {
        let p = policy(CatchUp::None, Overlap::Allow);
        let d = decide(ms(0), ms(10) + DEFAULT_LATE_LIMIT_MS, false, &p, &mut minutes()).unwrap();
        assert_eq!(d.enqueue, vec![ms(10)]);
    }

    #[test]
    fn no_overlap_skips_every_due_slot_while_the_previous_job_is_active() {
        for catch_up in [CatchUp::All, CatchUp::One, CatchUp::None] {
            let d = decide(ms(0), ms(3), true, &policy(catch_up, Overlap::Skip), &mut minutes()).unwrap();
            assert!(d.enqueue.is_empty(), "{catch_up}");
            assert_eq!(d.cursor, ms(3), "{catch_up}");
        }
    }

    #[test]
    fn overlap_allowed_enqueues_while_the_previous_job_is_active() {
        let d = decide(ms(0), ms(1), true, &policy(CatchUp::One, Overlap::Allow), &mut minutes()).unwrap();
        assert_eq!(d.enqueue, vec![ms(1)]);
    }

    #[test]
    fn no_overlap_with_catch_up_all_enqueues_the_first_slot_and_skips_the_rest() {
        let d = decide(ms(0), ms(5), false, &policy(CatchUp::All, Overlap::Skip), &mut minutes()).unwrap();
        assert_eq!(d.enqueue, vec![ms(1)]);
        assert_eq!(d.cursor, ms(5));
    }

    #[test]
    fn every_fires_at_whole_multiples_of_its_period() {
        let mut every = Every::new(5 * MIN).unwrap();
        assert_eq!(every.next_after(Millis(0)), Some(ms(5)));
        assert_eq!(every.next_after(ms(5)), Some(ms(10)));
        assert_eq!(every.next_after(ms(7)), Some(ms(10)));
        assert_eq!(every.last_in(ms(0), ms(14)), Some(ms(10)));
        assert_eq!(every.last_in(ms(10), ms(14)), None);
        assert_eq!(every.next_after(Millis(u64::MAX - 1)), None);
    }

    #[test]
    fn every_refuses_periods_under_a_second_or_over_366_days() {
        assert_eq!(Every::new(999), Err(EveryOutOfRange { period_ms: 999 }));
        assert!(Every::new(MIN_EVERY_MS).is_ok());
        assert!(Every::new(MAX_EVERY_MS).is_ok());
        let long = Every::new(MAX_EVERY_MS + 1).unwrap_err();
        assert!(alloc::format!("{long}").contains("366 days"));
        assert!(alloc::format!("{}", Every::new(0).unwrap_err()).contains("1 second"));
    }

    /// A cadence that only knows `next_after`: the default `last_in` walks.
    struct Listed(Vec<u64>);

    impl FireTimes for Listed {
        fn next_after(&mut self, t: Millis) -> Option<Millis> {
            self.0.iter().copied().map(Millis).find(|&s| s > t)
        }
    }

    #[test]
    fn a_cadence_without_last_in_is_walked_to_the_latest_due_slot() {
        let mut listed = Listed(vec![10, 25, 70, 400]);
        let d = decide(Millis(0), Millis(100), false, &policy(CatchUp::One, Overlap::Allow), &mut listed).unwrap();
        assert_eq!(d.enqueue, vec![Millis(70)]);
        assert_eq!((d.first_due, d.next), (Millis(10), Some(Millis(400))));
        assert_eq!(d.skipped(None), None);
    }

    #[test]
    fn a_cadence_that_ends_is_never_due_again() {
        let mut listed = Listed(vec![10]);
        let p = policy(CatchUp::All, Overlap::Allow);
        let d = decide(Millis(0), Millis(50), false, &p, &mut listed).unwrap();
        assert_eq!((d.enqueue, d.next), (vec![Millis(10)], None));
        assert_eq!(decide(Millis(10), Millis(5_000), false, &p, &mut listed), None);
    }

    /// A faulty cadence that answers its own argument: no loop, no slot.
    struct Stuck;

    impl FireTimes for Stuck {
        fn next_after(&mut self, t: Millis) -> Option<Millis> {
            Some(t)
        }
    }

    #[test]
    fn a_cadence_answering_instants_not_after_the_cursor_stalls_instead_of_looping() {
        let p = policy(CatchUp::All, Overlap::Allow);
        assert_eq!(decide(Millis(5), Millis(50), false, &p, &mut Stuck), None);
    }

    #[test]
    fn catch_up_spellings_round_trip() {
        for c in [CatchUp::All, CatchUp::One, CatchUp::None] {
            assert_eq!(CatchUp::parse(c.as_str()), Some(c));
        }
        assert_eq!(CatchUp::parse("some"), None);
        for o in [Overlap::Allow, Overlap::Skip] {
            assert_eq!(Overlap::parse(o.as_str()), Some(o));
        }
        assert_eq!(CatchUp::default(), CatchUp::One);
    }
}
