//! The trace ring behind `createJobTraceSink` and
//! `resumeJobTrace`, as JS sees it: [`JsTraceRing`] (`TraceRing` in JS) holds
//! the core's [`TraceRing`], records the event objects a runner hands its
//! `onEvent`, and answers spans and the saved ring as plain JS objects in
//! the core's documented shape (see [`leasehold_core::trace_ring`]).
//!
//! Spans are built, cut and (de)serialised by the core's code and its
//! `serde` impls alone, so neither this crate nor the JS glue holds any span
//! code. They go out through serde-wasm-bindgen, straight to plain JS
//! objects, and come back the same way (from a plain copy `JSON.parse`
//! makes), with serde_path_to_error saying where a saved ring is wrong. This is built as a wasm module of its own (feature
//! `trace`), so its serde code weighs only on users of the sink.
//!
//! Events are read into the core's [`Event`] by the one path the core
//! gives, [`Event::from_fields`], their fields looked up by the names the
//! core lists ([`EVENT_KINDS`]): no field name is written here.
//!
//! Why events are read here rather than flattened to numbers by the glue:
//! every field is read through a `catch` getter or `Reflect.get` (which
//! catches too), so an event that is not
//! what the runner builds (a missing field, a throwing getter, `null`) is
//! refused with a `TypeError` naming the field, and no JS exception ever
//! unwinds through a `&mut self` method (which would leave wasm-bindgen's
//! borrow flag held and the ring unusable). No panic is reachable either:
//! numbers are converted with saturating casts and capped at 2^53 − 1, so
//! every span converts back to JS numbers.

use core::fmt;

use leasehold_core::event::{Event, FieldKind, PassReport, Value, EVENT_KINDS};
use leasehold_core::trace_ring::{DEFAULT_TRACE_CAPACITY, SavedTrace, TRACE_FORMAT_VERSION, TraceRing, TraceRingError};
use wasm_bindgen::prelude::*;

use crate::options::{js_error, kind_of};

#[wasm_bindgen]
extern "C" {
    /// A runner event (`{ type, name, at, item?, ... }`): its `type` and
    /// `name` are read through these getters, its other fields by the names
    /// the core lists ([`EVENT_KINDS`]), and its `error` only when the ring
    /// keeps the text.
    type EventObject;

    #[wasm_bindgen(method, structural, getter = type, catch)]
    fn kind(this: &EventObject) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, structural, getter, catch)]
    fn name(this: &EventObject) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, structural, getter, catch)]
    fn error(this: &EventObject) -> Result<JsValue, JsValue>;

    /// `String(value)`: the error text of an `Error` (`"Name: message"`) or
    /// of any value JSON can not show.
    #[wasm_bindgen(js_name = String, catch)]
    fn js_string(value: &JsValue) -> Result<String, JsValue>;

    /// `JSON.parse(text)` of a JS string, without copying it through wasm.
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn json_parse(text: &JsValue) -> Result<JsValue, JsValue>;
}

/// Which export is asking: error messages start with its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// `createJobTraceSink(options)`.
    Create,
    /// `resumeJobTrace(saved, options)`.
    Resume,
    /// The sink itself, called with an event.
    Sink,
}

impl Caller {
    fn js_name(self) -> &'static str {
        match self {
            Caller::Create => "createJobTraceSink",
            Caller::Resume => "resumeJobTrace",
            Caller::Sink => "JobTraceSink",
        }
    }
}

/// A value's JS name in messages: `parent.field` (`event.at`,
/// `event.report.claimLost`), or `parent` alone (`options`, `event`), so the
/// field names can come from the core's listing without building a string
/// per field read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name {
    /// The value, or the object holding the field.
    pub parent: &'static str,
    /// The field, when the value is one.
    pub field: Option<&'static str>,
}

impl Name {
    const fn of(parent: &'static str) -> Name {
        Name { parent, field: None }
    }

    const fn field(parent: &'static str, field: &'static str) -> Name {
        Name { parent, field: Some(field) }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(field) => write!(f, "{}.{field}", self.parent),
            None => f.write_str(self.parent),
        }
    }
}

