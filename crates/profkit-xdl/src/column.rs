//! Columns: one traced tensor each, as a dtype, a shape and little-endian C-order data.
//!
//! A column is valid when its dtype is one of the schema's eight, no dimension is negative, and its
//! data holds exactly product(shape) elements (a scalar, with an empty shape, holds one). Typed
//! access borrows the data as `&[T]` when the buffer is aligned for `T` (and the machine is
//! little-endian), and copies otherwise; it never reinterprets memory unsafely.

use std::borrow::Cow;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::proto::{Column, Type};

/// The element type of a column: the schema's `Type` enum.
pub type DType = Type;

impl Type {
    /// Every dtype, in schema order.
    pub const ALL: [DType; 8] = [
        Type::Int8,
        Type::Int16,
        Type::Int32,
        Type::Int64,
        Type::Float,
        Type::Double,
        Type::Bool,
        Type::Byte,
    ];

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Type::Int8 | Type::Bool | Type::Byte => 1,
            Type::Int16 => 2,
            Type::Int32 | Type::Float => 4,
            Type::Int64 | Type::Double => 8,
        }
    }

    /// The NumPy dtype name the original writer mapped to this type (`Byte` has no NumPy type of
    /// its own there: `np.byte` is `int8`).
    pub fn numpy_name(self) -> &'static str {
        match self {
            Type::Int8 => "int8",
            Type::Int16 => "int16",
            Type::Int32 => "int32",
            Type::Int64 => "int64",
            Type::Float => "float32",
            Type::Double => "float64",
            Type::Bool => "bool",
            Type::Byte => "uint8",
        }
    }

    /// The dtype with this wire value, or [`Error::UnknownDType`].
    pub fn from_wire(value: i32) -> Result<DType> {
        Type::try_from(value).map_err(|_| Error::UnknownDType { value })
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type a column's elements can be read as and built from: `i8`, `i16`, `i32`, `i64`,
/// `f32`, `f64`, `bool` and `u8` (for the `Byte` dtype).
pub trait Element: Copy + sealed::Sealed + 'static {
    /// The dtype holding elements of this type.
    const DTYPE: DType;

    /// Decodes `data`, whose length is a multiple of the element size, borrowing when possible.
    #[doc(hidden)]
    fn decode(data: &[u8]) -> Cow<'_, [Self]>;

    /// Appends the little-endian encoding of `values`.
    #[doc(hidden)]
    fn encode(values: &[Self], out: &mut Vec<u8>);
}

macro_rules! pod_element {
    ($t:ty, $dtype:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = $dtype;

            fn decode(data: &[u8]) -> Cow<'_, [Self]> {
                if cfg!(target_endian = "little") {
                    if let Ok(slice) = bytemuck::try_cast_slice::<u8, $t>(data) {
                        return Cow::Borrowed(slice);
                    }
                    // Misaligned: one memcpy into an aligned vector.
                    let mut out = vec![<$t>::default(); data.len() / std::mem::size_of::<$t>()];
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
                    if let Some(src) = data.get(..bytes.len()) {
                        bytes.copy_from_slice(src);
                    }
                    return Cow::Owned(out);
                }
                Cow::Owned(
                    data.chunks_exact(std::mem::size_of::<$t>())
                        .map(|c| {
                            let mut a = [0u8; std::mem::size_of::<$t>()];
                            a.copy_from_slice(c);
                            <$t>::from_le_bytes(a)
                        })
                        .collect(),
                )
            }

            fn encode(values: &[Self], out: &mut Vec<u8>) {
                if cfg!(target_endian = "little") {
                    out.extend_from_slice(bytemuck::cast_slice(values));
                } else {
                    out.reserve(std::mem::size_of_val(values));
                    for v in values {
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
    };
}

pod_element!(i8, Type::Int8);
pod_element!(i16, Type::Int16);
pod_element!(i32, Type::Int32);
pod_element!(i64, Type::Int64);
pod_element!(f32, Type::Float);
pod_element!(f64, Type::Double);
pod_element!(u8, Type::Byte);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = Type::Bool;

    /// Any non-zero byte is `true`, as NumPy reads it.
    fn decode(data: &[u8]) -> Cow<'_, [Self]> {
        Cow::Owned(data.iter().map(|&b| b != 0).collect())
    }

    fn encode(values: &[Self], out: &mut Vec<u8>) {
        out.extend(values.iter().map(|&b| u8::from(b)));
    }
}

/// The number of elements a shape describes (1 for a scalar's empty shape), or why it describes
/// none.
pub fn element_count(shape: &[i32]) -> Result<u64> {
    let mut n: u64 = 1;
    for &d in shape {
        let d = u64::try_from(d).map_err(|_| Error::BadShape {
            shape: shape.iter().map(|&x| i64::from(x)).collect(),
            reason: format!("dimension {d} is negative"),
        })?;
        n = n.checked_mul(d).ok_or_else(|| Error::BadShape {
            shape: shape.iter().map(|&x| i64::from(x)).collect(),
            reason: "the element count overflows 64 bits".into(),
        })?;
    }
    Ok(n)
}

