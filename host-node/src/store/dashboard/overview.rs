//! The overview: every queue's jobs counted by shown state from one
//! snapshot, the succeeded jobs of a large table estimated from a fixed
//! sample of ids.

use std::collections::BTreeMap;

use leasehold_core::Millis;

use super::{EXACT_COUNT_SPAN, Overview, QueueSummary, SAMPLE_IDS, StateCounts};
use crate::store::db::{AnyRow, Arg, SnapshotReader};
use crate::store::{QueueCounts, Store, StoreResult, validate};

impl Store {
    /// Every queue that has jobs or is paused, with its jobs counted by
    /// [`ShownState`](super::ShownState) at `now` (SQLite; PostgreSQL uses its own clock), all
    /// from one snapshot. Exact but for the succeeded jobs of a table whose
    /// ids span more than [`EXACT_COUNT_SPAN`]: those are estimated from
    /// [`SAMPLE_IDS`] ids, which [`Overview::succeeded_estimated`] says.
    ///
    /// # Errors
    /// [`StoreError::Database`](crate::store::StoreError::Database) when a read fails.
    pub async fn overview(&self, now: Millis) -> StoreResult<Overview> {
        let now_ms = validate::millis("now", now)?;
        let mut raw = RawOverview::new(now_ms, Counting::MayEstimate);
        self.backend().read_snapshot(&mut raw).await?;
        let paused = self.paused_queues().await?;
        Ok(raw.into_overview(paused))
    }

