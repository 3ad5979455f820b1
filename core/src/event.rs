//! The trace a runner emits and the report a pass answers.
//!
//! Every host writes an event the same way: a `type` string, then named
//! fields ([`EVENT_KINDS`] lists them per type, in order). The native host
//! serialises it through serde (feature `serde`) as
//! `{"type":"performed","at":…,"item":…,"durationMs":…}`; the wasm host
//! writes the same fields as numbers into its records and the JS glue builds
//! the same object from the table. So the field names live here once.

use crate::Millis;

/// What one pass did.
///
/// Every claimed item is counted in exactly one of `performed`, `failed` and
/// `claim_lost`, so `claimed == performed + failed + claim_lost` once the pass
/// has ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PassReport {
    /// Items a claim answered in this pass.
    pub claimed: u32,
    /// Items whose `perform` resolved (including ones whose claim was lost
    /// while they were finishing).
    pub performed: u32,
    /// Items whose `perform` raised while the claim was still held.
    pub failed: u32,
    /// Items whose claim was lost (or lapsed) and whose `perform` then raised
    /// or was dropped after the grace period.
    pub claim_lost: u32,
}

impl PassReport {
    /// The report of a pass that claimed nothing: every count 0.
    pub const IDLE: PassReport = PassReport { claimed: 0, performed: 0, failed: 0, claim_lost: 0 };

    /// The field names of a report in JS objects and JSON, in the order of
    /// [`PassReport::counts`].
    pub const FIELDS: [&'static str; 4] = ["claimed", "performed", "failed", "claimLost"];

    /// The four counts, in the order of [`PassReport::FIELDS`].
    pub fn counts(&self) -> [u32; 4] {
        [self.claimed, self.performed, self.failed, self.claim_lost]
    }

    /// The report with these counts, in the order of [`PassReport::FIELDS`].
    pub fn from_counts([claimed, performed, failed, claim_lost]: [u32; 4]) -> PassReport {
        PassReport { claimed, performed, failed, claim_lost }
    }
}

/// One trace event, with the `type` strings (see
/// [`Event::type_name`]) and fields.
///
/// `E` is the host's opaque error payload (a `JsValue` in JS, a message or
/// boxed error natively): the core hands back what the host gave it. `at` is
/// the instant in [`Millis`]. `item` is the item's ordinal in its pass
/// (0-based, in claim order), so a sink can build per-item spans.
// Field meanings are on each variant: `at` instant, `item` ordinal, `error` the host's payload.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event<E> {
    /// The pass found work; `at` is the time read at the head of the pass.
    PassStart { at: Millis },
    /// The pass ended; `next_delay_ms` is the delay actually scheduled after it.
    PassEnd { at: Millis, report: PassReport, next_delay_ms: u64 },
    /// A claim answered an item.
    Claimed { at: Millis, item: u32 },
    /// A claim raised: the pass ends and backs off.
    ClaimFailed { at: Millis, error: E },
    /// An item's `perform` resolved after `duration_ms`.
    Performed { at: Millis, item: u32, duration_ms: u64 },
    /// An item's `perform` raised while its claim was held.
    ItemFailed { at: Millis, item: u32, error: E },
    /// A renewal sent at `at` answered `true`.
    Heartbeat { at: Millis, item: u32 },
    /// A renewal sent at `at` raised; the lease is as it was.
    HeartbeatFailed { at: Millis, item: u32, error: E },
    /// The claim was lost (a renewal answered `false`, `lapsed == false`, `at`
    /// is that renewal's send time) or lapsed under supervision (`lapsed ==
    /// true`, `at` is the decision time, `unconfirmed_ms` how long the lease
    /// went unconfirmed).
    ClaimLost { at: Millis, item: u32, lapsed: bool, unconfirmed_ms: u64 },
}

/// What a field holds, so a host knows how to write and read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A whole number: an instant or a span in ms, or an item ordinal.
    Number,
    /// `true` or `false`.
    Flag,
    /// A [`PassReport`]: `{ claimed, performed, failed, claimLost }`
    /// ([`PassReport::FIELDS`]).
    Report,
    /// The host's error payload.
    Error,
    /// A span in ms present only when the event's `lapsed` flag is set: a
    /// host that leaves absent fields out (JS objects, JSON) omits it when
    /// `lapsed` is false.
    WhenLapsed,
}

/// One named field of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field's name in JS objects and JSON (camelCase).
    pub name: &'static str,
    /// What it holds.
    pub kind: FieldKind,
}

/// One event type: its `type` string and its fields, in the order
/// [`Event::fields`] gives their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventKind {
    /// The `type` string.
    pub type_name: &'static str,
    /// The fields after `type`, `at` first.
    pub fields: &'static [Field],
}

