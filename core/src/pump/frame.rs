//! The event log's on-disk framing and the decision a host takes when it opens
//! one.
//!
//! # Layout
//!
//! ```text
//! header  := MAGIC (8 bytes, b"LHEVLOG1") · epoch (u64 LE) · crc32(MAGIC · epoch) (u32 LE)
//! frame   := len (u32 LE) · !len (u32 LE) · crc32(body) (u32 LE) · body (len bytes)
//! body    := record_count (u32 LE) · record* · mark_count (u32 LE) · mark*
//! record  := seq (u64 LE) · payload_len (u32 LE) · payload (the host's bytes)
//! mark    := name_len (u16 LE) · name (UTF-8) · position (u64 LE)
//! ```
//!
//! One append is one frame: the records and the source watermarks they
//! complete travel in the same checksummed body, so a crash leaves both or
//! neither. `!len` guards the length itself: a flipped bit in a length can not
//! pass for a frame that was cut short.
//!
//! A record with an empty payload is a **reservation**: it carries no event
//! and only holds its sequence number, so that the next open starts past it
//! ([`is_reservation`]). Readers skip it.
//!
//! # Recovery rules ([`summarize`])
//!
//! - Fewer than a frame head's bytes left, a body cut short, or a checksum
//!   mismatch in the *last* frame: a torn tail (a write a crash interrupted).
//!   The host truncates the file back to the last whole frame; the epoch stays.
//!   A tail of zero bytes whose frame head does not check is torn too (a file
//!   system may extend a file before the data lands).
//! - A checksum or length mismatch in a frame that more bytes follow, a body
//!   whose structure does not parse, sequence numbers that do not grow, or a
//!   bad header: the log is corrupt. The host starts a new log with a new epoch
//!   and derives everything again.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The first 8 bytes of every event log (format version 1).
pub(crate) const MAGIC: [u8; 8] = *b"LHEVLOG1";
/// Bytes in the header: magic, epoch, checksum.
pub const HEADER_LEN: usize = 20;
/// Bytes in a frame head: length, its complement, the body's checksum.
pub const FRAME_HEAD_LEN: usize = 12;
/// Where in a frame head the body's checksum sits (u32 LE): the CRC-32
/// (IEEE 802.3, as zlib's `crc32`) of the bytes from [`FRAME_HEAD_LEN`] to
/// the frame's end. For [`BatchEncoder::finish_unsummed`].
pub const FRAME_SUM_AT: usize = 8;

fn crc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The 20-byte header of a log whose epoch is `epoch`.
pub fn encode_header(epoch: u64) -> [u8; HEADER_LEN] {
    let mut out = [0u8; HEADER_LEN];
    out[..8].copy_from_slice(&MAGIC);
    out[8..16].copy_from_slice(&epoch.to_le_bytes());
    let sum = crc(&out[..16]);
    out[16..].copy_from_slice(&sum.to_le_bytes());
    out
}

/// Why a header was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// The file holds fewer than [`HEADER_LEN`] bytes (`len` of them).
    Short {
        /// Bytes the file holds.
        len: usize,
    },
    /// The first 8 bytes are not `b"LHEVLOG1"`: not an event log, or another version.
    Magic,
    /// The header's checksum does not match its bytes.
    Checksum,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Short { len } => write!(f, "header cut short ({len} of {HEADER_LEN} bytes)"),
            HeaderError::Magic => write!(f, "not a leasehold event log (bad magic)"),
            HeaderError::Checksum => write!(f, "header checksum mismatch"),
        }
    }
}

/// The epoch in a log's header.
///
/// # Errors
/// [`HeaderError`] when the bytes are short, carry another magic or do not
/// match their checksum.
pub fn decode_header(bytes: &[u8]) -> Result<u64, HeaderError> {
    let Some(head) = bytes.get(..HEADER_LEN) else {
        return Err(HeaderError::Short { len: bytes.len() });
    };
    if head[..8] != MAGIC {
        return Err(HeaderError::Magic);
    }
    if crc(&head[..16]).to_le_bytes() != head[16..20] {
        return Err(HeaderError::Checksum);
    }
    Ok(u64::from_le_bytes(le8(&head[8..16])))
}

fn le8(b: &[u8]) -> [u8; 8] {
    let mut out = [0u8; 8];
    out.copy_from_slice(&b[..8]);
    out
}