    /// Every queue that has jobs, in name order, with its jobs counted by
    /// state at `now` (ms since the Unix epoch; SQLite; PostgreSQL uses its
    /// own clock): the overview's counts, read the same way from one
    /// snapshot, but every count exact whatever the table's size. Queued
    /// jobs are split as [`QueueCounts`] says (queued, scheduled,
    /// retrying; [`QueueCounts::waiting`] is all three).
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`](crate::store::StoreError::InvalidOption)
    /// (`now`) for a time past what the database stores;
    /// [`StoreError::Database`](crate::store::StoreError::Database) when a read fails.
    pub async fn counts(&self, now: Millis) -> StoreResult<Vec<QueueCounts>> {
        let now_ms = validate::millis("now", now)?;
        let mut raw = RawOverview::new(now_ms, Counting::Exact);
        self.backend().read_snapshot(&mut raw).await?;
        let queues = raw.into_overview(Vec::new()).queues;
        Ok(queues.into_iter().map(|q| {
            let c = q.counts;
            QueueCounts {
                queue: q.queue,
                queued: c.queued,
                scheduled: c.scheduled,
                retrying: c.retrying,
                running: c.running,
                succeeded: c.succeeded,
                dead: c.dead,
                cancelled: c.cancelled,
            }
        }).collect())
    }
}

/// Whether the succeeded jobs of a large table may be estimated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counting {
    /// Over [`EXACT_COUNT_SPAN`] ids, from a sample (the overview).
    MayEstimate,
    /// Always counted ([`Store::counts`]).
    Exact,
}

/// `(queue, queued, scheduled, retrying)`.
type QueuedRow = (String, i64, i64, i64);
/// `(queue, jobs)`.
type QueueRow = (String, i64);
/// `(queue, state, jobs)` or `(queue, state)` of a sample.
type QueueStateRow = (String, String, i64);

/// How the succeeded jobs are counted.
enum Sample {
    Exact,
    Ids { ids: Vec<i64>, span: u64 },
}

impl Sample {
    /// Exact up to [`EXACT_COUNT_SPAN`] ids from the oldest job to the
    /// newest; above, [`SAMPLE_IDS`] ids, one in each equal slice of the
    /// range at a place fixed by the range's start (so an unchanged range
    /// gives an unchanged estimate, and ids in a regular pattern — two
    /// queues enqueued in turn — are not hit in step).
    fn plan((oldest, newest): (Option<i64>, Option<i64>)) -> Sample {
        let (Some(oldest), Some(newest)) = (oldest, newest) else { return Sample::Exact };
        let span = newest.abs_diff(oldest) + 1;
        if span <= EXACT_COUNT_SPAN {
            return Sample::Exact;
        }
        let slices = SAMPLE_IDS as u128;
        let ids = (0..slices)
            .map(|i| {
                let start = u128::from(span) * i / slices;
                let width = (u128::from(span) * (i + 1) / slices - start).max(1);
                let offset = u128::from(mix(oldest as u64 ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))) % width;
                oldest + (start + offset) as i64
            })
            .collect();
        Sample::Ids { ids, span }
    }
}

/// splitmix64's finaliser: a fixed, well-spread pseudo-random number.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

enum Succeeded {
    Exact(Vec<QueueRow>),
    Sampled { rows: Vec<(String, String)>, sampled: u64, span: u64 },
}

/// The overview's reads, from one snapshot, and what they found.
struct RawOverview {
    /// The caller's clock (SQLite splits queued jobs by it).
    now_ms: i64,
    counting: Counting,
    /// The read whose rows come next.
    step: Step,
    queued: Vec<QueuedRow>,
    running: Vec<QueueRow>,
    parked: Vec<QueueStateRow>,
    succeeded: Succeeded,
    span: (Option<i64>, Option<i64>),
    /// The sample the span planned, once read.
    sample: Option<Vec<i64>>,
}

/// The overview's reads, in order.
#[derive(Clone, Copy)]
enum Step {
    Start,
    Queued,
    Running,
    Parked,
    Span,
    Succeeded,
    Done,
}

impl RawOverview {
    fn new(now_ms: i64, counting: Counting) -> RawOverview {
        RawOverview {
            now_ms,
            counting,
            step: Step::Start,
            queued: Vec::new(),
            running: Vec::new(),
            parked: Vec::new(),
            succeeded: Succeeded::Exact(Vec::new()),
            span: (None, None),
            sample: None,
        }
    }
}

impl SnapshotReader for RawOverview {
    fn next_read(&mut self) -> Option<(&'static str, Vec<(&'static str, Arg<'_>)>)> {
        self.step = match self.step {
            Step::Start => Step::Queued,
            Step::Queued => Step::Running,
            Step::Running => Step::Parked,
            Step::Parked => Step::Span,
            Step::Span => Step::Succeeded,
            Step::Succeeded | Step::Done => Step::Done,
        };
        Some(match self.step {
            Step::Queued => ("dashboard_queued", vec![("now", self.now_ms.into())]),
            Step::Running => ("dashboard_running", Vec::new()),
            Step::Parked => ("dashboard_parked", Vec::new()),
            Step::Span => ("dashboard_span", Vec::new()),
            Step::Succeeded => match if self.counting == Counting::Exact { Sample::Exact } else { Sample::plan(self.span) } {
                Sample::Exact => ("dashboard_succeeded", Vec::new()),
                Sample::Ids { ids, span } => {
                    self.succeeded = Succeeded::Sampled { rows: Vec::new(), sampled: ids.len() as u64, span };
                    let ids = self.sample.insert(ids);
                    ("dashboard_sample", vec![("ids", ids.as_slice().into())])
                }
            },
            Step::Start | Step::Done => return None,
        })
    }

    fn row(&mut self, row: &AnyRow) -> StoreResult<()> {
        match (self.step, &mut self.succeeded) {
            (Step::Queued, _) => {
                let counts = (row.int("queued")?, row.int("scheduled")?, row.int("retrying")?);
                self.queued.push((row.text("queue")?, counts.0, counts.1, counts.2));
            }
            (Step::Running, _) => self.running.push((row.text("queue")?, row.int("n")?)),
            (Step::Parked, _) => self.parked.push((row.text("queue")?, row.text("state")?, row.int("n")?)),
            (Step::Span, _) => self.span = (row.opt_int_at(0)?, row.opt_int_at(1)?),
            (Step::Succeeded, Succeeded::Exact(rows)) => rows.push((row.text("queue")?, row.int("n")?)),
            (Step::Succeeded, Succeeded::Sampled { rows, .. }) => rows.push((row.text("queue")?, row.text("state")?)),
            (Step::Start | Step::Done, _) => {}
        }
        Ok(())
    }
}

/// The summary of `queue`, blank when it is new.
fn entry(queues: &mut BTreeMap<String, QueueSummary>, queue: String) -> &mut QueueSummary {
    let blank = QueueSummary { queue: queue.clone(), counts: StateCounts::default(), paused_at_ms: None, paused_by: None };
    queues.entry(queue).or_insert(blank)
}

impl RawOverview {
    fn into_overview(self, paused: Vec<crate::store::PausedQueue>) -> Overview {
        let n = |v: i64| v.max(0) as u64;
        let mut queues: BTreeMap<String, QueueSummary> = BTreeMap::new();
        for (queue, queued, scheduled, retrying) in self.queued {
            let c = &mut entry(&mut queues, queue).counts;
            (c.queued, c.scheduled, c.retrying) = (n(queued), n(scheduled), n(retrying));
        }
        for (queue, running) in self.running {
            entry(&mut queues, queue).counts.running = n(running);
        }
        for (queue, state, count) in self.parked {
            let c = &mut entry(&mut queues, queue).counts;
            match state.as_str() {
                "dead" => c.dead = n(count),
                _ => c.cancelled = n(count),
            }
        }
        let (estimated, sampled) = match self.succeeded {
            Succeeded::Exact(rows) => {
                for (queue, count) in rows {
                    entry(&mut queues, queue).counts.succeeded = n(count);
                }
                (false, 0)
            }
            Succeeded::Sampled { rows, sampled, span } => {
                let mut hits: BTreeMap<String, u64> = BTreeMap::new();
                for (queue, state) in rows {
                    if state == "succeeded" {
                        *hits.entry(queue).or_default() += 1;
                    }
                }
                for (queue, hit) in hits {
                    // Rounded to the nearest whole job.
                    let estimate = (u128::from(hit) * u128::from(span) * 2 + u128::from(sampled)) / (2 * u128::from(sampled));
                    entry(&mut queues, queue).counts.succeeded = estimate as u64;
                }
                (true, sampled)
            }
        };
        for p in paused {
            let q = entry(&mut queues, p.queue);
            q.paused_at_ms = Some(p.paused_at.0);
            q.paused_by = Some(p.paused_by);
        }
        let id_span = match self.span {
            (Some(oldest), Some(newest)) => newest.abs_diff(oldest) + 1,
            _ => 0,
        };
        Overview { queues: queues.into_values().collect(), succeeded_estimated: estimated, sampled_ids: sampled, id_span }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_id_range_is_counted_exactly() {
        assert!(matches!(Sample::plan((Some(1), Some(EXACT_COUNT_SPAN as i64))), Sample::Exact));
        assert!(matches!(Sample::plan((None, None)), Sample::Exact));
    }

    #[test]
    fn a_sample_takes_one_id_in_each_slice_inside_the_range_and_the_same_each_time() {
        let Sample::Ids { ids, span } = Sample::plan((Some(11), Some(1_000_010))) else { panic!("sampled") };
        assert_eq!(span, 1_000_000);
        assert_eq!(ids.len(), SAMPLE_IDS);
        let slice = 1_000_000 / SAMPLE_IDS as i64;
        for (i, id) in ids.iter().enumerate() {
            let start = 11 + (1_000_000 * i as i64) / SAMPLE_IDS as i64;
            assert!((start..=start + slice).contains(id), "id {id} outside slice {i}");
        }
        let Sample::Ids { ids: again, .. } = Sample::plan((Some(11), Some(1_000_010))) else { panic!("sampled") };
        assert_eq!(ids, again);
        // Not in step with a pattern of period 2 (two queues in turn).
        let even = ids.iter().filter(|id| *id % 2 == 0).count();
        assert!((1800..2300).contains(&even), "{even} even ids of {SAMPLE_IDS}");
    }
}
