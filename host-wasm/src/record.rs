//! The record codec every wasm machine speaks to its JS glue: an output is a
//! record of [`STRIDE`] numbers, `[code, field₁ …]`, and each machine
//! declares its record kinds ([`Kind`]: a name, a code, field names in slot
//! order) once. [`kinds_table`] hands the declarations to the glue, which
//! reads every code and field offset by name at load (`kinds.renew.code`,
//! `kinds.renew.at`), so no layout is written twice. Codes are unique across
//! the machines (the runner's from 1, its events from [`EVENT_CODE`], the
//! lease supervisor's from 20).
//!
//! Events are records too: their kinds are the core's event listing
//! ([`EVENT_KINDS`]), so their field names are the core's, and
//! [`event_table`] tells the glue how to build each event object (a
//! [`FieldKind::Report`] takes four slots: `claimed, performed, failed,
//! claimLost`; a [`FieldKind::Error`] slot holds a token the glue resolves).

use js_sys::{Array, Object};
use wasm_bindgen::JsValue;
use leasehold_core::event::{Event, FieldKind, Value, EVENT_KINDS};

use crate::set;

/// Numbers per record: the code and up to seven fields.
pub const STRIDE: usize = 8;

/// The code of the first event kind; event `i` of [`EVENT_KINDS`] is
/// `EVENT_CODE + i`.
pub const EVENT_CODE: u8 = 10;

/// One record kind of a machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The name the glue knows it by.
    pub name: &'static str,
    /// Its code, slot 0 of the record.
    pub code: u8,
    /// Its fields, in slots 1, 2, …
    pub fields: &'static [&'static str],
}

/// Writes a record of `kind` with `values` (one per field, in order) into
/// `record` (at least [`STRIDE`] numbers).
pub fn put(record: &mut [f64], kind: &Kind, values: &[f64]) {
    debug_assert_eq!(values.len(), kind.fields.len(), "{}: one value per field", kind.name);
    record[0] = f64::from(kind.code);
    record[1..=values.len()].copy_from_slice(values);
}

/// `{ [name]: { code, [field]: offset, … }, … }`: offsets from the record's
/// start (the code is at 0).
pub fn kinds_table(kinds: &[Kind]) -> Object {
    let table = Object::new();
    for kind in kinds {
        let entry = Object::new();
        set(&entry, "code", kind.code);
        for (i, field) in kind.fields.iter().enumerate() {
            set(&entry, field, (i + 1) as u32);
        }
        set(&table, kind.name, entry);
    }
    table
}

/// Slots a field of this kind takes.
fn width(kind: FieldKind) -> usize {
    if kind == FieldKind::Report { 4 } else { 1 }
}

/// The field kinds as the glue names them.
fn kind_name(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Number => "number",
        FieldKind::Flag => "flag",
        FieldKind::Report => "report",
        FieldKind::Error => "error",
        FieldKind::WhenLapsed => "whenLapsed",
    }
}

/// `[{ type, code, fields: [[name, offset, kind], …] }, …]` in the order of
/// [`EVENT_KINDS`]; `kind` is `number`, `flag` (1 or 0), `report` (four
/// slots from `offset`), `error` (a token) or `whenLapsed` (a number the
/// object carries only when its `lapsed` flag is 1).
pub fn event_table() -> Array {
    EVENT_KINDS
        .iter()
        .enumerate()
        .map(|(index, kind)| {
            let entry = Object::new();
            set(&entry, "type", kind.type_name);
            set(&entry, "code", u32::from(EVENT_CODE) + index as u32);
            let mut offset = 1;
            let fields: Array = kind
                .fields
                .iter()
                .map(|field| {
                    let row = Array::of3(&field.name.into(), &(offset as u32).into(), &kind_name(field.kind).into());
                    offset += width(field.kind);
                    row
                })
                .collect();
            set(&entry, "fields", fields);
            JsValue::from(entry)
        })
        .collect()
}

/// Writes `event` (errors as the glue's tokens) into `record`.
pub fn put_event(record: &mut [f64], event: &Event<u32>) {
    record[0] = f64::from(EVENT_CODE) + event.kind_index() as f64;
    let mut slot = 1;
    for value in event.fields().into_iter().flatten() {
        match value {
            Value::Number(n) => record[slot] = n as f64,
            Value::Flag(flag) => record[slot] = if flag { 1.0 } else { 0.0 },
            Value::Error(token) => record[slot] = f64::from(*token),
            Value::Report(r) => {
                for (i, count) in r.counts().into_iter().enumerate() {
                    record[slot + i] = f64::from(count);
                }
                slot += 3;
            }
        }
        slot += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_fits_a_record() {
        for kind in &EVENT_KINDS {
            let slots: usize = kind.fields.iter().map(|f| width(f.kind)).sum();
            assert!(1 + slots <= STRIDE, "{}", kind.type_name);
        }
    }
}