/// Why a ring could not be made or an event recorded. `Display` (after the
/// caller's name) is the message of the JS error, which names what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceError {
    /// A value of the wrong kind (`TypeError`): `what` is e.g. `options`,
    /// `capacity`, `onSpan`, `saved`, `event.at`.
    WrongKind {
        /// The value's JS name.
        what: Name,
        /// What it must be.
        expected: &'static str,
        /// What was given (`typeof`, or `null`).
        got: &'static str,
    },
    /// `capacity` is NaN or infinite (`TypeError`, as the runner's options).
    NotFinite {
        /// The value given, as `String(value)` shows it.
        got: String,
    },
    /// `capacity` is a number but not an integer in 1..=2^32 − 1 (`RangeError`).
    Capacity {
        /// The value given, as `String(value)` shows it.
        got: String,
    },
    /// A saved ring's own capacity is 0 (`RangeError`).
    SavedCapacity,
    /// A saved ring of another format version (`RangeError`).
    Version {
        /// The version found.
        found: u32,
    },
    /// The saved ring is not the documented shape (`TypeError`): `message`
    /// says what is wrong and where.
    Malformed {
        /// What is wrong, and where.
        message: String,
    },
    /// An event with a `type` the runner never emits (`TypeError`).
    UnknownEvent {
        /// The `type` given.
        found: String,
    },
    /// Reading a value threw (a getter, `toJSON`, a proxy trap); `message`
    /// is what it threw (`TypeError`).
    Unreadable {
        /// The value's JS name.
        what: Name,
        /// What reading it threw.
        message: String,
    },
}

impl TraceError {
    /// Whether JS throws a `TypeError` (wrong kind or shape) rather than a
    /// `RangeError` (a number out of range, a version not understood).
    pub fn is_type_error(&self) -> bool {
        !matches!(self, TraceError::Capacity { .. } | TraceError::SavedCapacity | TraceError::Version { .. })
    }

    /// The JS error to throw: `"<caller>: <self>"` as a `TypeError` or
    /// `RangeError`.
    pub fn to_js(&self, caller: Caller) -> JsValue {
        js_error(&format!("{}: {self}", caller.js_name()), self.is_type_error())
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::WrongKind { what, expected, got } => write!(f, "{what} must be {expected}, got {got}"),
            TraceError::NotFinite { got } => write!(f, "capacity must be a finite number, got {got}"),
            TraceError::Capacity { got } => {
                write!(f, "capacity must be an integer from 1 to {}, got {got}", u32::MAX)
            }
            TraceError::SavedCapacity => write!(f, "saved.capacity is 0: {}", TraceRingError::ZeroCapacity),
            TraceError::Version { found } => {
                write!(f, "saved.version: {}", TraceRingError::UnknownVersion { found: *found })
            }
            TraceError::Malformed { message } => f.write_str(message),
            TraceError::UnknownEvent { found } => write!(f, "event.type \"{found}\" is not a runner event type"),
            TraceError::Unreadable { what, message } => write!(f, "reading {what} threw: {message}"),
        }
    }
}

/// The text of a thrown JS value, for [`TraceError::Unreadable`].
fn thrown(error: &JsValue) -> String {
    js_string(error).unwrap_or_else(|_| String::from("an unprintable value"))
}

/// Reads a field through a `catch` getter (or `Reflect.get`, which
/// catches too).
fn field(what: Name, read: Result<JsValue, JsValue>) -> Result<JsValue, TraceError> {
    read.map_err(|e| TraceError::Unreadable { what, message: thrown(&e) })
}

fn number(what: Name, value: &JsValue) -> Result<f64, TraceError> {
    value.as_f64().ok_or_else(|| TraceError::WrongKind { what, expected: "a number", got: kind_of(value) })
}

/// The largest integer a JS number holds exactly, 2^53 − 1.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JS number as a whole number, saturating: fractions truncated, NaN and
/// negatives 0, capped at [`MAX_SAFE`]. (`value.min(MAX_SAFE)` first would
/// turn NaN into the cap: `f64::min` answers the other operand.)
fn u64_of(value: f64) -> u64 {
    (value as u64).min(MAX_SAFE as u64)
}


