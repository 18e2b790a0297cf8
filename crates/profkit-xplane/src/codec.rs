//! Whole-message reading and writing of XSpace, with a size limit.

use std::io::{Read, Write};
use std::path::Path;

use bytes::Bytes;
use profkit_wire::{LEN, VARINT, read_varint};

use crate::error::{Error, Result};
use crate::gzip::MaybeGzip;
use crate::options::{ReadOptions, check_size};
use crate::proto::{XPlane, XSpace};
use crate::xview::{XPlaneView, XSpaceView};

/// Decodes an XSpace from bytes. Byte fields share `bytes`' buffer rather than copying it.
pub fn decode(bytes: impl Into<Bytes>) -> Result<XSpace> {
    decode_with(bytes, ReadOptions::default())
}

/// Decodes an XSpace from bytes with the given options.
pub fn decode_with(bytes: impl Into<Bytes>, options: ReadOptions) -> Result<XSpace> {
    let bytes = bytes.into();
    XSpaceView::with_options(&bytes, options)?.owned_with(Some(&bytes))
}

/// Decodes a single XPlane (one element of `XSpace.planes`) from bytes.
pub fn decode_plane(bytes: impl Into<Bytes>) -> Result<XPlane> {
    let bytes = bytes.into();
    XPlaneView::new(&bytes)?.owned_with(Some(&bytes))
}

/// Reads everything from `reader` (at most `options.max_size` bytes) and decodes it. A gzipped
/// input is decompressed (under `options.max_inflated`).
pub fn read(reader: impl Read, options: ReadOptions) -> Result<XSpace> {
    let reader = MaybeGzip::new(reader, options.max_inflated, None);
    let buf = read_limited(reader, options.max_size, "XSpace")?;
    decode_with(buf, options)
}

/// Reads and decodes an XSpace file, gzipped (`.xplane.pb.gz`, told by its content) or not.
/// Errors name the file.
///
/// ```no_run
/// let space = profkit_xplane::read_file("tpu.xplane.pb.gz", Default::default())?;
/// println!("{} planes", space.planes.len());
/// # Ok::<(), profkit_xplane::Error>(())
/// ```
pub fn read_file(path: impl AsRef<Path>, options: ReadOptions) -> Result<XSpace> {
    let path = path.as_ref();
    let inner = || -> Result<XSpace> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        check_size("XSpace", 0, len, options.max_size)?;
        let reader = MaybeGzip::new(file, options.max_inflated, Some(len));
        let buf = read_limited(reader, options.max_size, "XSpace")?;
        decode_with(buf, options)
    };
    inner().map_err(|e| e.in_file(path))
}

/// Encodes an XSpace to bytes.
pub fn encode(space: &XSpace) -> Vec<u8> {
    crate::encoder::encode_space(space)
}

/// Encodes one XPlane on its own (as [`decode_plane`] reads it back), as prost would write it.
pub fn encode_plane(plane: &XPlane) -> Vec<u8> {
    crate::encoder::encode_plane(plane)
}

/// Encodes an XSpace to `writer`, plane by plane (the whole encoding is never held).
pub fn write(space: &XSpace, writer: impl Write) -> Result<()> {
    write_space(space, writer).map(drop)
}

/// Encodes an XSpace into a file, replacing it.
pub fn write_file(space: &XSpace, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let inner = || -> Result<()> {
        let file = std::fs::File::create(path)?;
        // `finish` flushes the buffer, so an error writing its tail is seen here.
        write_space(space, std::io::BufWriter::new(file))?;
        Ok(())
    };
    inner().map_err(|e| e.in_file(path))
}

fn write_space<W: Write>(space: &XSpace, writer: W) -> Result<W> {
    let mut out = crate::writer::XSpaceWriter::new(writer);
    for plane in &space.planes {
        out.write_plane(plane)?;
    }
    space.errors.iter().for_each(|s| out.add_error(s.as_str()));
    space
        .warnings
        .iter()
        .for_each(|s| out.add_warning(s.as_str()));
    space
        .hostnames
        .iter()
        .for_each(|s| out.add_hostname(s.as_str()));
    out.finish()
}

/// Reads all of `reader` into memory, refusing more than `limit` bytes. The buffer grows with
/// what actually arrives, never with a declared size, and input that cannot be an XSpace is
/// refused at its first fault as it arrives (endless zeros on standard input stop at byte 0, not
/// at the limit).
fn read_limited(reader: impl Read, limit: u64, what: &str) -> Result<Vec<u8>> {
    let (buf, fault) = profkit_wire::read_walked(reader, limit, crate::wire::Msg::Space, what)?;
    if let Some(fault) = fault {
        return Err(<Error as profkit_wire::FaultError>::from_fault(fault));
    }
    check_size(what, 0, buf.len() as u64, limit)?;
    Ok(buf)
}

/// Reads all of `reader` into memory as [`read`] does, without decoding it: at most
/// `options.max_size` bytes, refused at the first fault of the encoding as the bytes arrive. For
/// callers that need an XSpace they cannot seek in (standard input) in memory, to read it twice.
/// A gzipped input is decompressed; the bytes returned are the encoded XSpace.
pub fn read_bytes(reader: impl Read, options: ReadOptions) -> Result<Vec<u8>> {
    let reader = MaybeGzip::new(reader, options.max_inflated, None);
    read_limited(reader, options.max_size, "XSpace")
}

/// Whether `prefix` (the first bytes of a file, any length) looks like an encoded XSpace: every
/// complete top-level field in it is one of XSpace's (planes, errors, warnings, hostnames) with the
/// length-delimited wire type, and the first plane starts with a field of XPlane. An empty input is
/// an empty XSpace. This is a quick content check for format detection, not a validation.
pub fn looks_like_xspace(prefix: &[u8]) -> bool {
    let mut pos = 0usize;
    let mut fields = 0;
    while pos < prefix.len() {
        let Ok(tag) = read_varint(prefix, &mut pos) else {
            return fields > 0;
        };
        if !(1..=4).contains(&(tag >> 3)) || (tag & 7) as u8 != LEN {
            return false;
        }
        let Ok(len) = read_varint(prefix, &mut pos) else {
            return fields > 0;
        };
        if tag >> 3 == 1 && len > 0 {
            // The plane's first field must be one of XPlane's, with its wire type.
            let mut inner = pos;
            if let Ok(first) = read_varint(prefix, &mut inner) {
                let ok = matches!((first >> 3, (first & 7) as u8), (1, VARINT) | (2..=6, LEN));
                if !ok {
                    return false;
                }
            }
        }
        fields += 1;
        match usize::try_from(len).ok().and_then(|l| pos.checked_add(l)) {
            Some(next) => pos = next,
            None => return false,
        }
    }
    true
}
