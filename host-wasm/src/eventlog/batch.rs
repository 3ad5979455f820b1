//! One append's records from one JSON text: the glue (`pkg/src/eventlog-input.js`,
//! `draftsBatch`) checks the drafts and makes a single `JSON.stringify` of their
//! values, which it encodes straight into this module's memory
//! ([`drafts_input`]); [`encode_drafts`] cuts the text and builds each record,
//! `{"source":…,"at":…,"type":…,"identity":…,"body":…}` (the native host's
//! record, `host-node/src/eventlog/record.rs`), in the frame. The bytes are
//! those `JSON.stringify` writes for the record object: every value is
//! `JSON.stringify`'s own text, and `at`, an integer from 0 to 2^53, is
//! written in decimal as JavaScript writes it.
//!
//! # The text
//!
//! A JSON array whose items are, per draft in order, by its kind byte:
//!
//! - [`WHOLE`]: the whole record (an object the glue left to `JSON.stringify`
//!   because a value in it has a `toJSON`), then [`SEPARATOR`];
//! - otherwise `source` and `type` (JSON strings; either left out when the
//!   kind has [`SAME_SOURCE`] or [`SAME_TYPE`]: the last one given stands),
//!   then the identity and [`SEPARATOR`] when the kind has [`IDENTITY`],
//!   the body and [`SEPARATOR`] when it has [`BODY`].
//!
//! The separator is the string `"\u001f"`, which `JSON.stringify` writes as
//! 8 bytes beginning with a backslash. A backslash is rare in JSON text, so
//! the separators are found by looking for backslashes alone, and the
//! values between them are never read byte by byte. A value may hold the
//! same string (in an array, say); then more candidates turn up than the
//! kinds ask for, and the text is read structurally instead (the
//! separators counted are the array's own items, not those nested deeper).

use std::cell::RefCell;

use js_sys::Uint8Array;
use leasehold_core::pump::frame::{BatchEncoder, EncodeError};
use wasm_bindgen::prelude::*;

/// Kind bit: the draft's identity follows its type.
pub const IDENTITY: u8 = 1;
/// Kind bit: the draft's body follows its type (and identity).
pub const BODY: u8 = 2;
/// Kind bit: the item is the whole record.
pub const WHOLE: u8 = 4;
/// Kind bit: no source item; the draft's source is the last one given.
pub const SAME_SOURCE: u8 = 8;
/// Kind bit: no type item; the draft's type is the last one given.
pub const SAME_TYPE: u8 = 16;

/// `,"\u001f"`: a comma, then the separator item as `JSON.stringify` writes it.
pub const SEPARATOR: &[u8] = b",\"\\u001f\"";

/// Input buffers above this size are let go after use (a rare huge append
/// does not keep its memory).
const KEEP_INPUT: usize = 4 << 20;

