//! Reading a trace: the document streamed through `profkit-json`'s reader, each event taken by the
//! fast path or the visitors, and the XSpace built once all are read.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Read;
use std::rc::Rc;

use profkit_json::{ReadOptions, Reader};
use profkit_xplane::XSpace;

use crate::document::Document;
use crate::error::{Error, Result};
use crate::sniff::skip_bom;
use crate::trace::Trace;
use crate::warnings::WarningKind;
use crate::{WARNINGS_PER_KIND, fast};

/// What reading a Chrome trace made, besides the XSpace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChromeImport {
    /// The trace as an XSpace.
    pub space: XSpace,
    /// Events converted (not counting metadata).
    pub events: u64,
    /// Flows bound to events (each end counted).
    pub flows: u64,
    /// Events of phases that have no place in an XSpace, by phase.
    pub skipped: BTreeMap<String, u64>,
    /// Events left out or changed, with why: at most [`WARNINGS_PER_KIND`] of a kind, then a
    /// line with the count of the rest.
    pub warnings: Vec<String>,
    /// How many warnings of each kind there were in all.
    pub warning_counts: BTreeMap<WarningKind, u64>,
    /// Lines where events may partly overlap as their producers write them: async lines, GPU
    /// streams and the counter line, as (plane index, line id).
    pub overlapping_lines: Vec<(usize, i64)>,
    /// The finest time step the input's times are written in, in picoseconds (1,000,000 for
    /// whole microseconds, 1,000 for three decimals).
    pub precision_ps: i64,
    /// Whether the trace has Kineto's GPU activity or device properties.
    pub kineto: bool,
    /// Whether the trace is one of Paddle's profiler.
    pub paddle: bool,
}

/// Reads Chrome trace JSON from bytes (see the module documentation).
pub fn chrome_to_xspace(text: &[u8]) -> Result<ChromeImport> {
    read_chrome(text)
}

/// Reads Chrome trace JSON from any reader, streaming (see the module documentation).
pub fn read_chrome<R: Read>(reader: R) -> Result<ChromeImport> {
    read_chrome_with(reader, ChromeReadOptions::default())
}

/// How [`read_chrome_with`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChromeReadOptions {
    /// Whether the events are read by the importer's own scanner where they can be (the default),
    /// rather than all through serde's visitors. Both give the same import and the same errors
    /// (every event the scanner does not take whole, malformed ones included, goes to the
    /// visitors, which report it); the switch is there to compare them.
    pub fast_events: bool,
    /// How many threads the import may use: 0 (the default) for as many as the rayon pool it
    /// runs in has (`profkit --threads N` runs its commands in a pool of N; outside any pool,
    /// rayon's global one, a thread per core). With one, the import runs on the caller's thread
    /// alone; with more, a second thread scans the events ahead of the reader (see the crate's
    /// documentation, "Threads"). The import is the same whatever the count, and so are errors.
    pub threads: usize,
    /// How the scanning thread cuts the text (smaller in tests, to cut events in every way).
    pub(crate) limits: fast::Limits,
}

impl Default for ChromeReadOptions {
    fn default() -> Self {
        ChromeReadOptions {
            fast_events: true,
            threads: 0,
            limits: fast::Limits::default(),
        }
    }
}

impl ChromeReadOptions {
    /// The options with `fast_events`.
    pub fn fast_events(mut self, on: bool) -> Self {
        self.fast_events = on;
        self
    }

    /// The options with `threads` (0: as many as the pool the import runs in).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// For tests of the import with several threads: the scanning thread is given at most
    /// `window` bytes at a time (1 MiB by default) and hands on `batch` events at a time (256),
    /// so that small inputs are cut between and inside events, and the reader's thread waits for
    /// every event the scanner has not reached yet rather than scanning it itself (so that the
    /// events scanned ahead do not depend on timing). The import is the same.
    #[doc(hidden)]
    pub fn scan_cut(mut self, window: usize, batch: usize) -> Self {
        self.limits = fast::Limits {
            window: window.max(1),
            events: batch.max(1),
            least: 0,
            wait: true,
        };
        self
    }
}

/// The read buffer: large reads, and room for the events the fast path takes whole.
pub(crate) const READ_BUFFER: usize = 1 << 20;

/// [`read_chrome`] with explicit settings.
pub fn read_chrome_with<R: Read>(reader: R, options: ChromeReadOptions) -> Result<ChromeImport> {
    let threads = match options.threads {
        0 => rayon::current_num_threads(),
        n => n,
    };
    if options.fast_events && threads > 1 {
        std::thread::scope(|scope| {
            let ahead = fast::Ahead::start(scope, options.limits);
            read_on(reader, options, ahead)
        })
    } else {
        read_on(reader, options, None)
    }
}

/// The import, with the events scanned `ahead` on a thread of their own or not.
fn read_on<R: Read>(
    reader: R,
    options: ChromeReadOptions,
    ahead: Option<fast::Ahead>,
) -> Result<ChromeImport> {
    let trace = Rc::new(RefCell::new(Trace::new()));
    // A bad string spoils one name or arg, not the trace: it is kept as replaced text, with a
    // warning naming where.
    let json_options = ReadOptions::default()
        .open_top_array(true)
        .replace_invalid(true);
    let mut json = Reader::with_buffer(skip_bom(reader), json_options, READ_BUFFER);
    if options.fast_events {
        json.set_raw_hook(Box::new(fast::FastEvents::new(Rc::clone(&trace), ahead)));
    }
    let result = json.read_document_seed(Document { trace: &trace });
    let (replaced, places) = json.replaced_strings();
    let places = places.to_vec();
    drop(json);
    let trace = std::mem::replace(&mut *trace.borrow_mut(), Trace::new());
    let mut import = match result {
        Ok(()) => trace.into_import()?,
        Err(e) => return Err(chrome_error(e)),
    };
    if replaced > 0 {
        for place in places.iter().take(WARNINGS_PER_KIND) {
            import.warnings.push(format!(
                "{} (line {}, column {}): a string with a lone surrogate or bytes that are not UTF-8, kept with U+FFFD in their place",
                place.path, place.line, place.column
            ));
        }
        let shown = places.len().min(WARNINGS_PER_KIND) as u64;
        if replaced > shown {
            import
                .warnings
                .push(format!("... and {} more such strings", replaced - shown));
        }
        *import
            .warning_counts
            .entry(WarningKind::ReplacedText)
            .or_default() += replaced;
    }
    Ok(import)
}

pub(crate) fn chrome_error(e: profkit_json::Error) -> Error {
    let (location, reason) = match e {
        profkit_json::Error::Io(io) => return Error::Io(io),
        profkit_json::Error::Truncated { location } => {
            (location, "the text ends inside the value".to_owned())
        }
        profkit_json::Error::Syntax { location, reason }
        | profkit_json::Error::Schema { location, reason } => (location, reason),
        profkit_json::Error::Limit {
            location,
            what,
            limit,
            ..
        } => (location, format!("{what} is over the limit of {limit}")),
        other => (profkit_json::Location::default(), other.to_string()),
    };
    Error::Json {
        path: location.path,
        line: location.line,
        column: location.column,
        reason,
    }
}
