//! The view of one XStat and its value.

use crate::proto::{XStat, x_stat};
use crate::wire::Msg;

use super::*;

/// The value of a stat as stored: a `ref_value` is the id of a stat metadata, resolved with
/// [`PlaneMetadata::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatValueView<'a> {
    /// `double_value`.
    Double(f64),
    /// `uint64_value`.
    Uint64(u64),
    /// `int64_value`.
    Int64(i64),
    /// `str_value`.
    Str(&'a str),
    /// `bytes_value`.
    Bytes(&'a [u8]),
    /// `ref_value`: a stat metadata id.
    Ref(u64),
}

/// A borrowed view of one XStat.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XStatView<'a> {
    pub(super) metadata_id: i64,
    pub(super) value: Option<StatValueView<'a>>,
}

impl<'a> XStatView<'a> {
    #[inline]
    pub(super) fn decode(body: &'a [u8]) -> Walk<Self> {
        let mut stat = XStatView {
            metadata_id: 0,
            value: None,
        };
        let mut f = Fields::new(body);
        while !f.at_end() {
            let key = f.varint()?;
            stat.value = Some(match key_byte(key) {
                T1_VARINT => {
                    stat.metadata_id = f.varint()? as i64;
                    continue;
                }
                T2_FIXED64 => StatValueView::Double(f64::from_bits(f.fixed64()?)),
                T3_VARINT => StatValueView::Uint64(f.varint()?),
                T4_VARINT => StatValueView::Int64(f.varint()? as i64),
                T5_LEN => StatValueView::Str(f.str()?),
                T6_LEN => StatValueView::Bytes(f.bytes()?),
                T7_VARINT => StatValueView::Ref(f.varint()?),
                _ => {
                    let (number, wire_type) = checked_tag(key)?;
                    f.other(Msg::Stat, number, wire_type)?;
                    continue;
                }
            });
        }
        Ok(stat)
    }

    /// The owned XStat of a stat's body, decoded straight into it (the same as decoding the view
    /// and then [`Self::to_owned_stat`], without the view in between: this is what decoding a
    /// plane spends its time in).
    #[inline(always)]
    pub(super) fn decode_owned(body: &'a [u8], owner: Option<&bytes::Bytes>) -> Walk<XStat> {
        let mut stat = XStat {
            metadata_id: 0,
            value: None,
        };
        let mut f = Fields::new(body);
        while !f.at_end() {
            let key = f.varint()?;
            stat.value = Some(match key_byte(key) {
                T1_VARINT => {
                    stat.metadata_id = f.varint()? as i64;
                    continue;
                }
                T2_FIXED64 => x_stat::Value::DoubleValue(f64::from_bits(f.fixed64()?)),
                T3_VARINT => x_stat::Value::Uint64Value(f.varint()?),
                T4_VARINT => x_stat::Value::Int64Value(f.varint()? as i64),
                T5_LEN => x_stat::Value::StrValue(f.str()?.to_owned()),
                T6_LEN => x_stat::Value::BytesValue(share(owner, f.bytes()?)),
                T7_VARINT => x_stat::Value::RefValue(f.varint()?),
                _ => {
                    let (number, wire_type) = checked_tag(key)?;
                    f.other(Msg::Stat, number, wire_type)?;
                    continue;
                }
            });
        }
        Ok(stat)
    }

    /// `metadata_id`.
    pub fn metadata_id(&self) -> i64 {
        self.metadata_id
    }

    /// The value, `None` when none is set.
    pub fn value(&self) -> Option<StatValueView<'a>> {
        self.value
    }

    /// The owned XStat.
    pub fn to_owned_stat(&self) -> XStat {
        self.owned_with(None)
    }

    #[inline]
    pub(super) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> XStat {
        XStat {
            metadata_id: self.metadata_id,
            value: self.value.map(|v| match v {
                StatValueView::Double(v) => x_stat::Value::DoubleValue(v),
                StatValueView::Uint64(v) => x_stat::Value::Uint64Value(v),
                StatValueView::Int64(v) => x_stat::Value::Int64Value(v),
                StatValueView::Str(v) => x_stat::Value::StrValue(v.to_owned()),
                StatValueView::Bytes(v) => x_stat::Value::BytesValue(share(owner, v)),
                StatValueView::Ref(v) => x_stat::Value::RefValue(v),
            }),
        }
    }
}