fn le4(b: &[u8]) -> [u8; 4] {
    let mut out = [0u8; 4];
    out.copy_from_slice(&b[..4]);
    out
}

/// Why a batch could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A payload longer than `u32::MAX` bytes.
    PayloadTooLong {
        /// The record's sequence number.
        seq: u64,
    },
    /// A source name longer than `u16::MAX` bytes.
    NameTooLong {
        /// The first bytes of the name.
        name: String,
    },
    /// A frame body longer than `u32::MAX` bytes.
    FrameTooLong,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::PayloadTooLong { seq } => write!(f, "record {seq}: payload longer than 4 GiB"),
            EncodeError::NameTooLong { name } => write!(f, "source name longer than 65535 bytes: {name}…"),
            EncodeError::FrameTooLong => write!(f, "batch longer than 4 GiB"),
        }
    }
}

/// Builds one frame (one append) in place at the end of `out`, so a host
/// serialises each payload straight into the buffer it will write.
///
/// ```
/// # use leasehold_core::pump::frame::{BatchEncoder, EncodeError};
/// let mut buf = Vec::new();
/// let mut batch = BatchEncoder::begin(&mut buf);
/// batch.record(7, |b| { b.extend_from_slice(b"{}"); Ok::<(), EncodeError>(()) }).unwrap();
/// batch.finish([("jobs", 3u64)]).unwrap();
/// ```
pub struct BatchEncoder<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    records: u32,
}

impl<'a> BatchEncoder<'a> {
    /// Starts a frame at the end of `out`.
    pub fn begin(out: &'a mut Vec<u8>) -> Self {
        let start = out.len();
        out.extend_from_slice(&[0u8; FRAME_HEAD_LEN]);
        out.extend_from_slice(&0u32.to_le_bytes()); // record count, patched in `finish`
        BatchEncoder { out, start, records: 0 }
    }

    /// Adds the record `seq` whose payload `write` appends to the buffer.
    ///
    /// # Errors
    /// `write`'s own error (the buffer is rolled back to before the record),
    /// or [`EncodeError::PayloadTooLong`] mapped through `From`.
    pub fn record<E: From<EncodeError>>(
        &mut self,
        seq: u64,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let at = self.out.len();
        self.out.extend_from_slice(&seq.to_le_bytes());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        if let Err(e) = write(self.out) {
            self.out.truncate(at);
            return Err(e);
        }
        let len = self.out.len() - at - 12;
        let Ok(len) = u32::try_from(len) else {
            self.out.truncate(at);
            return Err(EncodeError::PayloadTooLong { seq }.into());
        };
        self.out[at + 8..at + 12].copy_from_slice(&len.to_le_bytes());
        self.records += 1;
        Ok(())
    }

    /// Continues the unfinished frame that [`BatchEncoder::begin`] started
    /// at `start` of `out` and that holds `records` records, so a frame can
    /// be filled across calls (and threads) and sealed later (the pump's
    /// chunks are serialised as they are derived).
    pub fn resume(out: &'a mut Vec<u8>, start: usize, records: u32) -> Self {
        BatchEncoder { out, start, records }
    }

