//! `inspect`, `validate`, `report`, `convert` and `merge`: the CLI library's calls
//! (`profkit::api`), run in this process.
//!
//! Each call runs on a worker thread of its own while the calling thread waits with the GIL
//! released, waking every [`POLL`] to let Python run its signal handlers
//! (`Python::check_signals`): Ctrl-C in a terminal, or a notebook's interrupt, which reaches
//! the Python process only. On an exception from a handler (`KeyboardInterrupt`) the call is
//! cancelled (`profkit::api::Control`): the worker stops at its next read or write, its error
//! path removes the temporary output (`OUT.profkit-PID.tmp`, a Parquet host's
//! `.host=NAME.tmp-PID` staging directory), and once it has ended the exception is raised. The
//! answer crosses as `profkit::Value`, built from the command's document, made into Python
//! objects here with the GIL held.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use profkit::Value;
use profkit::api::{self, Control, Limits};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// How often a waiting call lets Python look at its signals.
const POLL: Duration = Duration::from_millis(50);

/// The worker's stack: as large as the main thread's, which the command runs on when it is the
/// `profkit` program (readers of nested input recurse within their depth limits).
const WORKER_STACK: usize = 16 << 20;

/// The exception for a failed call: `profkit._errors.from_message(kind, message, files)`, which
/// splits the file the message names off it and picks the `ProfkitError` subclass.
fn raise(py: Python<'_>, error: &api::Error, files: &[PathBuf]) -> PyErr {
    let kind = match error.kind {
        api::ErrorKind::Usage => "usage",
        api::ErrorKind::Output => "convert",
        _ => "decode",
    };
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let made = py
        .import("profkit._errors")
        .and_then(|m| m.getattr("from_message"))
        .and_then(|f| f.call1((kind, &error.message, files)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// Runs `work` on a worker thread, the calling thread polling Python's signals meanwhile (see
/// the module documentation); its answer, or the exception to raise.
fn call<T: Send + 'static>(
    py: Python<'_>,
    files: &[PathBuf],
    work: impl FnOnce(&Control) -> Result<T, api::Error> + Send + 'static,
) -> PyResult<T> {
    let control = Control::new();
    let (tx, rx) = mpsc::channel();
    let worker_control = control.clone();
    let spawned = std::thread::Builder::new()
        .name("profkit-call".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let _ = tx.send(work(&worker_control));
        });
    // Waited on with the GIL released, from this thread only (the lock is never contended: it
    // makes the receiver shareable with the closure `detach` runs).
    let rx = std::sync::Mutex::new(rx);
    let recv = |timeout: Option<Duration>| {
        let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
        match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        }
    };
    if let Err(e) = spawned {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "cannot start the worker thread: {e}"
        )));
    }
    let ended = |py: Python<'_>| -> PyResult<T> {
        // The worker always sends before it ends; a closed channel means it panicked.
        match py.detach(|| recv(None)) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(raise(py, &error, files)),
            Err(_) => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the profkit call ended without an answer (a bug: please report it)",
            )),
        }
    };
    loop {
        match py.detach(|| recv(Some(POLL))) {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(error)) => return Err(raise(py, &error, files)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    control.cancel();
                    // Whatever the worker ends with, the interrupt is what the caller sees,
                    // once the temporary output is gone.
                    let _ = ended(py);
                    return Err(interrupt);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return ended(py),
        }
    }
}

/// A `profkit::Value` as Python objects (dicts keep the document's key order).
fn to_py(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Value::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Map(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any().unbind()
        }
        _ => py.None(),
    })
}

fn limits(max_inflated: Option<String>, paddle_bytes_per_message: Option<u64>) -> Limits {
    Limits::new(max_inflated, paddle_bytes_per_message)
}

/// `profkit inspect --json`: the summary as a dict.
#[pyfunction]
#[pyo3(signature = (path, format=None, graph=None, max_planes=None, max_inflated=None, paddle_bytes_per_message=None))]
fn inspect(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    graph: Option<PathBuf>,
    max_planes: Option<usize>,
    max_inflated: Option<String>,
    paddle_bytes_per_message: Option<u64>,
) -> PyResult<Py<PyAny>> {
    let files: Vec<PathBuf> = std::iter::once(path.clone()).chain(graph.clone()).collect();
    let options = api::InspectOptions::new(format, graph, max_planes);
    let limits = limits(max_inflated, paddle_bytes_per_message);
    let doc = call(py, &files, move |control| {
        api::inspect(&path, &options, &limits, control)
    })?;
    to_py(py, &doc)
}

