//! Opening an input file (or standard input) and finding its format.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::Failure;
use crate::format::{self, Format};

/// How many bytes detection looks at.
const SNIFF_LEN: usize = 4096;

/// An opened input with its format decided.
pub(crate) struct Input {
    /// How the input is named in messages.
    pub name: String,
    /// The format, detected or given with `--from`.
    pub format: Format,
    /// The content, positioned at its start (empty for a directory or a path prefix).
    pub reader: Box<dyn BufRead>,
    /// The path given, `None` for standard input. Formats made of several files (XDL datasets)
    /// read from it rather than from `reader`.
    pub path: Option<PathBuf>,
}

impl Input {
    pub(crate) fn open(path: &Path, from: Option<Format>) -> Result<Input, Failure> {
        if from == Some(Format::Parquet) {
            return Err(Failure::Usage(
                "parquet is an output format only (--to parquet)".into(),
            ));
        }
        let is_stdin = path.as_os_str() == "-";
        let name = if is_stdin {
            "<stdin>".to_owned()
        } else {
            path.display().to_string()
        };
        if !is_stdin && from.is_none_or(|f| f == Format::Xdl) && !path.is_file() {
            // A directory or a path prefix can only be an XDL dataset.
            if let Some(input) = crate::xdl::open_datasets(path, &name)? {
                return Ok(input);
            }
        }
        let raw: Box<dyn Read> = if is_stdin {
            Box::new(std::io::stdin())
        } else {
            let file = File::open(path)
                .map_err(|e| Failure::BadInput(format!("{name}: cannot open: {e}")))?;
            if file.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(Failure::BadInput(format!(
                    "{name}: is a directory, expected a file"
                )));
            }
            Box::new(file)
        };
        let mut reader: Box<dyn BufRead> = Box::new(BufReader::with_capacity(1 << 16, raw));
        let format = match from {
            Some(format) => format,
            None => {
                let prefix = peek(&mut reader, SNIFF_LEN)
                    .map_err(|e| Failure::BadInput(format!("{name}: cannot read: {e}")))?;
                format::detect(&prefix, path).ok_or_else(|| {
                    Failure::BadInput(format!(
                        "{name}: unrecognised format (the content is not an XSpace, XDL trace, Poplar \
                         profile or Paddle profile); name the format with --from if you know it"
                    ))
                })?
            }
        };
        Ok(Input {
            name,
            format,
            reader,
            path: (!is_stdin).then(|| path.to_path_buf()),
        })
    }
}

/// Returns up to `n` leading bytes without consuming them: they are read into a buffer that is then
/// chained in front of the rest.
fn peek(reader: &mut Box<dyn BufRead>, n: usize) -> std::io::Result<Vec<u8>> {
    let mut prefix = Vec::with_capacity(n);
    let taken = std::mem::replace(reader, Box::new(std::io::empty()));
    let mut limited = taken.take(n as u64);
    limited.read_to_end(&mut prefix)?;
    let rest = limited.into_inner();
    *reader = Box::new(BufReader::new(
        std::io::Cursor::new(prefix.clone()).chain(rest),
    ));
    Ok(prefix)
}
