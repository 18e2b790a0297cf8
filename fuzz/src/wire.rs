//! Just enough of the protobuf wire format to aim mutations: reading varints and finding the
//! length prefixes of a valid encoding without knowing its schema.

/// Reads a varint at `pos`, advancing it; `None` if the input ends or the varint is over 10
/// bytes.
pub fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Encodes `value` as a varint.
pub fn encode_varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(10);
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
    out
}

/// A length prefix of a length-delimited field: where its varint sits and what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthPrefix {
    /// Offset of the varint's first byte.
    pub start: usize,
    /// Offset just past the varint.
    pub end: usize,
    /// The length it declares.
    pub value: u64,
}

/// Every length prefix in `buf`, read as a message, and in the bodies of its length-delimited
/// fields that themselves read as messages (strings and bytes usually do not). Stops quietly at
/// anything that is not a well-formed message.
pub fn length_prefixes(buf: &[u8]) -> Vec<LengthPrefix> {
    let mut out = Vec::new();
    walk(buf, 0, buf.len(), 0, &mut out);
    out
}

/// Walks the message in `buf[start..end]`; returns whether it parsed to its end.
fn walk(buf: &[u8], start: usize, end: usize, depth: u32, out: &mut Vec<LengthPrefix>) -> bool {
    if depth > 16 {
        return false;
    }
    let Some(slice) = buf.get(..end) else {
        return false;
    };
    let found = out.len();
    let mut pos = start;
    while pos < end {
        let Some(tag) = varint(slice, &mut pos) else {
            out.truncate(found);
            return false;
        };
        let ok = match tag & 7 {
            0 => varint(slice, &mut pos).is_some(),
            1 => {
                pos += 8;
                pos <= end
            }
            5 => {
                pos += 4;
                pos <= end
            }
            2 => {
                let prefix_start = pos;
                match varint(slice, &mut pos) {
                    Some(len) if len <= (end - pos) as u64 => {
                        out.push(LengthPrefix {
                            start: prefix_start,
                            end: pos,
                            value: len,
                        });
                        let body_end = pos + len as usize;
                        walk(buf, pos, body_end, depth + 1, out);
                        pos = body_end;
                        true
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if !ok || tag >> 3 == 0 {
            out.truncate(found);
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let bytes = encode_varint(value);
            let mut pos = 0;
            assert_eq!(varint(&bytes, &mut pos), Some(value));
            assert_eq!(pos, bytes.len());
        }
    }

    #[test]
    fn finds_nested_length_prefixes() {
        // Field 1 (len 4) holding field 3 (len 2) holding "hi" (which reads as no message).
        let buf = [0x0a, 0x04, 0x1a, 0x02, b'h', b'i'];
        let prefixes = length_prefixes(&buf);
        assert_eq!(
            prefixes,
            [
                LengthPrefix {
                    start: 1,
                    end: 2,
                    value: 4
                },
                LengthPrefix {
                    start: 3,
                    end: 4,
                    value: 2
                },
            ]
        );
    }
}