    /// Records added so far.
    pub fn len(&self) -> u32 {
        self.records
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Appends the watermarks and seals the frame (length, complement, checksum).
    ///
    /// # Errors
    /// [`EncodeError::NameTooLong`] or [`EncodeError::FrameTooLong`]; the
    /// buffer is rolled back to before the frame.
    pub fn finish<S: AsRef<str>>(
        self,
        marks: impl IntoIterator<Item = (S, u64)>,
    ) -> Result<(), EncodeError> {
        self.finish_summed(marks, None)
    }

    /// [`BatchEncoder::finish`] of a frame whose records [`number_ahead`]
    /// numbered and checksummed: only the watermarks are read. A `sum` that
    /// does not cover exactly the records held as they are numbered now
    /// (more were added since, or they were renumbered from another first
    /// number) is ignored and the whole body is checksummed. Changing a
    /// record's payload in place after `number_ahead` is not detected. For
    /// the pump's chunks, numbered while the chunk before is synced.
    ///
    /// # Errors
    /// As [`BatchEncoder::finish`].
    pub fn finish_summed<S: AsRef<str>>(
        self,
        marks: impl IntoIterator<Item = (S, u64)>,
        sum: Option<BodySum>,
    ) -> Result<(), EncodeError> {
        self.seal(marks, Sum::Here(sum))
    }

    /// [`BatchEncoder::finish`], but the body's checksum is left for the
    /// caller: the frame head's checksum field ([`FRAME_SUM_AT`]) holds 0
    /// until the caller writes there the CRC-32 of the frame's bytes from
    /// [`FRAME_HEAD_LEN`] on (u32 LE). For hosts whose platform has a
    /// faster CRC-32 than this crate's portable one (Node.js's
    /// `zlib.crc32` over a large frame, against this code in wasm). A frame
    /// written without it is a torn or corrupt frame to every reader.
    ///
    /// # Errors
    /// As [`BatchEncoder::finish`].
    pub fn finish_unsummed<S: AsRef<str>>(self, marks: impl IntoIterator<Item = (S, u64)>) -> Result<(), EncodeError> {
        self.seal(marks, Sum::Caller)
    }

    fn seal<S: AsRef<str>>(self, marks: impl IntoIterator<Item = (S, u64)>, sum: Sum) -> Result<(), EncodeError> {
        let BatchEncoder { out, start, records } = self;
        let body_at = start + FRAME_HEAD_LEN;
        let first_seq = out.get(body_at + 4..body_at + 12).map(|b| u64::from_le_bytes(le8(b)));
        let sum = match sum {
            Sum::Here(ahead) => Sum::Here(ahead.filter(|s| {
                s.records == records && s.len == out.len() - body_at && (records == 0 || first_seq == Some(s.first))
            })),
            Sum::Caller => Sum::Caller,
        };
        let count_at = out.len();
        out.extend_from_slice(&0u32.to_le_bytes());
        let mut count: u32 = 0;
        for (name, position) in marks {
            let name = name.as_ref();
            let Ok(len) = u16::try_from(name.len()) else {
                out.truncate(start);
                let cut = name.char_indices().nth(32).map_or(name.len(), |(i, _)| i);
                return Err(EncodeError::NameTooLong { name: String::from(&name[..cut]) });
            };
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&position.to_le_bytes());
            count += 1;
        }
        out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
        out[body_at..body_at + 4].copy_from_slice(&records.to_le_bytes());
        let Ok(len) = u32::try_from(out.len() - body_at) else {
            out.truncate(start);
            return Err(EncodeError::FrameTooLong);
        };
        let sum = match sum {
            Sum::Here(Some(ahead)) => {
                let mut rest = crc32fast::Hasher::new_with_initial(ahead.crc);
                rest.update(&out[count_at..]);
                rest.finalize()
            }
            Sum::Here(None) => crc(&out[body_at..]),
            Sum::Caller => 0,
        };
        out[start..start + 4].copy_from_slice(&len.to_le_bytes());
        out[start + 4..start + 8].copy_from_slice(&(!len).to_le_bytes());
        out[start + FRAME_SUM_AT..start + FRAME_HEAD_LEN].copy_from_slice(&sum.to_le_bytes());
        Ok(())
    }
}

/// Who checksums a frame's body when it is sealed.
enum Sum {
    /// This crate, reading only what follows the records when a
    /// [`BodySum`] taken ahead still covers them.
    Here(Option<BodySum>),
    /// The caller ([`BatchEncoder::finish_unsummed`]).
    Caller,
}

/// The checksum of an unfinished frame's body as far as its records go,
/// taken by [`number_ahead`] so that [`BatchEncoder::finish_summed`] reads
/// only the watermarks (the pump numbers a chunk while the one before it is
/// being synced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodySum {
    crc: u32,
    /// Body bytes covered: the record count and the records.
    len: usize,
    records: u32,
    /// The first record's sequence number.
    first: u64,
}

/// [`renumber`], then the checksum of the body so far (the record count and
/// the records, numbered) for [`BatchEncoder::finish_summed`]. The frame
/// must hold `records` records and nothing after them. The layout is ours.
/// Never fails; panics
/// only on a frame shorter than its record count says.
pub fn number_ahead(frame: &mut [u8], start: usize, records: u32, first: u64) -> BodySum {
    renumber(frame, start, records, first);
    let body_at = start + FRAME_HEAD_LEN;
    frame[body_at..body_at + 4].copy_from_slice(&records.to_le_bytes());
    BodySum { crc: crc(&frame[body_at..]), len: frame.len() - body_at, records, first }
}

