//! `profkit._native`, the Rust half of the `profkit` Python package: events, planes, lines,
//! metadata and XDL records of every input profkit reads as `pyarrow` tables and record batches
//! (through the Arrow C data and C stream interfaces: no value crosses as a Python object), the
//! commands `inspect`, `validate`, `report`, `convert` and `merge` as calls of the CLI library
//! (`profkit::api`, in this process: answers as data, never text parsed back), and the `profkit`
//! command itself (the wheel's script).
//!
//! Reads run with the GIL released; a progress callback, when given, is called with the GIL held
//! once per batch. Failures become `profkit.ProfkitError` subclasses (built by
//! `profkit._errors.from_failure`, which parses the location out of the message).
//!
//! The Python package around it (`python/profkit`) holds the documented API, the stubs and the
//! errors; see docs/python.md.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use arrow_array::RecordBatch;
use arrow_pyarrow::{IntoPyArrow, Table, ToPyArrow};
use arrow_schema::SchemaRef;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

mod commands;
mod source;

use source::{Failure, Opened, Progress};

/// The exception for a failure: `profkit._errors.from_failure(kind, file, message)`.
fn raise(py: Python<'_>, failure: Failure) -> PyErr {
    let made = py
        .import("profkit._errors")
        .and_then(|m| m.getattr("from_failure"))
        .and_then(|f| f.call1((failure.kind, &failure.file, &failure.message)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// Calls `callback(done, total)` with the GIL held, and lets Ctrl-C interrupt a long read.
fn report(callback: Option<&Py<PyAny>>, progress: &Progress) -> PyResult<()> {
    Python::attach(|py| {
        py.check_signals()?;
        if let Some(cb) = callback {
            cb.call1(py, (progress.done.load(Ordering::Relaxed), progress.total))?;
        }
        Ok(())
    })
}

/// Why a detached read stopped: a failure of the input, or a Python error (from the callback or
/// an interrupt).
enum Stop {
    Input(Failure),
    Python(PyErr),
}

impl Stop {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Stop::Input(f) => raise(py, f),
            Stop::Python(e) => e,
        }
    }
}

fn progress_for(path: &std::path::Path) -> Progress {
    Progress {
        total: std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map_or(0, |m| m.len()),
        ..Progress::default()
    }
}

fn table(py: Python<'_>, schema: SchemaRef, batches: Vec<RecordBatch>) -> PyResult<Py<PyAny>> {
    let table = Table::try_new(batches, schema)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(table.into_pyarrow(py)?.unbind())
}

/// Reads every table of an input: `{"events", "planes", "lines", "metadata"}` as `pyarrow.Table`
/// (`events` left out when `events` is false: the batches are then dropped as they come), with
/// `"format"` and `"warnings"`.
#[pyfunction]
#[pyo3(signature = (path, format=None, host=None, batch_rows=65536, events=true, progress=None, layout="frame", max_inflated=None, paddle_bytes_per_message=None))]
#[allow(clippy::too_many_arguments)]
fn read_tables(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    host: Option<String>,
    batch_rows: usize,
    events: bool,
    progress: Option<Py<PyAny>>,
    layout: &str,
    max_inflated: Option<String>,
    paddle_bytes_per_message: Option<u64>,
) -> PyResult<Py<PyDict>> {
    let meter = progress_for(&path);
    let limits = source::Limits::new(
        max_inflated.as_deref(),
        paddle_bytes_per_message,
        &path.display().to_string(),
    )
    .map_err(|f| raise(py, f))?;
    let read = py.detach(|| -> Result<_, Stop> {
        let mut opened = source::open(
            &path,
            format.as_deref(),
            host.as_deref(),
            batch_rows,
            layout,
            &meter,
            &limits,
        )
        .map_err(Stop::Input)?;
        let schema = opened.events.schema();
        let mut batches = Vec::new();
        loop {
            report(progress.as_ref(), &meter).map_err(Stop::Python)?;
            let next = opened
                .events
                .next_batch()
                .map_err(|e| Stop::Input(source::stream_failure(&opened.name, e)))?;
            match next {
                Some(batch) if events => batches.push(batch),
                Some(_) => {}
                None => break,
            }
        }
        let side = source::side(&opened.events, &opened.name).map_err(Stop::Input)?;
        Ok((opened, schema, batches, side))
    });
    let (opened, schema, batches, side) = read.map_err(|s| s.into_py(py))?;
    let out = PyDict::new(py);
    if events {
        out.set_item("events", table(py, schema, batches)?)?;
    }
    for (name, batch) in side {
        let schema = batch.schema();
        out.set_item(name, table(py, schema, vec![batch])?)?;
    }
    out.set_item("format", opened.format)?;
    out.set_item("warnings", PyList::new(py, &opened.warnings)?)?;
    Ok(out.unbind())
}

/// The events of an input as record batches, read one batch at a time (memory: one XSpace plane
/// and one batch), then its planes, lines and metadata tables.
#[pyclass(module = "profkit._native")]
struct EventStream {
    opened: Option<Opened>,
    meter: Progress,
    progress: Option<Py<PyAny>>,
    done: bool,
}

#[pymethods]
impl EventStream {
    #[new]
    #[pyo3(signature = (path, format=None, host=None, batch_rows=65536, progress=None, layout="frame", max_inflated=None, paddle_bytes_per_message=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        format: Option<String>,
        host: Option<String>,
        batch_rows: usize,
        progress: Option<Py<PyAny>>,
        layout: &str,
        max_inflated: Option<String>,
        paddle_bytes_per_message: Option<u64>,
    ) -> PyResult<EventStream> {
        let meter = progress_for(&path);
        let limits = source::Limits::new(
            max_inflated.as_deref(),
            paddle_bytes_per_message,
            &path.display().to_string(),
        )
        .map_err(|f| raise(py, f))?;
        let opened = py
            .detach(|| {
                source::open(
                    &path,
                    format.as_deref(),
                    host.as_deref(),
                    batch_rows,
                    layout,
                    &meter,
                    &limits,
                )
            })
            .map_err(|f| raise(py, f))?;
        Ok(EventStream {
            opened: Some(opened),
            meter,
            progress,
            done: false,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let Some(opened) = self.opened.as_mut().filter(|_| !self.done) else {
            return Err(PyStopIteration::new_err(()));
        };
        let progress = self.progress.as_ref();
        let meter = &self.meter;
        let next = py.detach(|| {
            report(progress, meter).map_err(Stop::Python)?;
            opened
                .events
                .next_batch()
                .map_err(|e| Stop::Input(source::stream_failure(&opened.name, e)))
        });
        match next {
            Ok(Some(batch)) => Ok(batch.to_pyarrow(py)?.unbind()),
            Ok(None) => {
                self.done = true;
                Err(PyStopIteration::new_err(()))
            }
            Err(stop) => {
                self.done = true;
                Err(stop.into_py(py))
            }
        }
    }

    /// The `events` schema (a `pyarrow.Schema`).
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.opened {
            Some(o) => Ok(o.events.schema().as_ref().to_pyarrow(py)?.unbind()),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err("stream closed")),
        }
    }

    /// The format read.
    #[getter]
    fn format(&self) -> &'static str {
        self.opened.as_ref().map_or("", |o| o.format)
    }

    /// The conversion's warnings.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.opened
            .as_ref()
            .map_or_else(Vec::new, |o| o.warnings.clone())
    }

    /// The planes, lines and metadata tables, once every batch was read.
    fn side_tables(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let Some(opened) = &self.opened else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err("stream closed"));
        };
        let side = source::side(&opened.events, &opened.name).map_err(|f| raise(py, f))?;
        let out = PyDict::new(py);
        for (name, batch) in side {
            let schema = batch.schema();
            out.set_item(name, table(py, schema, vec![batch])?)?;
        }
        Ok(out.unbind())
    }

    /// Drops the input (closes the file).
    fn close(&mut self) {
        self.opened = None;
        self.done = true;
    }
}

