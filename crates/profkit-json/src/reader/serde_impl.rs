//! The reader as serde's `Deserializer`, with its sequence and map access.

use std::io::Read;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::error::Result;
use crate::number::{INDEX, INT};

use super::*;

impl<R: Read> Reader<R> {
    // ----- containers -----

    pub(super) fn array<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        self.enter(true)?;
        self.pos += 1;
        let value = visitor
            .visit_seq(Seq { de: self, count: 0 })
            .map_err(|e| self.locate_item(e))?;
        match self.skip_ws()? {
            Some(b']') => self.pos += 1,
            Some(_) => return Err(self.syntax("expected `,` or `]`")),
            None if self.open_end() => {}
            None => return Err(self.eof()),
        }
        self.leave();
        Ok(value)
    }

    pub(super) fn object<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        self.enter(false)?;
        self.pos += 1;
        let value = visitor
            .visit_map(Map {
                de: self,
                first: true,
            })
            .map_err(|e| self.locate_item(e))?;
        match self.skip_ws()? {
            Some(b'}') => self.pos += 1,
            Some(_) => return Err(self.syntax("expected `,` or `}`")),
            None => return Err(self.eof()),
        }
        self.leave();
        Ok(value)
    }
}

impl<'de, R: Read> de::Deserializer<'de> for &mut Reader<R> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let Some(b) = self.skip_ws()? else {
            return Err(self.eof());
        };
        let start = self.mark();
        let result = match b {
            b'0'..=b'9' | b'-' => self.number(visitor),
            b'[' => self.array(visitor),
            b'{' => self.object(visitor),
            b'"' => {
                self.pos += 1;
                let span = self.string()?;
                match std::str::from_utf8(self.span_bytes(span)) {
                    Ok(s) => visitor.visit_str(s),
                    Err(_) if self.replace_invalid => {
                        let text = String::from_utf8_lossy(self.span_bytes(span)).into_owned();
                        if !self.scratch_replaced {
                            self.note_replaced();
                        }
                        visitor.visit_string(text)
                    }
                    Err(_) => Err(self.syntax("invalid UTF-8 in a string")),
                }
            }
            b't' => self
                .literal(b"true")
                .and_then(|()| visitor.visit_bool(true)),
            b'f' => self
                .literal(b"false")
                .and_then(|()| visitor.visit_bool(false)),
            b'n' => self.literal(b"null").and_then(|()| visitor.visit_unit()),
            _ => return Err(self.syntax("expected a JSON value")),
        };
        result.map_err(|e| self.locate(e, start))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.skip_ws()? == Some(b'n') {
            let start = self.mark();
            self.literal(b"null")?;
            visitor.visit_none().map_err(|e| self.locate(e, start))
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let (max, what) = match name {
            U64_ARRAY_TOKEN => (u64::MAX, INT),
            U32_ARRAY_TOKEN => (u64::from(u32::MAX), INDEX),
            RAW_NUMBER_TOKEN => return self.raw_number(visitor),
            RAW_HOOK_TOKEN => {
                return if self.offer_to_hook()? {
                    visitor.visit_unit()
                } else {
                    visitor.visit_newtype_struct(self)
                };
            }
            _ => return visitor.visit_newtype_struct(self),
        };
        if self.skip_ws()? != Some(b'[') {
            // Not an array: the visitor's ordinary path reports what it is.
            return visitor.visit_newtype_struct(self);
        }
        let start = self.mark();
        self.int_array(max, what)?;
        let nums = std::mem::take(&mut self.nums);
        let result = visitor.visit_bytes(bytemuck::cast_slice(&nums));
        self.nums = nums;
        result.map_err(|e| self.locate(e, start))
    }

    /// A string is handed over as its bytes (escapes undone), not checked for UTF-8, as
    /// serde_json does: a visitor that keeps strings it has seen can look them up by their bytes
    /// and check only the new ones. Any other value is read as by `deserialize_any`.
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.skip_ws()? != Some(b'"') {
            return de::Deserializer::deserialize_any(self, visitor);
        }
        let start = self.mark();
        self.pos += 1;
        let span = self.string()?;
        let result = visitor.visit_bytes(self.span_bytes(span));
        result.map_err(|e| self.locate(e, start))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

