//! A `serde` deserializer over plain JS data (what `JSON.parse` gives), for
//! reading a saved trace ring with the core's own `Deserialize` impls.
//!
//! Why not serde-wasm-bindgen's (which writes the spans out): serde's default
//! error messages print the value found through `Unexpected`'s `Display`, a
//! float printer and a string escaper that cost the trace module about 9 kB
//! gzipped, a fifth of it. This reader names what it found by kind ("a number
//! with a fraction", "a string") instead, and says where: every error carries
//! its path (`spans[3].items[1].outcome`).
//!
//! It reads only what the target type asks for: a struct's named fields, an
//! array's elements. Other properties are never visited. Property reads are
//! `catch` imports, so even a getter that throws is an error, not an exception
//! unwinding through wasm frames (the trace module hands it a copy from
//! `JSON.parse`, which has none).

use core::fmt;

use js_sys::{Array, Reflect};
use serde::de::value::{StrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Error as _, IntoDeserializer, Unexpected, Visitor};
use wasm_bindgen::{JsCast, JsValue};

/// Why a value could not be read: where, and what was wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The path from the root: `.spans[3].items[1].outcome`, empty for the
    /// root itself.
    pub path: String,
    /// What was wrong there.
    pub message: String,
}

impl Error {
    /// The same error, one level further from the root.
    fn within(mut self, segment: fmt::Arguments<'_>) -> Self {
        self.path.insert_str(0, &segment.to_string());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for Error {}

/// What an `Unexpected` is, without its value (so no float is printed).
fn kind(unexpected: &Unexpected<'_>) -> &'static str {
    match unexpected {
        Unexpected::Bool(_) => "a boolean",
        Unexpected::Unsigned(_) | Unexpected::Signed(_) => "an integer",
        Unexpected::Float(_) => "a number with a fraction",
        Unexpected::Char(_) | Unexpected::Str(_) => "a string",
        Unexpected::Unit | Unexpected::Option => "null",
        Unexpected::Seq => "an array",
        Unexpected::Map => "an object",
        _ => "another kind of value",
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error { path: String::new(), message: message.to_string() }
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Error::custom(format_args!("expected {expected}, got {}", kind(&unexpected)))
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        match unexpected {
            Unexpected::Unsigned(n) => Error::custom(format_args!("expected {expected}, got {n}")),
            Unexpected::Signed(n) => Error::custom(format_args!("expected {expected}, got {n}")),
            other => Error::custom(format_args!("expected {expected}, got {}", kind(&other))),
        }
    }
}

/// Reads a `T` from `value`.
///
/// # Errors
/// [`Error`] with the path and what was wrong there: a missing field, a value
/// of the wrong kind, an unknown variant, a property read that threw.
pub fn from_value<T: DeserializeOwned>(value: JsValue) -> Result<T, Error> {
    T::deserialize(Value(value))
}

fn get(target: &JsValue, key: &JsValue) -> Result<JsValue, Error> {
    Reflect::get(target, key).map_err(|_| Error::custom("reading it threw"))
}

/// One JS value being read.
struct Value(JsValue);

impl<'de> de::Deserializer<'de> for Value {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let value = self.0;
        if let Some(text) = value.as_string() {
            return visitor.visit_string(text);
        }
        if let Some(n) = value.as_f64() {
            // Whole numbers are integers (past 2^53 they were approximate
            // already, and saturate); anything else is a float.
            return if n.fract() != 0.0 || !n.is_finite() {
                visitor.visit_f64(n)
            } else if n >= 0.0 {
                visitor.visit_u64(n as u64)
            } else {
                visitor.visit_i64(n as i64)
            };
        }
        if let Some(b) = value.as_bool() {
            return visitor.visit_bool(b);
        }
        if value.is_null() || value.is_undefined() {
            return visitor.visit_unit();
        }
        if Array::is_array(&value) {
            let array: Array = value.unchecked_into();
            let len = array.length();
            return visitor.visit_seq(Elements { array, next: 0, len });
        }
        Err(de::Error::invalid_type(Unexpected::Map, &visitor))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.0.is_null() || self.0.is_undefined() { visitor.visit_none() } else { visitor.visit_some(self) }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // Unit variants only: an enum is its variant's name.
        match self.0.as_string() {
            Some(text) => visitor.visit_enum::<StringDeserializer<Error>>(text.into_deserializer()),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if !self.0.is_object() || Array::is_array(&self.0) {
            return self.deserialize_any(visitor);
        }
        visitor.visit_map(Fields { object: self.0, fields, next: 0, value: None })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map identifier
    }
}

/// An array's elements, in order.
struct Elements {
    array: Array,
    next: u32,
    len: u32,
}

impl<'de> de::SeqAccess<'de> for Elements {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        if self.next >= self.len {
            return Ok(None);
        }
        let index = self.next;
        self.next += 1;
        get(&self.array, &JsValue::from(index))
            .and_then(|item| seed.deserialize(Value(item)))
            .map(Some)
            .map_err(|e| e.within(format_args!("[{index}]")))
    }

    fn size_hint(&self) -> Option<usize> {
        Some((self.len - self.next) as usize)
    }
}

/// A struct's named fields that the object has (not `undefined`): a missing
/// one is left for serde to report, or to default when it is optional.
struct Fields {
    object: JsValue,
    fields: &'static [&'static str],
    next: usize,
    value: Option<(&'static str, JsValue)>,
}

impl<'de> de::MapAccess<'de> for Fields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        while let Some(&field) = self.fields.get(self.next) {
            self.next += 1;
            let value = get(&self.object, &JsValue::from_str(field)).map_err(|e| e.within(format_args!(".{field}")))?;
            if value.is_undefined() {
                continue;
            }
            self.value = Some((field, value));
            let key: StrDeserializer<'_, Error> = field.into_deserializer();
            return seed.deserialize(key).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (field, value) = self.value.take().ok_or_else(|| Error::custom("a value asked for before its key"))?;
        seed.deserialize(Value(value)).map_err(|e| e.within(format_args!(".{field}")))
    }
}
