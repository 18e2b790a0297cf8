//! Integers as Poplar writes them.
//!
//! Poplar's profile values have no integer type: every count, index, cycle and byte figure is a
//! double, which may be written `12`, `12.0` or `1.2e1`. The types here read all three for an
//! integer field, and refuse a fraction, a negative number or a value too large for the field
//! with a message that says which it was (the reader adds the JSON path).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

pub(crate) use profkit_json::number::{INDEX, INT, IntVisitor, too_large};

/// The newtype name under which [`Counts`](crate::Counts) asks for an array of integers up to
/// `u64::MAX`. Other deserializers ignore the name and hand over an ordinary sequence; the
/// profkit-json reader reads the whole array in one loop and hands over, as the bytes of a
/// `[u64]`, the largest value, how many values are not zero, then the values.
pub(crate) const COUNTS_TOKEN: &str = profkit_json::U64_ARRAY_TOKEN;

/// As [`COUNTS_TOKEN`], for arrays of indices (integers below 2^32).
pub(crate) const INDICES_TOKEN: &str = profkit_json::U32_ARRAY_TOKEN;

/// An integer array as the reader hands it over (see [`COUNTS_TOKEN`]): the bytes of a
/// `[u64]` holding the largest value, how many values are not zero, then the values.
pub(crate) struct IntArray<'a> {
    pub(crate) largest: u64,
    pub(crate) nonzero: u64,
    pub(crate) values: std::borrow::Cow<'a, [u64]>,
}

impl<'a> IntArray<'a> {
    pub(crate) fn from_bytes<E: de::Error>(bytes: &'a [u8]) -> Result<IntArray<'a>, E> {
        let words: std::borrow::Cow<'a, [u64]> = match bytemuck::try_cast_slice(bytes) {
            Ok(words) => std::borrow::Cow::Borrowed(words),
            Err(_) if bytes.len() % 8 == 0 => std::borrow::Cow::Owned(
                bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect(),
            ),
            Err(_) => return Err(E::invalid_length(bytes.len(), &"a whole number of u64s")),
        };
        let (largest, nonzero) = match words.get(..2) {
            Some(&[l, n]) => (l, n),
            _ => return Err(E::invalid_length(bytes.len(), &"at least two u64s")),
        };
        let values = match words {
            std::borrow::Cow::Borrowed(w) => {
                std::borrow::Cow::Borrowed(w.get(2..).unwrap_or_default())
            }
            std::borrow::Cow::Owned(w) => {
                std::borrow::Cow::Owned(w.get(2..).unwrap_or_default().to_vec())
            }
        };
        Ok(IntArray {
            largest,
            nonzero,
            values,
        })
    }
}

/// A count: a non-negative integer that fits in `u64`, read from any of its spellings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Int(pub(crate) u64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        d.deserialize_u64(IntVisitor {
            max: u64::MAX,
            what: INT,
        })
        .map(Int)
    }
}

impl From<Int> for u64 {
    fn from(v: Int) -> u64 {
        v.0
    }
}

/// An index into one of the profile's arrays: a non-negative integer below 2^32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Index(pub(crate) u32);

impl<'de> Deserialize<'de> for Index {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Index, D::Error> {
        d.deserialize_u32(IntVisitor {
            max: u64::from(u32::MAX),
            what: INDEX,
        })
        .map(|v| Index(v as u32))
    }
}

impl From<Index> for u32 {
    fn from(v: Index) -> u32 {
        v.0
    }
}

/// An array of indices.
#[derive(Debug, Default)]
pub(crate) struct Indices(pub(crate) Vec<u32>);

impl<'de> Deserialize<'de> for Indices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Indices, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Indices;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of indices (non-negative integers below 2^32)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Indices, A::Error> {
                let mut out = Vec::new();
                while let Some(Index(i)) = seq.next_element::<Index>()? {
                    out.push(i);
                }
                out.shrink_to_fit();
                Ok(Indices(out))
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Indices, D::Error> {
                d.deserialize_seq(self)
            }
            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Indices, E> {
                IntArray::from_bytes(bytes)?
                    .values
                    .iter()
                    .map(|&v| u32::try_from(v).map_err(|_| E::custom(too_large(INDEX, v))))
                    .collect::<Result<Vec<u32>, E>>()
                    .map(Indices)
            }
        }
        d.deserialize_newtype_struct(INDICES_TOKEN, V)
    }
}

impl From<Indices> for Vec<u32> {
    fn from(v: Indices) -> Vec<u32> {
        v.0
    }
}

/// An array of arrays of indices (`computeSets.vertexTypes`).
#[derive(Debug, Default)]
pub(crate) struct IndexLists(pub(crate) Vec<Vec<u32>>);

impl<'de> Deserialize<'de> for IndexLists {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IndexLists, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IndexLists;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of arrays of indices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IndexLists, A::Error> {
                let mut out = Vec::new();
                while let Some(Indices(list)) = seq.next_element::<Indices>()? {
                    out.push(list);
                }
                Ok(IndexLists(out))
            }
        }
        d.deserialize_seq(V)
    }
}

impl From<IndexLists> for Vec<Vec<u32>> {
    fn from(v: IndexLists) -> Vec<Vec<u32>> {
        v.0
    }
}

/// An object whose values are counts (`memoryByInstruction`).
#[derive(Debug, Default)]
pub(crate) struct IntMap(pub(crate) BTreeMap<String, u64>);

impl<'de> Deserialize<'de> for IntMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IntMap, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IntMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of non-negative integers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IntMap, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.contains_key(&key) {
                        return Err(de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    let Int(v) = map.next_value()?;
                    out.insert(key, v);
                }
                Ok(IntMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl From<IntMap> for BTreeMap<String, u64> {
    fn from(v: IntMap) -> BTreeMap<String, u64> {
        v.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str) -> Result<u64, String> {
        crate::from_str::<Int>(text)
            .map(|i| i.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_spelling_of_an_integer() {
        assert_eq!(int("12"), Ok(12));
        assert_eq!(int("12.0"), Ok(12));
        assert_eq!(int("1.2e1"), Ok(12));
        assert_eq!(int("1.2E+1"), Ok(12));
        assert_eq!(int("-0"), Ok(0));
        assert_eq!(int("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(int("1e19"), Ok(10_000_000_000_000_000_000));
    }

    #[test]
    fn fractions_negatives_and_overflow_are_refused() {
        assert!(int("1.5").unwrap_err().contains("the fraction 1.5"));
        assert!(int("-3").unwrap_err().contains("the negative number -3"));
        assert!(int("-3.0").unwrap_err().contains("negative"));
        assert!(int("1e20").unwrap_err().contains("too large"));
        assert!(
            int("18446744073709551616")
                .unwrap_err()
                .contains("too large")
        );
        assert!(
            int("\"7\"")
                .unwrap_err()
                .contains("expected a non-negative integer")
        );
        let e = crate::from_str::<Index>("4294967296").unwrap_err();
        assert!(e.to_string().contains("below 2^32"), "{e}");
    }
}
