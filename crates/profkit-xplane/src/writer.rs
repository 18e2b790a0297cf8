//! Writing an XSpace plane by plane, without building it.
//!
//! [`XSpaceWriter`] encodes each plane to the output as it is handed over, so a producer of a
//! large space holds one plane at a time (and one plane's encoding), never the whole space or its
//! whole encoding. The strings of the space (`errors`, `warnings`, `hostnames`) are small; they
//! are kept until [`XSpaceWriter::finish`] and written after the planes, so that the output is
//! byte for byte what [`crate::encode`] writes for the same space.
//!
//! ```
//! use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};
//! use profkit_xplane::writer::XSpaceWriter;
//! let mut space = XSpace::default();
//! let mut writer = XSpaceWriter::new(Vec::new());
//! for id in 0..3 {
//!     let mut plane = XPlane::default();
//!     PlaneBuilder::new(&mut plane).set_id(id).line(1).add_event("step").set_duration_ps(5);
//!     writer.write_plane(&plane)?;
//!     space.planes.push(plane); // only to compare below
//! }
//! writer.add_hostname("host");
//! space.hostnames.push("host".into());
//! assert_eq!(writer.finish()?, encode(&space));
//! # Ok::<(), profkit_xplane::Error>(())
//! ```

use std::io::Write;

use crate::encoder::{encode_plane_entry, encode_string_entry};
use crate::error::Result;
use crate::proto::XPlane;
use crate::xview::XPlaneView;

/// Writes an XSpace to `W` one plane at a time; call [`finish`](Self::finish) at the end, which
/// writes the space's strings (a writer dropped without it leaves them out).
pub struct XSpaceWriter<W: Write> {
    out: W,
    /// One plane's entry, reused from plane to plane.
    buf: Vec<u8>,
    sizes: Vec<usize>,
    errors: Vec<String>,
    warnings: Vec<String>,
    hostnames: Vec<String>,
    planes: usize,
    written: u64,
}

impl<W: Write> XSpaceWriter<W> {
    /// A writer to `out` (buffer it if it is a file: planes are written in a few large writes,
    /// the strings in small ones).
    pub fn new(out: W) -> Self {
        XSpaceWriter {
            out,
            buf: Vec::new(),
            sizes: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
            hostnames: Vec::new(),
            planes: 0,
            written: 0,
        }
    }

    /// Encodes `plane` as the next element of `XSpace.planes` and writes it.
    pub fn write_plane(&mut self, plane: &XPlane) -> Result<()> {
        self.buf.clear();
        encode_plane_entry(plane, &mut self.buf, &mut self.sizes);
        self.out.write_all(&self.buf)?;
        self.planes += 1;
        self.written += self.buf.len() as u64;
        Ok(())
    }

    /// Writes `plane`, one encoded XPlane message, as the next plane, its bytes copied as they are
    /// (they are what [`crate::encode`] would write for it when they were written by it, by prost
    /// or by this writer).
    pub fn write_plane_bytes(&mut self, plane: &[u8]) -> Result<()> {
        self.buf.clear();
        self.buf.push(0x0a); // field 1 (`planes`), length-delimited
        let mut len = plane.len() as u64;
        while len >= 0x80 {
            self.buf.push((len as u8) | 0x80);
            len >>= 7;
        }
        self.buf.push(len as u8);
        self.out.write_all(&self.buf)?;
        self.out.write_all(plane)?;
        self.planes += 1;
        self.written += (self.buf.len() + plane.len()) as u64;
        Ok(())
    }

    /// Writes a viewed plane as the next plane, copying its encoded bytes.
    pub fn write_plane_view(&mut self, plane: &XPlaneView<'_>) -> Result<()> {
        self.write_plane_bytes(plane.bytes())
    }

    /// Adds an element of `XSpace.errors` (written by [`finish`](Self::finish)).
    pub fn add_error(&mut self, error: impl Into<String>) {
        self.errors.push(error.into());
    }

    /// Adds an element of `XSpace.warnings` (written by [`finish`](Self::finish)).
    pub fn add_warning(&mut self, warning: impl Into<String>) {
        self.warnings.push(warning.into());
    }

    /// Adds an element of `XSpace.hostnames` (written by [`finish`](Self::finish)).
    pub fn add_hostname(&mut self, hostname: impl Into<String>) {
        self.hostnames.push(hostname.into());
    }

    /// How many planes have been written.
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// How many bytes have been written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Writes the errors, warnings and hostnames, flushes, and returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.buf.clear();
        for (number, strings) in [(2, &self.errors), (3, &self.warnings), (4, &self.hostnames)] {
            for s in strings {
                encode_string_entry(number, s, &mut self.buf);
            }
        }
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}