/// The text of an error payload: a string as it is, an `Error` as
/// `String(error)` (`"Error: boom"`), anything else as JSON when it has a JSON
/// form, else `String(value)`. The core cuts it to
/// [`leasehold_core::trace_ring::MAX_ERROR_TEXT`] bytes.
fn describe(error: &JsValue) -> String {
    if let Some(text) = error.as_string() {
        return text;
    }
    if error.is_object() && !error.is_instance_of::<js_sys::Error>() {
        if let Some(json) = js_sys::JSON::stringify(error).ok().and_then(|s| JsValue::from(s).as_string()) {
            return json;
        }
    }
    js_string(error).unwrap_or_else(|_| String::from("(an error that can not be shown as text)"))
}

/// Reads runner events into the core's [`Event`] through its one path,
/// [`Event::from_fields`]: the fields are read by the names the core lists
/// for the event's type ([`EVENT_KINDS`]), each as its [`FieldKind`] says.
///
/// It keeps the JS strings it uses on every event: the nine `type` strings
/// it compares against, every field name (as `Reflect.get` keys), and the
/// last runner name with its Rust copy. Comparing JS strings (`===`) costs
/// one call; copying one into wasm memory costs several, and these would be
/// copied for every event.
struct EventReader {
    /// The `type` strings, in [`EVENT_KINDS`] order.
    types: Vec<JsValue>,
    /// Each type's field names, in [`EVENT_KINDS`] order.
    fields: Vec<Vec<JsValue>>,
    /// A pass report's field names ([`PassReport::FIELDS`]).
    report_fields: Vec<JsValue>,
    /// The last runner name read, as JS and Rust strings.
    name: Option<(JsValue, String)>,
}

/// A number field, as the runner's saturating conversion reads it: fractions
/// truncated, NaN and negatives 0; capped at [`MAX_SAFE`] so it converts
/// back to a JS number exactly.
fn count(what: Name, object: &JsValue, key: &JsValue) -> Result<u64, TraceError> {
    field(what, js_sys::Reflect::get(object, key)).and_then(|v| number(what, &v)).map(u64_of)
}

impl EventReader {
    fn new() -> Self {
        let keys = |names: &mut dyn Iterator<Item = &'static str>| names.map(JsValue::from_str).collect();
        EventReader {
            types: keys(&mut EVENT_KINDS.iter().map(|k| k.type_name)),
            fields: EVENT_KINDS.iter().map(|k| keys(&mut k.fields.iter().map(|f| f.name))).collect(),
            report_fields: keys(&mut PassReport::FIELDS.into_iter()),
            name: None,
        }
    }

    /// The runner event `value` as the core's [`Event`], with the event
    /// object itself as the error payload (described only if the ring keeps
    /// its text), and its runner name.
    fn read<'a>(&mut self, value: &'a JsValue) -> Result<(&str, Event<&'a EventObject>), TraceError> {
        if !value.is_object() {
            return Err(TraceError::WrongKind { what: Name::of("event"), expected: "an object", got: kind_of(value) });
        }
        let event: &EventObject = value.unchecked_ref();
        let kind = field(Name::field("event", "type"), event.kind())?;
        let Some(index) = self.types.iter().position(|t| *t == kind) else {
            return Err(match kind.as_string() {
                Some(found) => TraceError::UnknownEvent { found },
                None => TraceError::WrongKind { what: Name::field("event", "type"), expected: "a string", got: kind_of(&kind) },
            });
        };
        let name = field(Name::field("event", "name"), event.name())?;
        if !matches!(&self.name, Some((last, _)) if *last == name) {
            let Some(text) = name.as_string() else {
                return Err(TraceError::WrongKind { what: Name::field("event", "name"), expected: "a string", got: kind_of(&name) });
            };
            self.name = Some((name, text));
        }
        let mut values: [Option<Value<&EventObject>>; 4] = [None; 4];
        for ((slot, field_of), key) in values.iter_mut().zip(EVENT_KINDS[index].fields).zip(&self.fields[index]) {
            let what = Name::field("event", field_of.name);
            *slot = match field_of.kind {
                FieldKind::Number => Some(Value::Number(count(what, value, key)?)),
                FieldKind::Flag => Some(Value::Flag(field(what, js_sys::Reflect::get(value, key))?.is_truthy())),
                FieldKind::Report => Some(Value::Report(self.read_report(&field(what, js_sys::Reflect::get(value, key))?)?)),
                // Read when the ring keeps its text (see `record`).
                FieldKind::Error => Some(Value::Error(event)),
                // Present only for a lapsed claim; absent reads 0.
                FieldKind::WhenLapsed => match field(what, js_sys::Reflect::get(value, key))? {
                    absent if absent.is_undefined() => None,
                    present => Some(Value::Number(number(what, &present).map(u64_of)?)),
                },
            };
        }
        // Every value is of its field's kind: only an item ordinal past
        // 2^32 − 1 is left for the core to refuse.
        let read = Event::from_fields(index, values).ok_or(TraceError::WrongKind {
            what: Name::field("event", "item"),
            expected: "a number from 0 to 4294967295",
            got: "a larger number",
        })?;
        Ok((self.name.as_ref().map_or("", |(_, text)| text.as_str()), read))
    }

    fn read_report(&self, value: &JsValue) -> Result<PassReport, TraceError> {
        if !value.is_object() {
            return Err(TraceError::WrongKind { what: Name::field("event", "report"), expected: "an object", got: kind_of(value) });
        }
        let mut counts = [0; 4];
        for ((count_of, name), key) in counts.iter_mut().zip(PassReport::FIELDS).zip(&self.report_fields) {
            *count_of = u32::try_from(count(Name::field("event.report", name), value, key)?).unwrap_or(u32::MAX);
        }
        Ok(PassReport::from_counts(counts))
    }
}

