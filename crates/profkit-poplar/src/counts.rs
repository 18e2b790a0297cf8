//! [`Counts`]: a compact array of non-negative integers, the type of every per-tile array.
//!
//! A graph profile of 16 IPUs holds thousands of arrays of 19,456 numbers, most of them small and
//! many of them mostly zeros (a compute set runs on some tiles, a memory category is used on a
//! few). Each array is stored in the narrowest width that holds its largest value (1, 2, 4 or 8
//! bytes a number), or, when under a quarter of it is non-zero, as the positions and values of its
//! non-zero numbers. Reading and writing see plain integers.

use std::cell::Cell;
use std::fmt;

use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::number::Int;

/// Values of one width.
#[derive(Clone)]
enum Dense {
    U8(Box<[u8]>),
    U16(Box<[u16]>),
    U32(Box<[u32]>),
    U64(Box<[u64]>),
}

impl Dense {
    /// The values, in the narrowest width that holds `max`.
    fn new(values: &[u64], max: u64) -> Dense {
        if max <= u64::from(u8::MAX) {
            Dense::U8(values.iter().map(|&v| v as u8).collect())
        } else if max <= u64::from(u16::MAX) {
            Dense::U16(values.iter().map(|&v| v as u16).collect())
        } else if max <= u64::from(u32::MAX) {
            Dense::U32(values.iter().map(|&v| v as u32).collect())
        } else {
            Dense::U64(values.into())
        }
    }

    fn len(&self) -> usize {
        match self {
            Dense::U8(v) => v.len(),
            Dense::U16(v) => v.len(),
            Dense::U32(v) => v.len(),
            Dense::U64(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> Option<u64> {
        match self {
            Dense::U8(v) => v.get(i).map(|&x| u64::from(x)),
            Dense::U16(v) => v.get(i).map(|&x| u64::from(x)),
            Dense::U32(v) => v.get(i).map(|&x| u64::from(x)),
            Dense::U64(v) => v.get(i).copied(),
        }
    }

    fn width(&self) -> usize {
        match self {
            Dense::U8(_) => 1,
            Dense::U16(_) => 2,
            Dense::U32(_) => 4,
            Dense::U64(_) => 8,
        }
    }
}

#[derive(Clone)]
enum Repr {
    Dense(Dense),
    /// `len` numbers, zero but at `index` (ascending), where they are `values`.
    Sparse {
        len: usize,
        index: Box<[u32]>,
        values: Dense,
    },
}

/// An array of non-negative integers, stored compactly (see the module documentation).
///
/// Build one from a `Vec<u64>`, a slice or an iterator; read it with [`get`](Counts::get),
/// [`iter`](Counts::iter) or [`to_vec`](Counts::to_vec). It serialises as a JSON array of
/// integers, and reads from one whose numbers may be written `12`, `12.0` or `1.2e1`.
#[derive(Clone)]
pub struct Counts {
    repr: Repr,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            repr: Repr::Dense(Dense::U8(Box::new([]))),
        }
    }
}

fn width_of(max: u64) -> usize {
    if max <= u64::from(u8::MAX) {
        1
    } else if max <= u64::from(u16::MAX) {
        2
    } else if max <= u64::from(u32::MAX) {
        4
    } else {
        8
    }
}

impl Counts {
    /// An array of the given values.
    pub fn from_slice(values: &[u64]) -> Counts {
        let mut max = 0u64;
        let mut nonzero = 0usize;
        for &v in values {
            max = max.max(v);
            nonzero += usize::from(v != 0);
        }
        Counts::from_parts(values, max, nonzero)
    }