/// `profkit validate --json`: the document of problems as a dict.
#[pyfunction]
#[pyo3(signature = (path, format=None, graph=None, max_problems=None, max_inflated=None, paddle_bytes_per_message=None))]
fn validate(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    graph: Option<PathBuf>,
    max_problems: Option<usize>,
    max_inflated: Option<String>,
    paddle_bytes_per_message: Option<u64>,
) -> PyResult<Py<PyAny>> {
    let files: Vec<PathBuf> = std::iter::once(path.clone()).chain(graph.clone()).collect();
    let options = api::ValidateOptions::new(format, graph, max_problems);
    let limits = limits(max_inflated, paddle_bytes_per_message);
    let doc = call(py, &files, move |control| {
        api::validate(&path, &options, &limits, control)
    })?;
    to_py(py, &doc)
}

/// `profkit report`: the text, or with `json` the tables as a dict.
#[pyfunction]
#[pyo3(signature = (path, format=None, legacy=false, sort=None, place=None, sorted_by=None, op_detail=true, thread_sep=false, time_unit=None, json=false, max_inflated=None, paddle_bytes_per_message=None, style=None, row_limit=None, group_by_input_shape=false, group_by_stack_n=None, group_by_overload_name=false, include_python_functions=false, top_level_events_only=false, header=None, max_name_column_width=None, max_shapes_column_width=None, max_src_column_width=None))]
#[allow(clippy::too_many_arguments)]
fn report(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    legacy: bool,
    sort: Option<String>,
    place: Option<String>,
    sorted_by: Option<String>,
    op_detail: bool,
    thread_sep: bool,
    time_unit: Option<String>,
    json: bool,
    max_inflated: Option<String>,
    paddle_bytes_per_message: Option<u64>,
    style: Option<String>,
    row_limit: Option<i64>,
    group_by_input_shape: bool,
    group_by_stack_n: Option<u32>,
    group_by_overload_name: bool,
    include_python_functions: bool,
    top_level_events_only: bool,
    header: Option<String>,
    max_name_column_width: Option<u32>,
    max_shapes_column_width: Option<u32>,
    max_src_column_width: Option<u32>,
) -> PyResult<Py<PyAny>> {
    let mut options = api::ReportOptions::new();
    options.group_by_overload_name = group_by_overload_name;
    options.include_python_functions = include_python_functions;
    options.top_level_events_only = top_level_events_only;
    options.header = header;
    options.max_name_column_width = max_name_column_width;
    options.max_shapes_column_width = max_shapes_column_width;
    options.max_src_column_width = max_src_column_width;
    options.style = style;
    options.row_limit = row_limit;
    options.group_by_input_shape = group_by_input_shape;
    options.group_by_stack_n = group_by_stack_n;
    options.format = format;
    options.legacy = legacy;
    options.sort = sort;
    options.place = place;
    options.sorted_by = sorted_by;
    options.no_op_detail = !op_detail;
    options.thread_sep = thread_sep;
    options.time_unit = time_unit;
    options.json = json;
    let limits = limits(max_inflated, paddle_bytes_per_message);
    let files = vec![path.clone()];
    let report = call(py, &files, move |control| {
        api::report(&path, &options, &limits, control)
    })?;
    match report {
        api::Report::Data(doc) => to_py(py, &doc),
        api::Report::Text(text) => Ok(text.into_pyobject(py)?.into_any().unbind()),
        _ => Ok(py.None()),
    }
}

/// `profkit convert IN... OUT`: the warnings, as `NAME: warning: MESSAGE`.
#[pyfunction]
#[pyo3(signature = (inputs, out, to=None, format=None, max_file_mb=None, overwrite=false, layout=None, hosts=Vec::new(), max_inflated=None, paddle_bytes_per_message=None))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out: PathBuf,
    to: Option<String>,
    format: Option<String>,
    max_file_mb: Option<f64>,
    overwrite: bool,
    layout: Option<String>,
    hosts: Vec<String>,
    max_inflated: Option<String>,
    paddle_bytes_per_message: Option<u64>,
) -> PyResult<Vec<String>> {
    let mut options = api::ConvertOptions::new();
    options.to = to;
    options.format = format;
    options.max_file_mb = max_file_mb;
    options.overwrite = overwrite;
    options.layout = layout;
    options.hosts = hosts;
    let limits = limits(max_inflated, paddle_bytes_per_message);
    let files: Vec<PathBuf> = inputs.iter().cloned().chain([out.clone()]).collect();
    call(py, &files, move |control| {
        api::convert(&inputs, &out, &options, &limits, control)
    })
}

/// `profkit merge IN... OUT`: the warnings.
#[pyfunction]
#[pyo3(signature = (inputs, out, hosts=Vec::new(), max_inflated=None))]
fn merge(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out: PathBuf,
    hosts: Vec<String>,
    max_inflated: Option<String>,
) -> PyResult<Vec<String>> {
    let limits = limits(max_inflated, None);
    let files: Vec<PathBuf> = inputs.iter().cloned().chain([out.clone()]).collect();
    call(py, &files, move |control| {
        api::merge(&inputs, &out, &hosts, &limits, control)
    })
}