/// Reads the sink options (`{ capacity?, onSpan? }`, or nothing): the
/// capacity when given. `onSpan` is the glue's; only its kind is checked.
fn read_options(options: &JsValue) -> Result<Option<usize>, TraceError> {
    if options.is_undefined() || options.is_null() {
        return Ok(None);
    }
    if !options.is_object() {
        return Err(TraceError::WrongKind { what: Name::of("options"), expected: "an object", got: kind_of(options) });
    }
    let get = |key: &'static str| field(Name::of(key), js_sys::Reflect::get(options, &JsValue::from_str(key)));
    let on_span = get("onSpan")?;
    if !(on_span.is_undefined() || on_span.is_null() || on_span.is_function()) {
        return Err(TraceError::WrongKind { what: Name::of("onSpan"), expected: "a function", got: kind_of(&on_span) });
    }
    let capacity = get("capacity")?;
    if capacity.is_undefined() || capacity.is_null() {
        return Ok(None);
    }
    let got = number(Name::of("capacity"), &capacity)?;
    if !got.is_finite() {
        return Err(TraceError::NotFinite { got: js_string(&capacity).unwrap_or_default() });
    }
    if got < 1.0 || got > f64::from(u32::MAX) || got.fract() != 0.0 {
        // JS shows the number: formatting an f64 here would cost the module
        // Rust's float printer.
        return Err(TraceError::Capacity { got: js_string(&capacity).unwrap_or_default() });
    }
    // wasm32: usize is 32 bits, so every accepted value fits.
    Ok(Some(got as usize))
}

/// Just the version, read before the rest, so that a ring of another
/// version is refused for its version rather than for its shape.
#[derive(serde::Deserialize)]
#[serde(expecting = "a saved trace: an object with version, capacity, dropped and spans")]
struct Probe {
    version: u32,
}