/// Gives the records of the unfinished frame at `start` of `frame` the
/// sequence numbers `first`, `first + 1`, … in order: records can be added
/// before the append that numbers them is known. Call before
/// [`BatchEncoder::finish`] (the checksum covers the numbers). `records` is
/// the count [`BatchEncoder::len`] answered; the frame must hold that many.
/// The layout is ours.
pub fn renumber(frame: &mut [u8], start: usize, records: u32, first: u64) {
    let mut at = start + FRAME_HEAD_LEN + 4;
    for seq in first..first + u64::from(records) {
        frame[at..at + 8].copy_from_slice(&seq.to_le_bytes());
        let len = u32::from_le_bytes(le4(&frame[at + 8..at + 12])) as usize;
        at += 12 + len;
    }
}

/// Whether a record's payload marks a reservation (no event; see the
/// module docs). Readers resume by sequence number, which reservations keep
/// unique.
pub fn is_reservation(payload: &[u8]) -> bool {
    payload.is_empty()
}

/// One record inside a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Its sequence number (grows through the log; gaps are allowed).
    pub seq: u64,
    /// The host's payload bytes (JSON in the native host).
    pub payload: &'a [u8],
}

/// A frame body whose structure was checked: records, then watermarks.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    body: &'a [u8],
    records: u32,
    marks_at: usize,
}

/// A cursor with checked little-endian reads.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes(le4(b)))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_le_bytes(le8(b)))
    }
    fn record(&mut self) -> Option<RecordRef<'a>> {
        let seq = self.u64()?;
        let len = self.u32()? as usize;
        Some(RecordRef { seq, payload: self.take(len)? })
    }
    fn mark(&mut self) -> Option<(&'a str, u64)> {
        let len = self.u16()? as usize;
        let name = core::str::from_utf8(self.take(len)?).ok()?;
        Some((name, self.u64()?))
    }
}

impl<'a> Batch<'a> {
    /// Checks a body's structure once, so the iterators below need no checks.
    fn parse(body: &'a [u8]) -> Option<Batch<'a>> {
        let mut r = Reader { bytes: body, pos: 0 };
        let records = r.u32()?;
        for _ in 0..records {
            r.record()?;
        }
        let marks_at = r.pos;
        let marks = r.u32()?;
        for _ in 0..marks {
            r.mark()?;
        }
        (r.pos == body.len()).then_some(Batch { body, records, marks_at })
    }

    /// The records, in the order they were appended.
    pub fn records(&self) -> impl Iterator<Item = RecordRef<'a>> + 'a {
        let mut r = Reader { bytes: self.body, pos: 4 };
        (0..self.records).map_while(move |_| r.record())
    }

    /// The watermarks the frame records: `(source, position)`.
    pub fn marks(&self) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let mut r = Reader { bytes: self.body, pos: self.marks_at };
        let count = r.u32().unwrap_or(0);
        (0..count).map_while(move |_| r.mark())
    }
}

/// Why a log is corrupt (a new epoch starts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// The header was refused.
    Header(HeaderError),
    /// A frame's length does not match its complement at byte `offset`.
    FrameLength {
        /// Byte offset of the frame in the file.
        offset: u64,
    },
    /// A frame's body does not match its checksum, and more frames follow.
    Checksum {
        /// Byte offset of the frame in the file.
        offset: u64,
    },
    /// A frame's body checks but does not parse (another format, or a bug).
    Structure {
        /// Byte offset of the frame in the file.
        offset: u64,
    },
    /// Record `seq` does not come after the record before it.
    SeqOrder {
        /// Byte offset of the frame in the file.
        offset: u64,
        /// The offending sequence number.
        seq: u64,
    },
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Corruption::Header(e) => write!(f, "{e}"),
            Corruption::FrameLength { offset } => write!(f, "frame length mismatch at byte {offset}"),
            Corruption::Checksum { offset } => write!(f, "checksum mismatch at byte {offset} before the tail"),
            Corruption::Structure { offset } => write!(f, "malformed frame at byte {offset}"),
            Corruption::SeqOrder { offset, seq } => {
                write!(f, "sequence number {seq} out of order at byte {offset}")
            }
        }
    }
}