thread_local! {
    /// The text of the next [`encode_drafts`], written by the glue through
    /// the view [`drafts_input`] answers. Only ever grows, up to [`KEEP_INPUT`].
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A view of the first `len` bytes of this module's buffer for the next
/// [`encode_drafts`]'s text (UTF-8); what was written there before is kept
/// when it grows. The view is valid until the next call into this module
/// (which may grow the memory and detach it): write into it at once.
#[wasm_bindgen(js_name = draftsInput)]
pub fn drafts_input(len: usize) -> Uint8Array {
    INPUT.with(|input| {
        let mut input = input.borrow_mut();
        if input.len() < len {
            input.resize(len, 0);
        }
        // SAFETY: the view is over memory the buffer owns; the glue writes
        // into it before calling anything else in this module, so it is not
        // used after the buffer moves or the memory grows.
        unsafe { Uint8Array::view(&input[..len]) }
    })
}

/// The frame (one append) of the drafts in the first `text_len` bytes
/// written through [`drafts_input`]: record `i` of kind `kinds[i]` is
/// numbered `first + i` and, unless [`WHOLE`], stamped `ats[i]`
/// (milliseconds since the Unix epoch); then the watermarks `names[i] →
/// positions[i]`. With `checksum` false the frame's checksum field is left
/// 0 for the caller to fill (the CRC-32 of the bytes from `frameHeadLen` on,
/// u32 LE at `frameSumAt`: see `eventLogConstants`), which Node.js's
/// `zlib.crc32` does several times faster than this module on a large frame.
///
/// # Errors
/// A source name over 65,535 bytes or a frame over 4 GiB (the framing's
/// own messages); a text that does not hold the items `kinds` describe
/// (the glue's bug, said as such); `ats` or `names` and `positions` of the
/// wrong length.
#[wasm_bindgen(js_name = encodeDrafts)]
pub fn encode_drafts(
    text_len: usize,
    kinds: &[u8],
    ats: &[f64],
    first: f64,
    names: Vec<String>,
    positions: &[f64],
    checksum: bool,
) -> Result<Uint8Array, JsError> {
    if names.len() != positions.len() {
        return Err(JsError::new("watermark names and positions differ in count"));
    }
    INPUT.with(|input| {
        let mut input = input.borrow_mut();
        let text = input.get(..text_len).ok_or_else(|| JsError::new("draft text longer than its buffer"))?;
        let marks = names.iter().map(String::as_str).zip(positions.iter().map(|p| super::u64_of(*p)));
        let mut out = Vec::with_capacity(text.len() + 80 * kinds.len() + 64);
        let encoded = encode(text, kinds, ats, super::u64_of(first), marks, checksum, &mut out);
        if input.capacity() > KEEP_INPUT {
            *input = Vec::new();
        }
        encoded.map_err(|e| match e {
            Error::Encode(e) => super::encode_error(&e),
            Error::Text(what) => JsError::new(&format!("the drafts' JSON text does not hold what their kinds say ({what})")),
        })?;
        // Copied out as it is: a returned Vec would first be shrunk to fit
        // (a second copy of the frame).
        Ok(Uint8Array::from(&out[..]))
    })
}

/// Why [`encode`] failed.
#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    /// The framing refused a record.
    Encode(EncodeError),
    /// The text is not what the kinds describe.
    Text(&'static str),
}

/// Appends to `out` the frame of the records of `text` (see the module
/// docs), numbered from `first`, and the watermarks `marks`; checksummed
/// unless `checksum` is false ([`BatchEncoder::finish_unsummed`]).
///
/// # Errors
/// See [`Error`]; `out` may then hold part of a frame.
pub fn encode<'m>(
    text: &[u8],
    kinds: &[u8],
    ats: &[f64],
    first: u64,
    marks: impl IntoIterator<Item = (&'m str, u64)>,
    checksum: bool,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    if ats.len() != kinds.len() {
        return Err(Error::Text("stamps and kinds differ in count"));
    }
    let expected: usize = kinds.iter().map(|k| separators_of(*k)).sum();
    let mut seps = candidates(text, expected);
    if seps.len() != expected {
        seps = top_level_separators(text)?;
        if seps.len() != expected {
            return Err(Error::Text("separator count"));
        }
    }
    let mut items = Items { text, seps: seps.into_iter(), at: 1 };
    if text.first() != Some(&b'[') || (kinds.is_empty() && text != b"[]") {
        return Err(Error::Text("not an array of the items"));
    }
    let mut batch = BatchEncoder::begin(out);
    let mut digits = [0u8; 20];
    let (mut source, mut kind_type): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    for (i, (kind, at)) in kinds.iter().zip(ats).enumerate() {
        let seq = first + i as u64;
        if kind & WHOLE != 0 {
            let record = items.separated()?;
            batch.record(seq, |b| {
                b.extend_from_slice(record);
                Ok::<(), Error>(())
            })?;
            continue;
        }
        if kind & SAME_SOURCE == 0 {
            source = Some(items.string()?);
        }
        if kind & SAME_TYPE == 0 {
            kind_type = Some(items.string()?);
        }
        let (Some(source), Some(kind_type)) = (source, kind_type) else {
            return Err(Error::Text("a draft without a source or type before it"));
        };
        let identity = if kind & IDENTITY != 0 { Some(items.separated()?) } else { None };
        let body = if kind & BODY != 0 { Some(items.separated()?) } else { None };
        let stamp = decimal(*at, &mut digits);
        batch.record(seq, |b| {
            b.extend_from_slice(b"{\"source\":");
            b.extend_from_slice(source);
            b.extend_from_slice(b",\"at\":");
            b.extend_from_slice(stamp);
            b.extend_from_slice(b",\"type\":");
            b.extend_from_slice(kind_type);
            if let Some(identity) = identity {
                b.extend_from_slice(b",\"identity\":");
                b.extend_from_slice(identity);
            }
            if let Some(body) = body {
                b.extend_from_slice(b",\"body\":");
                b.extend_from_slice(body);
            }
            b.push(b'}');
            Ok::<(), Error>(())
        })?;
    }
    if !kinds.is_empty() && (items.at != text.len() || items.seps.next().is_some()) {
        return Err(Error::Text("items left over"));
    }
    if checksum {
        batch.finish(marks)?;
    } else {
        batch.finish_unsummed(marks)?;
    }
    Ok(())
}

/// The items of the text, read in order from `at` (past the `,` or `]`
/// after the item before).
struct Items<'t> {
    text: &'t [u8],
    seps: std::vec::IntoIter<usize>,
    at: usize,
}