    /// The array of `values`, whose largest value is `max` and of which `nonzero` are not zero.
    fn from_parts(values: &[u64], max: u64, nonzero: usize) -> Counts {
        let nonzero = nonzero.min(values.len());
        let width = width_of(max);
        let dense_bytes = values.len().saturating_mul(width);
        let sparse_bytes = nonzero.saturating_mul(4 + width);
        if values.len() <= u32::MAX as usize && sparse_bytes.saturating_mul(2) < dense_bytes {
            // Branch-free: every value is written at `k`, which moves on past the non-zero ones.
            let mut index = vec![0u32; nonzero.saturating_add(1)];
            let mut nonzero_values = vec![0u64; nonzero.saturating_add(1)];
            let mut k = 0usize;
            for (i, &v) in values.iter().enumerate() {
                let (Some(at), Some(slot)) = (index.get_mut(k), nonzero_values.get_mut(k)) else {
                    break;
                };
                *at = i as u32;
                *slot = v;
                k += usize::from(v != 0);
            }
            index.truncate(k);
            nonzero_values.truncate(k);
            return Counts {
                repr: Repr::Sparse {
                    len: values.len(),
                    index: index.into_boxed_slice(),
                    values: Dense::new(&nonzero_values, max),
                },
            };
        }
        Counts {
            repr: Repr::Dense(Dense::new(values, max)),
        }
    }

    /// How many numbers there are.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Dense(d) => d.len(),
            Repr::Sparse { len, .. } => *len,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number at `index`.
    pub fn get(&self, index: usize) -> Option<u64> {
        match &self.repr {
            Repr::Dense(d) => d.get(index),
            Repr::Sparse {
                len,
                index: at,
                values,
            } => {
                if index >= *len {
                    return None;
                }
                match at.binary_search(&(index as u32)) {
                    Ok(i) => values.get(i),
                    Err(_) => Some(0),
                }
            }
        }
    }

    /// The numbers in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            counts: self,
            next: 0,
            sparse_next: 0,
        }
    }

    /// The numbers that are not zero, with their indices, in order. Fast on mostly-zero arrays.
    pub fn nonzero(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let (dense, sparse) = match &self.repr {
            Repr::Dense(d) => (Some(d), None),
            Repr::Sparse { index, values, .. } => (None, Some((index, values))),
        };
        let dense_iter = dense.into_iter().flat_map(|d| {
            (0..d.len()).filter_map(move |i| d.get(i).filter(|&v| v != 0).map(|v| (i, v)))
        });
        let sparse_iter = sparse.into_iter().flat_map(|(index, values)| {
            index
                .iter()
                .enumerate()
                .filter_map(move |(k, &i)| values.get(k).map(|v| (i as usize, v)))
        });
        dense_iter.chain(sparse_iter)
    }

    /// The numbers as a vector.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }

    /// The sum of the numbers (saturating at `u64::MAX`).
    pub fn sum(&self) -> u64 {
        self.nonzero()
            .fold(0u64, |sum, (_, v)| sum.saturating_add(v))
    }

    /// The largest number (0 for an empty array).
    pub fn max(&self) -> u64 {
        self.nonzero().map(|(_, v)| v).max().unwrap_or(0)
    }

    /// How many numbers are not zero.
    pub fn count_nonzero(&self) -> usize {
        match &self.repr {
            Repr::Sparse { index, .. } => index.len(),
            Repr::Dense(_) => self.nonzero().count(),
        }
    }

    /// The bytes of heap this array holds.
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Dense(d) => d.len() * d.width(),
            Repr::Sparse { index, values, .. } => index.len() * 4 + values.len() * values.width(),
        }
    }
}

/// The numbers of a [`Counts`], in order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    counts: &'a Counts,
    next: usize,
    sparse_next: usize,
}

