//! Where a command's answer goes: the terminal (the `profkit` command), or its caller (the
//! library API, [`crate::api`], which the Python package calls in-process).
//!
//! The commands write through this module, never to the process's standard streams directly:
//! [`stdout`] for text, [`json`] for a JSON document, [`warn`] and [`note`] for what goes to
//! standard error. A command run by the library API runs on a thread of its own with a capture
//! installed: the document is kept as a [`Value`] (built from the document itself, no text made
//! and parsed back), text and warnings are kept, and a cancellation flag set by the caller (an
//! interrupt in Python) stops the run at its next read or write, so that the error path removes
//! its temporary output as it does for any failure.

use std::cell::RefCell;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Failure;
use crate::value::Value;

/// What a command run by the library API said.
#[derive(Default)]
pub(crate) struct Captured {
    /// The JSON document, for the commands run with `--json`.
    pub(crate) doc: Option<Value>,
    /// What it wrote as text to standard output.
    pub(crate) text: Vec<u8>,
    /// Its warnings, as `NAME: warning: MESSAGE` (the command's lines without `profkit: `).
    pub(crate) warnings: Vec<String>,
    /// The last message for standard error that was not a warning (what a command that fails
    /// after printing its problems says last).
    pub(crate) last_message: Option<String>,
    /// Set by the caller to stop the run.
    pub(crate) cancel: Arc<AtomicBool>,
}

thread_local! {
    static CAPTURE: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// Whether a library API call ever ran in this process: the `profkit` command's signal handling
/// (which ends the process on SIGINT) is then never installed, so that an embedding Python keeps
/// its own `KeyboardInterrupt`.
static EMBEDDED: AtomicBool = AtomicBool::new(false);

pub(crate) fn embedded() -> bool {
    EMBEDDED.load(Ordering::Relaxed)
}

/// Runs `f` with a capture on this thread; what it said, and its result.
pub(crate) fn captured<T>(cancel: Arc<AtomicBool>, f: impl FnOnce() -> T) -> (T, Captured) {
    EMBEDDED.store(true, Ordering::Relaxed);
    CAPTURE.with(|c| {
        *c.borrow_mut() = Some(Captured {
            cancel,
            ..Captured::default()
        })
    });
    let result = f();
    let said = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (result, said)
}

fn capturing() -> bool {
    CAPTURE.with(|c| c.borrow().is_some())
}

/// Whether the caller asked the run on this thread to stop.
pub(crate) fn cancelled() -> bool {
    CAPTURE.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|c| c.cancel.load(Ordering::Relaxed))
    })
}

/// The message of the error a cancelled read or write returns (the API reports the cancel
/// itself, not this).
pub(crate) const CANCELLED: &str = "interrupted by the caller";

/// An error when the run was cancelled: called by the readers and writers the commands use, so
/// that a long command stops at its next read or write.
pub(crate) fn check() -> std::io::Result<()> {
    if cancelled() {
        Err(std::io::Error::other(CANCELLED))
    } else {
        Ok(())
    }
}

/// The command's standard output.
pub(crate) enum Stdout {
    Terminal(std::io::StdoutLock<'static>),
    Captured,
}

/// The command's standard output: the process's, or the capture's text.
pub(crate) fn stdout() -> Stdout {
    if capturing() {
        Stdout::Captured
    } else {
        Stdout::Terminal(std::io::stdout().lock())
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stdout::Terminal(out) => out.write(buf),
            Stdout::Captured => {
                check()?;
                CAPTURE.with(|c| {
                    if let Some(c) = c.borrow_mut().as_mut() {
                        c.text.extend_from_slice(buf);
                    }
                });
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stdout::Terminal(out) => out.flush(),
            Stdout::Captured => Ok(()),
        }
    }
}

/// Writes a JSON document: pretty-printed with a newline to standard output, or kept as a
/// [`Value`] by the capture.
pub(crate) fn json(doc: &(impl serde::Serialize + ?Sized)) -> Result<(), Failure> {
    if capturing() {
        check().map_err(Failure::Output)?;
        let value = crate::value::to_value(doc)
            .map_err(|e| Failure::Output(std::io::Error::other(e.to_string())))?;
        document(value);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, doc).map_err(|e| Failure::Output(e.into()))?;
    writeln!(out).map_err(Failure::Output)
}

/// Keeps a document already made as a [`Value`] (for the library API only).
pub(crate) fn document(value: Value) {
    CAPTURE.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.doc = Some(value);
        }
    });
}

/// Whether a run keeps its documents as values (the library API) rather than printing them.
pub(crate) fn keeps_values() -> bool {
    capturing()
}

/// A warning about `name`: `profkit: NAME: warning: MESSAGE` on standard error, or kept.
pub(crate) fn warn(name: &str, message: impl std::fmt::Display) {
    let line = format!("{name}: warning: {message}");
    if capturing() {
        CAPTURE.with(|c| {
            if let Some(c) = c.borrow_mut().as_mut() {
                c.warnings.push(line);
            }
        });
    } else {
        eprintln!("profkit: {line}");
    }
}

/// Any other message for standard error (`profkit: ` in front); the library API keeps the last.
pub(crate) fn note(message: impl std::fmt::Display) {
    if capturing() {
        let text = message.to_string();
        CAPTURE.with(|c| {
            if let Some(c) = c.borrow_mut().as_mut() {
                c.last_message = Some(text);
            }
        });
    } else {
        eprintln!("profkit: {message}");
    }
}
