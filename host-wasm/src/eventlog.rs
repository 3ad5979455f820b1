//! The event log's bytes for Node.js (`leasehold/eventlog`): the core's
//! framing ([`leasehold_core::pump::frame`]) and open decisions
//! ([`leasehold_core::pump::recovery`]), so a log written from Node.js is
//! the same file the native host writes and reads, and is recovered the same
//! way. The JS glue (`pkg/src/eventlog.js`) does the file I/O through
//! `node:fs` and adds no rule of its own about the bytes.
//!
//! An append's records are built here too, from one JSON text of its
//! drafts' values ([`batch`]): the glue makes one `JSON.stringify` per
//! append and crosses into wasm twice, whatever the number of drafts.
//!
//! Built as a module of its own (feature `eventlog`): only users of the
//! event log load it.
//!
//! Numbers: sequence numbers, lengths and offsets cross as JS numbers
//! (exact below 2^53); epochs, which are nanoseconds since the Unix epoch,
//! cross as `BigInt`s.

use js_sys::{BigInt, Float64Array, Object, Reflect, Uint8Array};
use leasehold_core::pump::frame::{BatchEncoder, EncodeError, Frames, decode_header, encode_header, is_reservation};
use leasehold_core::pump::rewrite::rewrite;
use leasehold_core::pump::recovery::{NewLog, OpenPlan, TAIL_LEN, Written, new_epoch, plan_open};
use leasehold_core::pump::{DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE};
use wasm_bindgen::prelude::*;

use crate::mark_pairs;

pub mod batch;

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Defining a data property on a fresh plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

/// A JS number as a sequence number or length: integers from 0 up; anything
/// else is refused by the glue before it gets here, and saturates here.
fn u64_of(n: f64) -> u64 {
    if n.is_finite() && n > 0.0 { n as u64 } else { 0 }
}

fn encode_error(e: &EncodeError) -> JsError {
    JsError::new(&e.to_string())
}

/// `{ maxChunkSize, defaultChunkSize, headerLen, tailLen, frameHeadLen,
/// frameSumAt }`: the framing's constants (counts of records and bytes;
/// `frameSumAt` is where a frame's body checksum sits in its head, for
/// `encodeDrafts` with `checksum` false).
#[wasm_bindgen(js_name = eventLogConstants)]
pub fn constants() -> Object {
    let out = Object::new();
    set(&out, "maxChunkSize", MAX_CHUNK_SIZE as f64);
    set(&out, "defaultChunkSize", DEFAULT_CHUNK_SIZE as f64);
    set(&out, "headerLen", leasehold_core::pump::frame::HEADER_LEN as u32);
    set(&out, "tailLen", TAIL_LEN as u32);
    set(&out, "frameHeadLen", leasehold_core::pump::frame::FRAME_HEAD_LEN as u32);
    set(&out, "frameSumAt", leasehold_core::pump::frame::FRAME_SUM_AT as u32);
    out
}

/// The 20-byte header of a new log of epoch `epoch`.
#[wasm_bindgen(js_name = encodeHeader)]
pub fn encode_header_js(epoch: u64) -> Vec<u8> {
    encode_header(epoch).to_vec()
}

/// A new epoch from the wall clock `now_ns` (nanoseconds since the Unix
/// epoch), never `previous` (0: none).
#[wasm_bindgen(js_name = newEpoch)]
pub fn new_epoch_js(now_ns: u64, previous: u64) -> u64 {
    new_epoch(now_ns, (previous != 0).then_some(previous))
}

/// One frame (one append): records numbered `first`, `first + 1`, … whose
/// payloads are `payloads` cut at the byte lengths `lens` (an empty payload
/// is a reservation), then the watermarks `names[i] → positions[i]`.
///
/// # Errors
/// A source name over 65,535 bytes, a frame over 4 GiB, lengths that do not
/// add up to the payload bytes, or `names` and `positions` of unequal length.
#[wasm_bindgen(js_name = encodeFrame)]
pub fn encode_frame(
    payloads: &[u8],
    lens: &[u32],
    first: f64,
    names: Vec<String>,
    positions: &[f64],
) -> Result<Vec<u8>, JsError> {
    if names.len() != positions.len() {
        return Err(JsError::new("watermark names and positions differ in count"));
    }
    let total: u64 = lens.iter().map(|l| u64::from(*l)).sum();
    if total != payloads.len() as u64 {
        return Err(JsError::new("payload lengths do not add up to the payload bytes"));
    }
    let mut out = Vec::with_capacity(payloads.len() + 12 * lens.len() + 64);
    let mut batch = BatchEncoder::begin(&mut out);
    let (mut at, mut seq) = (0usize, u64_of(first));
    for len in lens {
        let end = at + *len as usize;
        let payload = &payloads[at..end];
        batch
            .record(seq, |b| {
                b.extend_from_slice(payload);
                Ok::<(), EncodeError>(())
            })
            .map_err(|e| encode_error(&e))?;
        at = end;
        seq += 1;
    }
    batch
        .finish(names.iter().map(String::as_str).zip(positions.iter().map(|p| u64_of(*p))))
        .map_err(|e| encode_error(&e))?;
    Ok(out)
}