/// Converts a shape given in `usize` to the schema's `int32` dimensions.
fn shape_i32(shape: &[usize]) -> Result<Vec<i32>> {
    shape
        .iter()
        .map(|&d| {
            i32::try_from(d).map_err(|_| Error::BadShape {
                shape: shape
                    .iter()
                    .map(|&x| i64::try_from(x).unwrap_or(i64::MAX))
                    .collect(),
                reason: format!("dimension {d} does not fit the schema's int32"),
            })
        })
        .collect()
}

impl Column {
    /// A column of the given shape holding `values` in C order.
    ///
    /// ```
    /// use profkit_xdl::{Column, DType};
    /// let c = Column::tensor(&[2, 3], &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0])?;
    /// assert_eq!((c.try_dtype()?, c.shape.as_slice(), c.data.len()), (DType::Float, &[2, 3][..], 24));
    /// assert_eq!(c.values::<f32>()?[4], 4.0);
    /// # Ok::<(), profkit_xdl::Error>(())
    /// ```
    pub fn tensor<T: Element>(shape: &[usize], values: &[T]) -> Result<Column> {
        let dims = shape_i32(shape)?;
        let expected = element_count(&dims)?;
        if expected != values.len() as u64 {
            return Err(Error::DataLength {
                dtype: T::DTYPE,
                shape: dims,
                expected: expected * T::DTYPE.size() as u64,
                actual: std::mem::size_of_val(values) as u64,
            });
        }
        let mut data = Vec::with_capacity(values.len() * T::DTYPE.size());
        T::encode(values, &mut data);
        Ok(Column {
            dtype: T::DTYPE as i32,
            shape: dims,
            data: Bytes::from(data),
        })
    }

    /// A one-dimensional column holding `values`.
    pub fn vector<T: Element>(values: &[T]) -> Result<Column> {
        Column::tensor(&[values.len()], values)
    }

    /// A scalar column (empty shape, one element).
    pub fn scalar<T: Element>(value: T) -> Column {
        let mut data = Vec::with_capacity(T::DTYPE.size());
        T::encode(&[value], &mut data);
        Column {
            dtype: T::DTYPE as i32,
            shape: Vec::new(),
            data: Bytes::from(data),
        }
    }

    /// A column from raw little-endian bytes, checked against the dtype and shape.
    pub fn from_raw(dtype: DType, shape: Vec<i32>, data: impl Into<Bytes>) -> Result<Column> {
        let column = Column {
            dtype: dtype as i32,
            shape,
            data: data.into(),
        };
        column.check()?;
        Ok(column)
    }

    /// The element type, or [`Error::UnknownDType`] for a value outside the schema. Prefer it to
    /// prost's generated `dtype()` getter, which silently reads an unknown value as `Int8`.
    pub fn try_dtype(&self) -> Result<DType> {
        DType::from_wire(self.dtype)
    }

    /// Whether the shape is empty: a scalar.
    pub fn is_scalar(&self) -> bool {
        self.shape.is_empty()
    }

    /// The number of elements the shape describes (1 for a scalar).
    pub fn element_count(&self) -> Result<u64> {
        element_count(&self.shape)
    }

    /// Checks that the dtype is known, the shape valid, and the data exactly
    /// product(shape) x element size bytes long.
    pub fn check(&self) -> Result<()> {
        let dtype = self.try_dtype()?;
        let expected = self
            .element_count()?
            .checked_mul(dtype.size() as u64)
            .ok_or_else(|| Error::BadShape {
                shape: self.shape.iter().map(|&x| i64::from(x)).collect(),
                reason: "the data size overflows 64 bits".into(),
            })?;
        if expected != self.data.len() as u64 {
            return Err(Error::DataLength {
                dtype,
                shape: self.shape.clone(),
                expected,
                actual: self.data.len() as u64,
            });
        }
        Ok(())
    }

    /// The elements as `T`, borrowed from the data when it is aligned for `T`, copied otherwise.
    /// Fails unless the column is valid and holds `T`'s dtype.
    pub fn values<T: Element>(&self) -> Result<Cow<'_, [T]>> {
        let dtype = self.try_dtype()?;
        if dtype != T::DTYPE {
            return Err(Error::WrongDType {
                expected: T::DTYPE,
                found: dtype,
            });
        }
        self.check()?;
        Ok(T::decode(&self.data))
    }

    /// The elements as an owned vector of `T`.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        Ok(self.values::<T>()?.into_owned())
    }

    /// The elements of a `Bool` column (a non-zero byte is `true`).
    pub fn to_bools(&self) -> Result<Vec<bool>> {
        self.to_vec::<bool>()
    }

    /// The raw little-endian data of a valid column of any dtype.
    pub fn bytes(&self) -> Result<&[u8]> {
        self.check()?;
        Ok(&self.data)
    }
}