impl<'t> Items<'t> {
    /// A string item (a source or type, quotes included).
    fn string(&mut self) -> Result<&'t [u8], Error> {
        let end = string_end(self.text, self.at).ok_or(Error::Text("a source or type that is not a string"))?;
        let item = &self.text[self.at..end];
        self.at = after_item(self.text, end)?;
        Ok(item)
    }

    /// The item that the next separator ends, and the separator.
    fn separated(&mut self) -> Result<&'t [u8], Error> {
        let end = self.seps.next().ok_or(Error::Text("separator missing"))?;
        let item = self.text.get(self.at..end).ok_or(Error::Text("separator out of order"))?;
        self.at = after_item(self.text, end + SEPARATOR.len())?;
        Ok(item)
    }
}

impl From<EncodeError> for Error {
    fn from(e: EncodeError) -> Self {
        Error::Encode(e)
    }
}

fn separators_of(kind: u8) -> usize {
    if kind & WHOLE != 0 {
        1
    } else {
        usize::from(kind & IDENTITY != 0) + usize::from(kind & BODY != 0)
    }
}

/// The position after the `,` or `]` that follows an item ending at `end`
/// (the text's length after the closing `]`).
fn after_item(text: &[u8], end: usize) -> Result<usize, Error> {
    match text.get(end) {
        Some(b',') => Ok(end + 1),
        Some(b']') if end + 1 == text.len() => Ok(end + 1),
        _ => Err(Error::Text("an item not followed by a comma or the end")),
    }
}

/// Whether a separator item starts at `at` (its comma), followed by a comma
/// or the array's end.
fn separator_at(text: &[u8], at: usize) -> bool {
    text.get(at..at + SEPARATOR.len()) == Some(SEPARATOR) && matches!(text.get(at + SEPARATOR.len()), Some(b',' | b']'))
}

/// The positions of every `,"\u001f"` item, found from the backslashes
/// alone; stops looking once more than `expected` turned up. A quote
/// inside a string is escaped, so `,"` before the backslash opens a string
/// item: each position is the separator item of some array, maybe nested.
fn candidates(text: &[u8], expected: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(expected);
    let mut from = 0;
    while let Some(at) = find_backslash(text, from) {
        // The backslash is at the separator's offset 2: `,` `"` `\`.
        if at >= 2 && separator_at(text, at - 2) {
            out.push(at - 2);
            if out.len() > expected {
                break;
            }
            from = at + SEPARATOR.len() - 2;
        } else {
            // An escape: the next character is its own, never a backslash
            // that starts another.
            from = at + 2;
        }
    }
    out
}

/// The first backslash at or after `from`, eight bytes at a time.
fn find_backslash(text: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const WANTED: u64 = ONES * b'\\' as u64;
    let mut at = from;
    while let Some(chunk) = text.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ WANTED;
        // A zero byte in x: a backslash in the chunk (the classic test; it
        // may flag a byte after a true zero, never miss the first one).
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            break;
        }
        at += 8;
    }
    text.get(at..)?.iter().position(|b| *b == b'\\').map(|i| at + i)
}

/// The positions of the separator items of the top-level array, reading
/// the text structurally (strings skipped, nesting counted).
fn top_level_separators(text: &[u8]) -> Result<Vec<usize>, Error> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(b) = text.get(at) {
        match b {
            b'"' => {
                at = string_end(text, at).ok_or(Error::Text("a string not closed"))?;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 && separator_at(text, at) => out.push(at),
            _ => {}
        }
        at += 1;
    }
    Ok(out)
}