/// Reads a saved ring (an object, or its JSON text): its version first,
/// then its shape.
///
/// An object is read as `JSON.stringify` shows it (so a sink itself, with its
/// `toJSON`, is a saved ring too) and parsed back into a plain copy first: the
/// copy has no getters, proxies or cycles, so nothing can throw while serde
/// walks it (an exception unwinding through wasm frames would leak their
/// stack), and whatever throws while copying is a `TypeError` naming `saved`.
fn read_saved(saved: &JsValue) -> Result<SavedTrace, TraceError> {
    let not_saved = || TraceError::WrongKind {
        what: Name::of("saved"),
        expected: "a saved trace (an object, or its JSON text)",
        got: kind_of(saved),
    };
    let text = if saved.is_string() {
        saved.clone()
    } else if saved.is_object() || saved.is_function() {
        let text = JsValue::from(
            js_sys::JSON::stringify(saved)
                .map_err(|e| TraceError::Unreadable { what: Name::of("saved"), message: thrown(&e) })?,
        );
        // `undefined` for a function without `toJSON`.
        if !text.is_string() {
            return Err(not_saved());
        }
        text
    } else {
        return Err(not_saved());
    };
    let saved = json_parse(&text)
        .map_err(|thrown| TraceError::Malformed { message: format!("saved is not JSON: {}", describe(&thrown)) })?;
    let probe: Probe = parse(&saved)?;
    if probe.version != TRACE_FORMAT_VERSION {
        return Err(TraceError::Version { found: probe.version });
    }
    parse(&saved)
}

/// `saved` (a plain copy from `JSON.parse`) read as `T` by
/// serde-wasm-bindgen; an error says where (`saved.spans[3].items[1].outcome`,
/// by serde_path_to_error) and what.
fn parse<T: serde::de::DeserializeOwned>(saved: &JsValue) -> Result<T, TraceError> {
    let reader = serde_wasm_bindgen::Deserializer::from(saved.clone());
    serde_path_to_error::deserialize(reader).map_err(|error| {
        let path = error.path().to_string();
        let at = if path == "." { String::new() } else { format!(".{path}") };
        // serde-wasm-bindgen's errors are JS `Error`s: their text is "Error: …".
        let text = error.into_inner().to_string();
        let what = text.strip_prefix("Error: ").unwrap_or(&text);
        TraceError::Malformed { message: format!("saved{at}: {}", in_js_terms(what)) }
    })
}

/// A serde message in the words of a JS user: Rust's type names become what
/// a saved value may be, `unit value` is the `null` JSON gave (`NaN` and
/// `Infinity` stringify to `null`), and a failed property read says that an
/// object was expected.
fn in_js_terms(message: &str) -> String {
    if message.contains("Reflect.get called on non-object") {
        return "expected an object or an array here, got null or a primitive".to_owned();
    }
    let mut text = message.replace("unit value", "null (NaN and Infinity are saved as null)");
    for (rust, js) in [
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("floating point", "the number"),
    ] {
        text = text.replace(rust, js);
    }
    text
}

/// `value` as a plain JS object: `None` as `null` (the saved shape's), no
/// `Map`s. Values are capped integers and strings, so it can not fail; if
/// it did, the error is what JS gets.
fn to_js(value: &impl serde::Serialize) -> Result<JsValue, JsValue> {
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true);
    value.serialize(&serializer).map_err(JsValue::from)
}

/// One trace ring (`TraceRing` in JS), behind one `createJobTraceSink` or
/// `resumeJobTrace` sink.
#[wasm_bindgen(js_name = TraceRing)]
pub struct JsTraceRing {
    ring: TraceRing,
    reader: EventReader,
}

#[wasm_bindgen(js_class = TraceRing)]
impl JsTraceRing {
    /// `TraceRing.create(options)`: an empty ring of `options.capacity` spans
    /// (default [`DEFAULT_TRACE_CAPACITY`], 100).
    ///
    /// # Errors
    /// `createJobTraceSink:`-prefixed: a `TypeError` when `options` is not an
    /// object or nothing, `onSpan` not a function, `capacity` not a finite
    /// number; a `RangeError` when `capacity` is not an integer in
    /// 1..=2^32 − 1.
    pub fn create(options: &JsValue) -> Result<JsTraceRing, JsValue> {
        let capacity = read_options(options).map_err(|e| e.to_js(Caller::Create))?;
        let ring = TraceRing::new(capacity.unwrap_or(DEFAULT_TRACE_CAPACITY))
            .map_err(|_| TraceError::Capacity { got: String::from("0") }.to_js(Caller::Create))?;
        Ok(JsTraceRing { ring, reader: EventReader::new() })
    }