/// `profkit hta ANALYSIS TRACE... --json`: the analysis' document.
#[pyfunction]
#[pyo3(signature = (analysis, traces, max_inflated=None, include_memory_events=true, use_gpu_annotation=true, max_queue_length=None))]
fn hta(
    py: Python<'_>,
    analysis: String,
    traces: Vec<PathBuf>,
    max_inflated: Option<String>,
    include_memory_events: bool,
    use_gpu_annotation: bool,
    max_queue_length: Option<i64>,
) -> PyResult<Py<PyAny>> {
    let limits = limits(max_inflated, None);
    let files = traces.clone();
    let mut options = api::HtaOptions::new();
    options.no_memory_events = !include_memory_events;
    options.cpu_annotations = !use_gpu_annotation;
    options.max_queue_length = max_queue_length;
    let doc = call(py, &files, move |control| {
        api::hta_with(&analysis, &traces, &options, &limits, control)
    })?;
    to_py(py, &doc)
}

/// `profkit xprof TOOL IN...` (`--list` when `tool` is None; op_profile's `--group-by`): xprof's
/// text for the tool, and the notes naming what is not reproduced.
#[pyfunction]
#[pyo3(signature = (tool, inputs, max_inflated=None, group_by=None, module=None, memory_space=None))]
fn xprof(
    py: Python<'_>,
    tool: Option<String>,
    inputs: Vec<PathBuf>,
    max_inflated: Option<String>,
    group_by: Option<String>,
    module: Option<String>,
    memory_space: Option<i64>,
) -> PyResult<(String, Vec<String>)> {
    let limits = limits(max_inflated, None);
    let files = inputs.clone();
    let mut options = api::XprofOptions::new();
    options.group_by = group_by;
    options.module = module;
    options.memory_space = memory_space;
    call(py, &files, move |control| {
        api::xprof_with(tool.as_deref(), &inputs, &options, &limits, control)
    })
}

/// One of the tables of xprof's OpStats (`op_metrics`, `steps`, `kernels`, `hlo_ops`) of
/// XSpaces, one host each (`hosts[i]`, else the file's name as xprof names hosts), as the
/// `--to parquet` datasets hold it, built in-process without the GIL.
#[pyfunction]
#[pyo3(signature = (paths, hosts=Vec::new(), table="op_metrics".to_owned()))]
fn op_metrics(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    hosts: Vec<String>,
    table: String,
) -> PyResult<Py<PyAny>> {
    type Batch =
        fn(&str, &profkit_xprof::proto::OpStats) -> profkit_arrow::Result<arrow_array::RecordBatch>;
    let (schema, batch): (_, Batch) = match table.as_str() {
        "op_metrics" => (
            profkit_arrow::op_metrics::schema(),
            profkit_arrow::op_metrics::batch,
        ),
        "steps" => (profkit_arrow::steps::schema(), profkit_arrow::steps::batch),
        "kernels" => (
            profkit_arrow::kernels::schema(),
            profkit_arrow::kernels::batch,
        ),
        "hlo_ops" => (
            profkit_arrow::hlo_ops::schema(),
            profkit_arrow::hlo_ops::batch,
        ),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "no OpStats table {other:?}: op_metrics, steps, kernels or hlo_ops"
            )));
        }
    };
    // The parts of OpStats the table reads.
    let parts = profkit_xprof::op_stats::Parts::for_table(&table);
    let files = paths.clone();
    let batches = call(py, &files, move |control| {
        let mut batches = Vec::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            if control.is_cancelled() {
                return Err(api::Error {
                    kind: api::ErrorKind::Cancelled,
                    message: "cancelled by the caller".into(),
                });
            }
            let input = |e: &dyn std::fmt::Display| api::Error {
                kind: api::ErrorKind::Input,
                message: format!("{}: {e}", path.display()),
            };
            let host = hosts.get(i).cloned().unwrap_or_else(|| {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                name.strip_suffix(".gz")
                    .unwrap_or(&name)
                    .strip_suffix(".xplane.pb")
                    .map(str::to_owned)
                    .unwrap_or_else(|| name.split('.').next().unwrap_or_default().to_owned())
            });
            let file = std::fs::File::open(path).map_err(|e| input(&e))?;
            // Read so that the host threads' plane can be let go of while grouping.
            let space = profkit_xprof::op_stats::read_seekable_for(
                std::io::BufReader::with_capacity(1 << 16, file),
                profkit_xplane::ReadOptions::default(),
                parts,
            )
            .map_err(|e| input(&e))?;
            let built = profkit_xprof::op_stats::build_for(vec![space], &[host.as_str()], parts);
            batches.push(batch(&host, &built.op_stats).map_err(|e| input(&e))?);
        }
        Ok(batches)
    })?;
    crate::table(py, schema, batches)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(op_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(hta, m)?)?;
    m.add_function(wrap_pyfunction!(xprof, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    Ok(())
}
