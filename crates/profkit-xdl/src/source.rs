//! Opening a dataset's files, gzipped or not.
//!
//! A data or meta file may be stored gzip-compressed (`train.trace.0.1.gz`,
//! `train.trace.0.1.meta.gz`, or under its plain name): gzip is recognised by its magic, not the
//! name, and undone while the file is read (by `profkit-gzip`, which checks each member's CRC and
//! length and refuses trailing data), so a compressed dataset reads like the plain one. Byte
//! offsets in errors are then offsets in the decompressed content. No limit is put on what a file
//! decompresses to: the readers stream frames under their own limit, so a bomb costs time, not
//! memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use profkit_gzip::{GzipReader, Limit, Options};

/// The name suffix of a gzip-compressed file, which dataset discovery looks through.
pub(crate) const GZ_SUFFIX: &str = ".gz";

/// An opened data or meta file: its content, gzip undone when it was compressed.
pub struct FileSource {
    inner: Inner,
}

enum Inner {
    Plain(BufReader<File>),
    Gzip(Box<GzipReader<BufReader<File>>>),
}

impl FileSource {
    /// Opens `path`, undoing gzip when the file starts with gzip's magic.
    pub fn open(path: impl AsRef<Path>) -> io::Result<FileSource> {
        FileSource::new(File::open(path)?)
    }

    /// Reads `file` from where it stands, undoing gzip when it starts with gzip's magic.
    pub fn new(file: File) -> io::Result<FileSource> {
        let mut reader = BufReader::new(file);
        let inner = if starts_with_magic(&mut reader)? {
            Inner::Gzip(Box::new(GzipReader::new(
                reader,
                Options::new(Limit::Unlimited),
            )))
        } else {
            Inner::Plain(reader)
        };
        Ok(FileSource { inner })
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        matches!(self.inner, Inner::Gzip(_))
    }
}

/// Whether the content starts with gzip's magic. A regular file's first read fills the buffer
/// with as much of the file as fits, so two bytes are there unless the file is shorter (and then
/// it is no gzip stream).
fn starts_with_magic(reader: &mut BufReader<File>) -> io::Result<bool> {
    Ok(profkit_gzip::is_gzip(reader.fill_buf()?))
}

impl Read for FileSource {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Plain(r) => r.read(buf),
            Inner::Gzip(r) => r.read(buf),
        }
    }
}

/// A file name without its trailing `.gz`, and whether it had one.
pub(crate) fn strip_gz(name: &str) -> (&str, bool) {
    match name.strip_suffix(GZ_SUFFIX) {
        Some(stem) => (stem, true),
        None => (name, false),
    }
}