/// How the frames of a log end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The last frame is whole and nothing follows it.
    Clean,
    /// A write was cut short: the bytes from `valid_len` on (`torn_bytes` of
    /// them) are not a whole frame and go.
    Torn {
        /// The length of the whole frames (header included).
        valid_len: u64,
        /// Bytes after them.
        torn_bytes: u64,
    },
}

/// Walks the frames of a log's bytes (header included), yielding each whole
/// frame with its byte offset, stopping at the first corruption or the end.
pub struct Frames<'a> {
    bytes: &'a [u8],
    pos: usize,
    ending: Option<Ending>,
    failed: bool,
}

impl<'a> Frames<'a> {
    /// Starts after the header; the header itself is checked by
    /// [`decode_header`].
    pub fn new(bytes: &'a [u8]) -> Self {
        Frames { bytes, pos: HEADER_LEN.min(bytes.len()), ending: None, failed: false }
    }

    /// How the frames ended; `None` until the walk ended without corruption.
    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    fn torn(&mut self) -> Option<Result<(u64, Batch<'a>), Corruption>> {
        self.ending = Some(Ending::Torn {
            valid_len: self.pos as u64,
            torn_bytes: (self.bytes.len() - self.pos) as u64,
        });
        None
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<(u64, Batch<'a>), Corruption>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ending.is_some() || self.failed {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        let offset = self.pos as u64;
        if rest.is_empty() {
            self.ending = Some(Ending::Clean);
            return None;
        }
        if rest.len() < FRAME_HEAD_LEN {
            return self.torn();
        }
        let len = u32::from_le_bytes(le4(&rest[0..4]));
        let check = u32::from_le_bytes(le4(&rest[4..8]));
        let sum = u32::from_le_bytes(le4(&rest[8..12]));
        if check != !len {
            // A file system may extend a file before its data lands: zeros to
            // the end are a torn write, anything else is damage.
            if rest.iter().all(|b| *b == 0) {
                return self.torn();
            }
            self.failed = true;
            return Some(Err(Corruption::FrameLength { offset }));
        }
        let end = FRAME_HEAD_LEN + len as usize;
        if rest.len() < end {
            return self.torn();
        }
        let body = &rest[FRAME_HEAD_LEN..end];
        if crc(body) != sum {
            if rest.len() == end {
                return self.torn();
            }
            self.failed = true;
            return Some(Err(Corruption::Checksum { offset }));
        }
        let Some(batch) = Batch::parse(body) else {
            self.failed = true;
            return Some(Err(Corruption::Structure { offset }));
        };
        self.pos += end;
        Some(Ok((offset, batch)))
    }
}

/// What a host learns from a log's bytes at open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The header's epoch.
    pub epoch: u64,
    /// How the frames end (a torn tail is truncated by the host).
    pub ending: Ending,
    /// Bytes of whole frames, header included: where the next append goes.
    pub valid_len: u64,
    /// The highest sequence number in the log (reservations included), if it
    /// holds a record.
    pub last_seq: Option<u64>,
    /// Records in the log (reservations not counted).
    pub records: u64,
    /// The watermarks the log records (a later frame's value wins).
    pub marks: BTreeMap<String, u64>,
}

/// Reads a whole log's bytes: header, frames, watermarks.
///
/// # Errors
/// [`Corruption`] when the header is refused or a frame before the tail is
/// damaged: the host starts a new log with a new epoch.
pub fn summarize(bytes: &[u8]) -> Result<Summary, Corruption> {
    let epoch = decode_header(bytes).map_err(Corruption::Header)?;
    let mut frames = Frames::new(bytes);
    let mut last_seq: Option<u64> = None;
    let mut records = 0u64;
    let mut marks = BTreeMap::new();
    for frame in frames.by_ref() {
        let (offset, batch) = frame?;
        for record in batch.records() {
            if last_seq.is_some_and(|last| record.seq <= last) {
                return Err(Corruption::SeqOrder { offset, seq: record.seq });
            }
            last_seq = Some(record.seq);
            records += u64::from(!is_reservation(record.payload));
        }
        for (name, position) in batch.marks() {
            marks.insert(String::from(name), position);
        }
    }
    let ending = frames.ending().unwrap_or(Ending::Clean);
    let valid_len = match ending {
        Ending::Clean => bytes.len() as u64,
        Ending::Torn { valid_len, .. } => valid_len,
    };
    Ok(Summary { epoch, ending, valid_len, last_seq, records, marks })
}