/// What an open does with the bytes found at the log's path (`bytes`
/// undefined: no file). `known_*` describe what the writer knows it wrote
/// when it reopens its own log after a failure (`known_epoch` 0: a first
/// open). Answers one of:
///
/// - `{ kind: "create", why: "missing" | "corrupt" | "replaced",
///   asideSuffix?: ".corrupt-" | ".replaced-", corruption?: string }`
/// - `{ kind: "takeover", epoch: bigint, validLen, tornBytes (0 when the
///   tail is whole), nextSeq, records, marks: [[source, position], …],
///   tail: Uint8Array }` (lengths in bytes).
#[wasm_bindgen(js_name = planOpen)]
pub fn plan_open_js(bytes: Option<Box<[u8]>>, known_epoch: u64, known_len: f64, known_tail: &[u8]) -> Object {
    let known = (known_epoch != 0).then(|| {
        let mut tail = [0u8; TAIL_LEN];
        let n = known_tail.len().min(TAIL_LEN);
        tail[TAIL_LEN - n..].copy_from_slice(&known_tail[known_tail.len() - n..]);
        Written { epoch: known_epoch, len: u64_of(known_len), tail }
    });
    let out = Object::new();
    match plan_open(bytes.as_deref(), known.as_ref()) {
        OpenPlan::Create(why) => {
            set(&out, "kind", "create");
            set(
                &out,
                "why",
                match &why {
                    NewLog::Missing => "missing",
                    NewLog::Corrupt(_) => "corrupt",
                    NewLog::Replaced => "replaced",
                },
            );
            if let Some(suffix) = why.aside_suffix() {
                set(&out, "asideSuffix", suffix);
            }
            if let NewLog::Corrupt(c) = &why {
                set(&out, "corruption", c.to_string());
            }
        }
        OpenPlan::TakeOver(take) => {
            set(&out, "kind", "takeover");
            set(&out, "epoch", BigInt::from(take.summary.epoch));
            set(&out, "validLen", take.summary.valid_len as f64);
            set(&out, "tornBytes", take.truncate.map_or(0.0, |(_, torn)| torn as f64));
            set(&out, "nextSeq", take.next_seq as f64);
            set(&out, "records", take.summary.records as f64);
            set(&out, "marks", mark_pairs(take.summary.marks.iter().map(|(k, v)| (k.as_str(), *v))));
            set(&out, "tail", Uint8Array::from(&take.written.tail[..]));
        }
    }
    out
}

/// The records of a log's bytes with sequence numbers from `from` on, as
/// read by the native reader: `{ epoch: bigint, entries: Float64Array
/// [seq, offset, length, …] (payload byte ranges in `bytes`; reservations
/// left out), next, marks: [[source, position], …] (of the frames read, a
/// later one's winning), damage?: string }`. `next` is one past the last record
/// read (or `from`). A torn tail ends the read quietly; damage before it
/// ends the read with `damage` saying what (the frames before it are read).
///
/// # Errors
/// A bad header: nothing of the log can be trusted.
#[wasm_bindgen(js_name = readRecords)]
pub fn read_records(bytes: &[u8], from: f64) -> Result<Object, JsError> {
    let epoch = decode_header(bytes).map_err(|e| JsError::new(&e.to_string()))?;
    let from = u64_of(from);
    let mut entries = Vec::new();
    let mut next = from;
    let mut damage = None;
    // Few sources: a list (a later frame's value wins) keeps the module small.
    let mut marks: Vec<(&str, u64)> = Vec::new();
    for frame in Frames::new(bytes) {
        let batch = match frame {
            Ok((_, batch)) => batch,
            Err(corruption) => {
                damage = Some(corruption.to_string());
                break;
            }
        };
        for (name, position) in batch.marks() {
            match marks.iter_mut().find(|(n, _)| *n == name) {
                Some(mark) => mark.1 = position,
                None => marks.push((name, position)),
            }
        }
        for record in batch.records().filter(|r| r.seq >= from) {
            next = record.seq + 1;
            if !is_reservation(record.payload) {
                let offset = record.payload.as_ptr() as usize - bytes.as_ptr() as usize;
                entries.extend_from_slice(&[record.seq as f64, offset as f64, record.payload.len() as f64]);
            }
        }
    }
    let out = Object::new();
    set(&out, "epoch", BigInt::from(epoch));
    set(&out, "entries", Float64Array::from(&entries[..]));
    set(&out, "next", next as f64);
    set(&out, "marks", mark_pairs(marks));
    if let Some(damage) = damage {
        set(&out, "damage", damage);
    }
    Ok(out)
}

/// The compacted log of `bytes` (a whole log, taken over by this writer):
/// the same epoch, the records whose `keep[i]` is non-zero (`i` counts the
/// records [`read_records`] answers from 0, reservations left out), a
/// reservation of `highest` when no kept record holds it (`highest` < 0:
/// none), in frames of at most `max_batch` records, the watermarks `names[i]
/// → positions[i]` on the last frame.
///
/// # Errors
/// A header or frame that no longer checks, a `keep` of the wrong length,
/// or an encoding error (a source name over 65,535 bytes).
#[wasm_bindgen(js_name = compactBytes)]
pub fn compact_bytes(
    bytes: &[u8],
    keep: &[u8],
    highest: f64,
    max_batch: u32,
    names: Vec<String>,
    positions: &[f64],
) -> Result<Vec<u8>, JsError> {
    let mut flags = keep.iter();
    let mut short = false;
    let highest = (highest >= 0.0).then(|| u64_of(highest));
    let marks: Vec<(&str, u64)> = names.iter().map(String::as_str).zip(positions.iter().map(|p| u64_of(*p))).collect();
    let rewritten = rewrite(bytes, highest, max_batch as usize, &marks, |_| {
        let flag = flags.next();
        short |= flag.is_none();
        flag.is_some_and(|f| *f != 0)
    })
    .map_err(|e| JsError::new(&e.to_string()))?;
    if short {
        return Err(JsError::new("keep flags fewer than the log's records"));
    }
    if flags.next().is_some() {
        return Err(JsError::new("keep flags more than the log's records"));
    }
    rewritten.map(|r| r.bytes).ok_or_else(|| JsError::new("keep flags drop no record: the log needs no rewrite"))
}