    /// `TraceRing.resume(saved, options)`: a ring that goes on from `saved`
    /// (what [`JsTraceRing::save`] gave, its JSON text, or anything whose
    /// `JSON.stringify` is that text, such as a sink),
    /// with `options.capacity` when given, else the saved one; when the
    /// saved spans exceed it, the oldest go and count as dropped.
    ///
    /// # Errors
    /// `resumeJobTrace:`-prefixed: the option errors of
    /// [`JsTraceRing::create`]; a `TypeError` when `saved` is neither an
    /// object nor a string, `JSON.stringify` throws on it (a getter, a
    /// cycle), the text is not JSON, or it is not the
    /// documented shape (the message gives the path, e.g.
    /// `saved.spans[0].items[1].outcome`, and what is wrong there); a
    /// `RangeError` for another format version or a saved capacity of 0.
    pub fn resume(saved: &JsValue, options: &JsValue) -> Result<JsTraceRing, JsValue> {
        let capacity = read_options(options).map_err(|e| e.to_js(Caller::Resume))?;
        let saved = read_saved(saved).map_err(|e| e.to_js(Caller::Resume))?;
        let ring = TraceRing::resume(saved, capacity).map_err(|e| {
            match e {
                // The option was checked: a zero can only be the saved one.
                TraceRingError::UnknownVersion { found } => TraceError::Version { found },
                _ => TraceError::SavedCapacity,
            }
            .to_js(Caller::Resume)
        })?;
        Ok(JsTraceRing { ring, reader: EventReader::new() })
    }

    /// Records one runner event (`{ type, name, at, ... }` as `onEvent`
    /// receives it). Answers whether it finished a span (read it with
    /// [`JsTraceRing::latest`]). Events of a runner with no pass open are
    /// ignored (a pass that claimed nothing opens none).
    ///
    /// # Errors
    /// A `JobTraceSink:`-prefixed `TypeError` naming the field when `event`
    /// is not a runner event: not an object, an unknown `type`, a field of
    /// the wrong kind, a getter that throws. The ring is left as it was.
    pub fn record(&mut self, event: &JsValue) -> Result<bool, JsValue> {
        let (name, event) = self.reader.read(event).map_err(|e| e.to_js(Caller::Sink))?;
        let finished = self.ring.record_with(name, &event, |e| match e.error() {
            Ok(error) => describe(&error),
            Err(thrown_value) => format!("(reading the error threw: {})", thrown(&thrown_value)),
        });
        Ok(finished.is_some())
    }

    /// The finished spans, oldest first: an array of plain span objects
    /// (the core's span shape).
    ///
    /// # Errors
    /// None in practice: plain integers and strings always convert.
    pub fn spans(&self) -> Result<JsValue, JsValue> {
        to_js(&self.ring.spans().collect::<Vec<_>>())
    }

    /// The newest finished span as a plain object, or `undefined` when there
    /// is none.
    ///
    /// # Errors
    /// None in practice: plain integers and strings always convert.
    pub fn latest(&self) -> Result<JsValue, JsValue> {
        self.ring.spans().next_back().map_or(Ok(JsValue::UNDEFINED), to_js)
    }

    /// The ring as saved: a plain object `{ version, capacity, dropped,
    /// spans }` (the shape documented in [`leasehold_core::trace_ring`]),
    /// ready for `JSON.stringify`. Passes still open are left out.
    ///
    /// # Errors
    /// None in practice: plain integers and strings always convert.
    pub fn save(&self) -> Result<JsValue, JsValue> {
        to_js(&self.ring.save())
    }

    /// The most spans the ring keeps.
    #[wasm_bindgen(getter)]
    pub fn capacity(&self) -> f64 {
        self.ring.capacity() as f64
    }

    /// Spans dropped because the ring was full, over the ring's life
    /// (including before it was saved).
    #[wasm_bindgen(getter)]
    pub fn dropped(&self) -> f64 {
        self.ring.dropped() as f64
    }

    /// Finished spans held.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> f64 {
        self.ring.len() as f64
    }

    /// Passes that started and have not ended.
    #[wasm_bindgen(getter, js_name = openPasses)]
    pub fn open_passes(&self) -> f64 {
        self.ring.open_passes() as f64
    }
}

impl JsTraceRing {
    /// The core ring, read-only (for tests and native callers).
    pub fn ring(&self) -> &TraceRing {
        &self.ring
    }
}