/// The XDL records of the datasets at `path`: `{dataset id: pyarrow.Table}`.
#[pyfunction]
#[pyo3(signature = (path, host=None, batch_rows=65536))]
fn xdl_records(
    py: Python<'_>,
    path: PathBuf,
    host: Option<String>,
    batch_rows: usize,
) -> PyResult<Py<PyDict>> {
    let read = py
        .detach(|| source::xdl_records(&path, host.as_deref(), batch_rows))
        .map_err(|f| raise(py, f))?;
    let out = PyDict::new(py);
    for (id, schema, batches) in read {
        out.set_item(id, table(py, schema, batches)?)?;
    }
    Ok(out.unbind())
}

/// Runs the `profkit` command in this process with `argv` (program name first) and returns its
/// exit code. Usage errors and `--help` exit the process, as the command does: call it only
/// from the `profkit` script or `python -m profkit`. So does SIGINT, SIGTERM or SIGHUP once a
/// conversion has started writing (after removing its temporary output), as the command does.
/// `self_command` is how to run the command again (the interpreter, `-m`, `profkit`), for
/// `plugin check`, which runs a child of itself.
#[pyfunction]
#[pyo3(signature = (argv, self_command=None))]
fn run_cli(py: Python<'_>, argv: Vec<String>, self_command: Option<Vec<String>>) -> u8 {
    if let Some(command) = self_command {
        profkit::set_self_command(command.into_iter().map(Into::into).collect());
    }
    py.detach(|| {
        let code = profkit::run_args(argv);
        // `ExitCode` has no accessor: compare with the codes the CLI returns.
        if code == std::process::ExitCode::SUCCESS {
            0
        } else if code == std::process::ExitCode::from(2) {
            2
        } else {
            1
        }
    })
}

/// An empty table of the schema `table` (`events`, `planes`, `lines`, `metadata`) has when read
/// with `layout`: the columns without reading any file (what an engine asks for before it plans).
#[pyfunction]
#[pyo3(signature = (table, layout="frame"))]
fn empty_table(py: Python<'_>, table: &str, layout: &str) -> PyResult<Py<PyAny>> {
    use profkit_arrow::schema;
    let layout = match layout {
        "frame" => schema::Layout::Frame,
        "parquet" => schema::Layout::Dataset,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "layout is \"frame\" or \"parquet\", not {other:?}"
            )));
        }
    };
    let schema = match table {
        "events" => schema::events_for(layout),
        "planes" => schema::planes(),
        "lines" => schema::lines(),
        "metadata" => schema::metadata_table(),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "table is one of events, planes, lines, metadata, not {other:?}"
            )));
        }
    };
    self::table(py, schema, Vec::new())
}

/// The formats `events()` and friends read.
#[pyfunction]
fn formats() -> Vec<&'static str> {
    source::FORMATS.to_vec()
}

/// The Rust half of the `profkit` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_tables, m)?)?;
    m.add_function(wrap_pyfunction!(xdl_records, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(empty_table, m)?)?;
    commands::register(m)?;
    m.add_class::<EventStream>()?;
    m.add("SCHEMA_VERSION", profkit_arrow::schema::VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