const fn field(name: &'static str, kind: FieldKind) -> Field {
    Field { name, kind }
}

const AT: Field = field("at", FieldKind::Number);
const ITEM: Field = field("item", FieldKind::Number);
const ERROR: Field = field("error", FieldKind::Error);

/// Every event type, indexed by [`Event::kind_index`]: the one listing of
/// the `type` strings and field names every host writes.
pub const EVENT_KINDS: [EventKind; 9] = [
    EventKind { type_name: "pass-start", fields: &[AT] },
    EventKind {
        type_name: "pass-end",
        fields: &[AT, field("report", FieldKind::Report), field("nextDelayMs", FieldKind::Number)],
    },
    EventKind { type_name: "claimed", fields: &[AT, ITEM] },
    EventKind { type_name: "claim-failed", fields: &[AT, ERROR] },
    EventKind { type_name: "performed", fields: &[AT, ITEM, field("durationMs", FieldKind::Number)] },
    EventKind { type_name: "item-failed", fields: &[AT, ITEM, ERROR] },
    EventKind { type_name: "heartbeat", fields: &[AT, ITEM] },
    EventKind { type_name: "heartbeat-failed", fields: &[AT, ITEM, ERROR] },
    EventKind {
        type_name: "claim-lost",
        fields: &[AT, ITEM, field("lapsed", FieldKind::Flag), field("unconfirmedMs", FieldKind::WhenLapsed)],
    },
];

/// One field's value, as [`Event::fields`] answers it (`E` is then a
/// reference to the error payload) and [`Event::from_fields`] takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<E> {
    /// A [`FieldKind::Number`] or [`FieldKind::WhenLapsed`] field.
    Number(u64),
    /// A [`FieldKind::Flag`] field.
    Flag(bool),
    /// A [`FieldKind::Report`] field.
    Report(PassReport),
    /// A [`FieldKind::Error`] field.
    Error(E),
}

impl<E> Event<E> {
    /// The event's index in [`EVENT_KINDS`].
    pub fn kind_index(&self) -> usize {
        match self {
            Event::PassStart { .. } => 0,
            Event::PassEnd { .. } => 1,
            Event::Claimed { .. } => 2,
            Event::ClaimFailed { .. } => 3,
            Event::Performed { .. } => 4,
            Event::ItemFailed { .. } => 5,
            Event::Heartbeat { .. } => 6,
            Event::HeartbeatFailed { .. } => 7,
            Event::ClaimLost { .. } => 8,
        }
    }