/// The position after the closing quote of the JSON string that opens at
/// `at`; `None` when there is no string there or it is not closed.
fn string_end(text: &[u8], at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match text.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// `n`, an integer from 0 to 2^53 (the glue checked), in decimal as
/// JavaScript writes it. One 64-bit division: the rest is 32-bit
/// arithmetic, which wasm engines do without a divide instruction (a u64
/// divided by 10, digit by digit, was most of a record's cost).
fn decimal(n: f64, digits: &mut [u8; 20]) -> &[u8] {
    const LOW: u64 = 100_000_000;
    let n = super::u64_of(n);
    let mut at = digits.len();
    // Below 2^53: `high` < 10^8 too, so two u32 halves of eight digits.
    let (high, mut low) = ((n / LOW) as u32, (n % LOW) as u32);
    let mut put = |digit: u32, at: &mut usize| {
        *at -= 1;
        digits[*at] = b'0' + digit as u8;
    };
    if high == 0 {
        loop {
            put(low % 10, &mut at);
            low /= 10;
            if low == 0 {
                break;
            }
        }
    } else {
        let mut high = high;
        for _ in 0..8 {
            put(low % 10, &mut at);
            low /= 10;
        }
        while high > 0 {
            put(high % 10, &mut at);
            high /= 10;
        }
    }
    &digits[at..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasehold_core::pump::frame::Frames;

    /// The payloads of the one frame `encode` writes for `text`.
    fn payloads(text: &str, kinds: &[u8], ats: &[f64]) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        encode(text.as_bytes(), kinds, ats, 5, [("jobs", 9u64)], true, &mut out)?;
        let mut log = leasehold_core::pump::frame::encode_header(1).to_vec();
        log.extend_from_slice(&out);
        let (_, batch) = Frames::new(&log).next().expect("one frame").expect("a whole frame");
        assert_eq!(batch.marks().collect::<Vec<_>>(), [("jobs", 9)]);
        Ok(batch.records().map(|r| String::from_utf8(r.payload.to_vec()).unwrap()).collect())
    }

    const SEP: &str = r#""\u001f""#;

    #[test]
    fn records_are_built_from_the_items_in_the_order_of_the_record() {
        let text = format!(r#"["a","x",{{"k":1}},{SEP},[1,2],{SEP},"b","y","z",{SEP}]"#);
        let got = payloads(&text, &[IDENTITY | BODY, 0, BODY | SAME_SOURCE | SAME_TYPE], &[7.0, 100_000_000.0, 9_007_199_254_740_991.0])
            .expect("encoded");
        assert_eq!(
            got,
            [
                r#"{"source":"a","at":7,"type":"x","identity":{"k":1},"body":[1,2]}"#,
                r#"{"source":"b","at":100000000,"type":"y"}"#,
                r#"{"source":"b","at":9007199254740991,"type":"y","body":"z"}"#,
            ]
        );
    }

    #[test]
    fn a_separator_nested_in_a_value_is_not_taken_for_the_array_s_own() {
        let text = format!(r#"["a","x",[{SEP},{SEP}],{SEP},{{"source":"b","at":1,"type":"\""}},{SEP}]"#);
        let got = payloads(&text, &[BODY, WHOLE], &[3.0, 0.0]).expect("encoded");
        assert_eq!(got, [format!(r#"{{"source":"a","at":3,"type":"x","body":[{SEP},{SEP}]}}"#), r#"{"source":"b","at":1,"type":"\""}"#.to_string()]);
    }

    #[test]
    fn an_empty_append_has_no_records_and_keeps_its_watermarks() {
        assert_eq!(payloads("[]", &[], &[]).expect("encoded"), Vec::<String>::new());
    }

    #[test]
    fn a_text_unlike_its_kinds_is_refused() {
        assert!(matches!(payloads(r#"["a","x"]"#, &[BODY], &[0.0]), Err(Error::Text(_))));
        assert!(matches!(payloads(r#"["a","x","b"]"#, &[0], &[0.0]), Err(Error::Text(_))));
        assert!(matches!(payloads("[]", &[SAME_SOURCE], &[0.0]), Err(Error::Text(_))));
        assert!(matches!(payloads(r#"["a"]"#, &[0, 0], &[0.0]), Err(Error::Text(_))));
    }

    #[test]
    fn a_frame_left_for_the_caller_to_checksum_differs_only_in_its_checksum() {
        let text = format!(r#"["a","x",{{"k":1}},{SEP}]"#);
        let (mut summed, mut unsummed) = (Vec::new(), Vec::new());
        encode(text.as_bytes(), &[IDENTITY], &[7.0], 5, [("jobs", 9u64)], true, &mut summed).expect("encoded");
        encode(text.as_bytes(), &[IDENTITY], &[7.0], 5, [("jobs", 9u64)], false, &mut unsummed).expect("encoded");
        use leasehold_core::pump::frame::{FRAME_HEAD_LEN, FRAME_SUM_AT};
        assert_eq!(&unsummed[FRAME_SUM_AT..FRAME_HEAD_LEN], &[0, 0, 0, 0]);
        unsummed[FRAME_SUM_AT..FRAME_HEAD_LEN].copy_from_slice(&summed[FRAME_SUM_AT..FRAME_HEAD_LEN]);
        assert_eq!(unsummed, summed);
    }

    #[test]
    fn decimal_writes_integers_as_javascript_does() {
        let mut digits = [0u8; 20];
        for (n, text) in [(0.0, "0"), (-0.0, "0"), (9.0, "9"), (99_999_999.0, "99999999"), (100_000_000.0, "100000000"), (1_700_000_000_007.0, "1700000000007")] {
            assert_eq!(decimal(n, &mut digits), text.as_bytes());
        }
    }
}