pub(super) struct Seq<'a, R> {
    pub(super) de: &'a mut Reader<R>,
    pub(super) count: usize,
}

impl<'de, R: Read> SeqAccess<'de> for Seq<'_, R> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let de = &mut *self.de;
        let b = match de.skip_ws()? {
            Some(b) => b,
            None if de.open_end() => return Ok(None),
            None => return Err(de.eof()),
        };
        if b == b']' {
            if let Some(frame) = de.top() {
                frame.active = false;
            }
            return Ok(None);
        }
        if self.count > 0 {
            if b != b',' {
                return Err(de.syntax("expected `,` or `]`"));
            }
            de.pos += 1;
            match de.skip_ws()? {
                Some(b']') => return Err(de.syntax("trailing comma")),
                None if de.open_end() => return Ok(None),
                None => return Err(de.eof()),
                Some(_) => {}
            }
        }
        let index = self.count;
        self.count += 1;
        let start = de.mark();
        if let Some(frame) = de.top() {
            frame.index = index;
            frame.active = true;
            frame.item = start;
        }
        seed.deserialize(&mut *de)
            .map(Some)
            .map_err(|e| de.locate(e, start))
    }
}

pub(super) struct Map<'a, R> {
    pub(super) de: &'a mut Reader<R>,
    pub(super) first: bool,
}

impl<'de, R: Read> MapAccess<'de> for Map<'_, R> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let de = &mut *self.de;
        let mut b = match de.skip_ws()? {
            Some(b) => b,
            None => return Err(de.eof()),
        };
        if b == b'}' {
            if let Some(frame) = de.top() {
                frame.active = false;
            }
            return Ok(None);
        }
        if !self.first {
            if b != b',' {
                return Err(de.syntax("expected `,` or `}`"));
            }
            de.pos += 1;
            b = match de.skip_ws()? {
                Some(b'}') => return Err(de.syntax("trailing comma")),
                Some(b) => b,
                None => return Err(de.eof()),
            };
        }
        self.first = false;
        if b != b'"' {
            return Err(de.syntax("expected a string key"));
        }
        let start = de.mark();
        de.pos += 1;
        let span = de.string()?;
        // The key stays where it is (in the buffer, or copied from the scratch space, which the
        // value will reuse); keys are nearly always ASCII, checked a word at a time.
        let bytes = de.span_bytes(span);
        if !bytes.is_ascii() && std::str::from_utf8(bytes).is_err() {
            return Err(de.syntax("invalid UTF-8 in a key"));
        }
        let Reader {
            scratch,
            frames,
            depth,
            ..
        } = &mut *de;
        if let Some(frame) = depth.checked_sub(1).and_then(|i| frames.get_mut(i)) {
            frame.key_at = match span {
                Span::Buffer(a, z) => KeyAt::Buffer(a, z),
                Span::Scratch => {
                    frame.key.clear();
                    frame.key.extend_from_slice(scratch);
                    KeyAt::Owned
                }
            };
            frame.active = true;
            frame.item = start;
        }
        match de.skip_ws()? {
            Some(b':') => de.pos += 1,
            Some(_) => return Err(de.syntax("expected `:`")),
            None => return Err(de.eof()),
        }
        let key = de
            .depth
            .checked_sub(1)
            .and_then(|i| de.frames.get(i))
            .map(|f| de.key_bytes(f))
            .unwrap_or_default();
        let result = seed.deserialize(Key(key)).map(Some);
        result.map_err(|e| de.locate(e, start))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let de = &mut *self.de;
        de.skip_ws()?;
        let start = de.mark();
        seed.deserialize(&mut *de).map_err(|e| de.locate(e, start))
    }
}

/// A key (valid UTF-8), handed to the key's seed as a string, or as its bytes to a seed that
/// asks for an identifier or bytes (serde's derived field visitors match bytes as they match
/// strings), which spares the visitor a second UTF-8 check.
pub(super) struct Key<'a>(&'a [u8]);

impl<'de> de::Deserializer<'de> for Key<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match std::str::from_utf8(self.0) {
            Ok(key) => visitor.visit_str(key),
            Err(_) => Err(de::Error::custom("invalid UTF-8 in a key")),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_bytes(self.0)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_bytes(self.0)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum
    }
}