    /// Its type and field names.
    pub fn kind(&self) -> &'static EventKind {
        &EVENT_KINDS[self.kind_index()]
    }

    /// The `type` string: `pass-start`, `pass-end`, `claimed`,
    /// `claim-failed`, `performed`, `item-failed`, `heartbeat`,
    /// `heartbeat-failed` or `claim-lost`.
    pub fn type_name(&self) -> &'static str {
        self.kind().type_name
    }

    /// The field values, in the order of [`Event::kind`]'s fields (at most
    /// four; the rest of the array is `None`).
    pub fn fields(&self) -> [Option<Value<&E>>; 4] {
        use Value::{Flag, Number};
        let n = |v: u64| Some(Number(v));
        match self {
            Event::PassStart { at } => [n(at.0), None, None, None],
            Event::PassEnd { at, report, next_delay_ms } => [n(at.0), Some(Value::Report(*report)), n(*next_delay_ms), None],
            Event::Claimed { at, item } | Event::Heartbeat { at, item } => [n(at.0), n(u64::from(*item)), None, None],
            Event::ClaimFailed { at, error } => [n(at.0), Some(Value::Error(error)), None, None],
            Event::Performed { at, item, duration_ms } => [n(at.0), n(u64::from(*item)), n(*duration_ms), None],
            Event::ItemFailed { at, item, error } | Event::HeartbeatFailed { at, item, error } => {
                [n(at.0), n(u64::from(*item)), Some(Value::Error(error)), None]
            }
            Event::ClaimLost { at, item, lapsed, unconfirmed_ms } => {
                [n(at.0), n(u64::from(*item)), Some(Flag(*lapsed)), n(*unconfirmed_ms)]
            }
        }
    }

    /// The event of type `EVENT_KINDS[index]` with these field values (in
    /// the order of its fields; the rest `None`), or `None` when `index` is
    /// not a type or a value is missing or of the wrong kind. A missing
    /// [`FieldKind::WhenLapsed`] value reads 0.
    pub fn from_fields(index: usize, values: [Option<Value<E>>; 4]) -> Option<Event<E>> {
        use Value::{Error, Flag, Number, Report};
        let [a, b, c, d] = values;
        let at = match a {
            Some(Number(at)) => Millis(at),
            _ => return None,
        };
        let item = |v: Option<Value<E>>| match v {
            Some(Number(item)) => u32::try_from(item).ok(),
            _ => None,
        };
        Some(match (index, b, c, d) {
            (0, ..) => Event::PassStart { at },
            (1, Some(Report(report)), Some(Number(next_delay_ms)), _) => Event::PassEnd { at, report, next_delay_ms },
            (2, b, ..) => Event::Claimed { at, item: item(b)? },
            (3, Some(Error(error)), ..) => Event::ClaimFailed { at, error },
            (4, b, Some(Number(duration_ms)), _) => Event::Performed { at, item: item(b)?, duration_ms },
            (5, b, Some(Error(error)), _) => Event::ItemFailed { at, item: item(b)?, error },
            (6, b, ..) => Event::Heartbeat { at, item: item(b)? },
            (7, b, Some(Error(error)), _) => Event::HeartbeatFailed { at, item: item(b)?, error },
            (8, b, Some(Flag(lapsed)), d) => {
                let unconfirmed_ms = match d {
                    Some(Number(ms)) => ms,
                    None => 0,
                    Some(_) => return None,
                };
                Event::ClaimLost { at, item: item(b)?, lapsed, unconfirmed_ms }
            }
            _ => return None,
        })
    }

    /// The same event with its error payload mapped (borrowed, copied, as
    /// text: whatever a consumer needs).
    pub fn map_error<'a, F>(&'a self, f: impl FnOnce(&'a E) -> F) -> Event<F> {
        match self {
            Event::PassStart { at } => Event::PassStart { at: *at },
            Event::PassEnd { at, report, next_delay_ms } => {
                Event::PassEnd { at: *at, report: *report, next_delay_ms: *next_delay_ms }
            }
            Event::Claimed { at, item } => Event::Claimed { at: *at, item: *item },
            Event::ClaimFailed { at, error } => Event::ClaimFailed { at: *at, error: f(error) },
            Event::Performed { at, item, duration_ms } => Event::Performed { at: *at, item: *item, duration_ms: *duration_ms },
            Event::ItemFailed { at, item, error } => Event::ItemFailed { at: *at, item: *item, error: f(error) },
            Event::Heartbeat { at, item } => Event::Heartbeat { at: *at, item: *item },
            Event::HeartbeatFailed { at, item, error } => Event::HeartbeatFailed { at: *at, item: *item, error: f(error) },
            Event::ClaimLost { at, item, lapsed, unconfirmed_ms } => {
                Event::ClaimLost { at: *at, item: *item, lapsed: *lapsed, unconfirmed_ms: *unconfirmed_ms }
            }
        }
    }

    /// When it happened.
    pub fn at(&self) -> Millis {
        match self {
            Event::PassStart { at }
            | Event::PassEnd { at, .. }
            | Event::Claimed { at, .. }
            | Event::ClaimFailed { at, .. }
            | Event::Performed { at, .. }
            | Event::ItemFailed { at, .. }
            | Event::Heartbeat { at, .. }
            | Event::HeartbeatFailed { at, .. }
            | Event::ClaimLost { at, .. } => *at,
        }
    }

    /// The item ordinal, for per-item events.
    pub fn item(&self) -> Option<u32> {
        match self {
            Event::Claimed { item, .. }
            | Event::Performed { item, .. }
            | Event::ItemFailed { item, .. }
            | Event::Heartbeat { item, .. }
            | Event::HeartbeatFailed { item, .. }
            | Event::ClaimLost { item, .. } => Some(*item),
            _ => None,
        }
    }
}

/// `{"type": …, field: value, …}` with the names of [`EVENT_KINDS`]; a
/// [`FieldKind::WhenLapsed`] field is left out when `lapsed` is false.
#[cfg(feature = "serde")]
impl<E: serde::Serialize> serde::Serialize for Event<E> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let kind = self.kind();
        let values = self.fields();
        let lapsed = matches!(self, Event::ClaimLost { lapsed: true, .. });
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", kind.type_name)?;
        for (field, value) in kind.fields.iter().zip(values) {
            match value {
                _ if field.kind == FieldKind::WhenLapsed && !lapsed => {}
                Some(Value::Number(n)) => map.serialize_entry(field.name, &n)?,
                Some(Value::Flag(flag)) => map.serialize_entry(field.name, &flag)?,
                Some(Value::Report(report)) => map.serialize_entry(field.name, &report)?,
                Some(Value::Error(error)) => map.serialize_entry(field.name, error)?,
                None => {}
            }
        }
        map.end()
    }
}