impl Iterator for Iter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let i = self.next;
        let value = match &self.counts.repr {
            Repr::Dense(d) => d.get(i)?,
            Repr::Sparse { len, index, values } => {
                if i >= *len {
                    return None;
                }
                if index
                    .get(self.sparse_next)
                    .is_some_and(|&at| at as usize == i)
                {
                    let v = values.get(self.sparse_next).unwrap_or(0);
                    self.sparse_next += 1;
                    v
                } else {
                    0
                }
            }
        };
        self.next += 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.counts.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Counts {
    type Item = u64;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl From<Vec<u64>> for Counts {
    fn from(values: Vec<u64>) -> Counts {
        Counts::from_slice(&values)
    }
}

impl From<&[u64]> for Counts {
    fn from(values: &[u64]) -> Counts {
        Counts::from_slice(values)
    }
}

impl<const N: usize> From<[u64; N]> for Counts {
    fn from(values: [u64; N]) -> Counts {
        Counts::from_slice(&values)
    }
}

impl FromIterator<u64> for Counts {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Counts {
        let values: Vec<u64> = iter.into_iter().collect();
        Counts::from_slice(&values)
    }
}

impl PartialEq for Counts {
    fn eq(&self, other: &Counts) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Counts {}

impl fmt::Debug for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for v in self.iter() {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

thread_local! {
    /// The numbers of the array being read, reused from one array to the next.
    static SCRATCH: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
}

/// Scratch capacity kept between arrays (more is freed after the array that needed it).
const SCRATCH_KEEP: usize = 1 << 20;

struct CountsVisitor;

impl<'de> Visitor<'de> for CountsVisitor {
    type Value = Counts;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of non-negative integers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Counts, A::Error> {
        let mut values = SCRATCH.take();
        values.clear();
        while let Some(Int(v)) = seq.next_element::<Int>()? {
            values.push(v);
        }
        Ok(compact(values))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Counts, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Counts, E> {
        let array = crate::number::IntArray::from_bytes(bytes)?;
        Ok(Counts::from_parts(
            &array.values,
            array.largest,
            usize::try_from(array.nonzero).unwrap_or(usize::MAX),
        ))
    }
}

/// The array of `values`, whose buffer goes back to the scratch space.
fn compact(values: Vec<u64>) -> Counts {
    let counts = Counts::from_slice(&values);
    if values.capacity() <= SCRATCH_KEEP {
        SCRATCH.set(values);
    }
    counts
}

impl<'de> Deserialize<'de> for Counts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Counts, D::Error> {
        deserializer.deserialize_newtype_struct(crate::number::COUNTS_TOKEN, CountsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(values: &[u64]) -> Counts {
        let c = Counts::from_slice(values);
        assert_eq!(c.to_vec(), values);
        assert_eq!(c.len(), values.len());
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(c.get(i), Some(v));
        }
        assert_eq!(c.get(values.len()), None);
        assert_eq!(
            c.sum(),
            values.iter().fold(0u64, |s, &v| s.saturating_add(v))
        );
        assert_eq!(c.max(), values.iter().copied().max().unwrap_or(0));
        assert_eq!(
            c.count_nonzero(),
            values.iter().filter(|&&v| v != 0).count()
        );
        c
    }

    #[test]
    fn widths_and_sparsity() {
        assert_eq!(round(&[]).heap_bytes(), 0);
        assert_eq!(round(&[1, 2, 255]).heap_bytes(), 3);
        assert_eq!(round(&[1, 2, 256]).heap_bytes(), 6);
        assert_eq!(round(&[70_000, 1]).heap_bytes(), 8);
        assert_eq!(round(&[u64::MAX, 1]).heap_bytes(), 16);
        let mut mostly_zero = vec![0u64; 1000];
        mostly_zero[10] = 600_000;
        mostly_zero[999] = 7;
        // Two entries: 2 indices and 2 values of 4 bytes.
        assert_eq!(round(&mostly_zero).heap_bytes(), 16);
        assert_eq!(
            round(&mostly_zero).nonzero().collect::<Vec<_>>(),
            [(10, 600_000), (999, 7)]
        );
    }

    #[test]
    fn equality_ignores_the_representation() {
        let mut a = vec![0u64; 100];
        a[3] = 5;
        assert_eq!(
            Counts::from_slice(&a),
            a.iter().copied().collect::<Counts>()
        );
        assert_ne!(Counts::from(vec![1, 2]), Counts::from(vec![1, 2, 0]));
        assert_eq!(format!("{:?}", Counts::from([1, 2])), "[1, 2]");
    }
}
