"""profkit: read, check and convert the files of machine-learning profilers.

Reads TensorFlow/XLA XSpaces (``.xplane.pb``), Chrome and Kineto trace JSON, PaddlePaddle
``Profile`` and node-tree protobufs, Graphcore Poplar profiles and X-DeepLearning traces.

- :func:`inspect`, :func:`validate`, :func:`convert`, :func:`merge` and :func:`report` do what
  the ``profkit`` command's subcommands of the same names do, and give their results as data.
- :func:`events`, :func:`planes`, :func:`lines`, :func:`metadata`, :func:`tables` and
  :func:`xdl_records` give the tables of docs/scale.md as ``pyarrow.Table`` (built in Rust and
  handed over through the Arrow C data interface, so ``.to_pandas()`` or
  ``polars.from_arrow(...)`` is one call); :func:`stream_events` yields ``pyarrow.RecordBatch``
  one at a time for files larger than memory.

Reads and conversions run without the GIL. Failures raise :class:`ProfkitError` subclasses that
carry the file, byte offset, JSON path and field path. ``progress=`` takes a callable
``(done_bytes, total_bytes)``, or ``True`` for a ``tqdm`` bar when tqdm is installed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Union,
)

from . import _native
from ._errors import (
    ConversionError,
    DecodeError,
    LimitError,
    ProfkitError,
    ProfkitIOError,
    TruncatedError,
    UnknownFormatError,
    UsageError,
)

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow

__all__ = [
    "inspect",
    "validate",
    "convert",
    "merge",
    "report",
    "hta",
    "xprof",
    "op_stats",
    "events",
    "planes",
    "lines",
    "metadata",
    "tables",
    "stream_events",
    "xdl_records",
    "formats",
    "Problem",
    "Problems",
    "Tables",
    "EventStream",
    "ProfkitError",
    "ProfkitIOError",
    "UnknownFormatError",
    "DecodeError",
    "TruncatedError",
    "LimitError",
    "UsageError",
    "ConversionError",
    "SCHEMA_VERSION",
    "DEFAULT_LAYOUT",
    "__version__",
]

__version__: str = _native.__version__
#: The version of the tables' columns (docs/scale.md); also in each schema's metadata.
SCHEMA_VERSION: str = _native.SCHEMA_VERSION

PathLike = Union[str, "os.PathLike[str]"]
Progress = Union[None, bool, Callable[[int, int], Any]]

#: Rows per record batch of :func:`stream_events` unless ``batch_rows=`` says otherwise.
DEFAULT_BATCH_ROWS = 65536
#: Rows per record batch of the whole tables (:func:`events`, :func:`tables`): the table is in
#: memory anyway, and fewer chunks make ``to_pandas()`` faster (one dictionary per column to
#: turn into a categorical instead of one per chunk).
TABLE_BATCH_ROWS = 1 << 20
#: How the events table is laid out unless ``layout=`` says otherwise: ``"frame"`` (exact
#: ``int64`` times and ``stats`` as JSON text, which ``to_pandas()`` turns into NumPy and Arrow
#: string columns without a Python object per row) or ``"parquet"`` (the Parquet dataset's
#: columns: ``start_ps`` as ``decimal128(38, 0)``, ``stats`` as a map). See docs/python.md.
DEFAULT_LAYOUT = "frame"


# ---------------------------------------------------------------------------------------------
# The commands, run in this process: inspect, validate, convert, merge, report.
#
# Each calls the CLI library (``profkit::api``) through the native module: the work runs on a
# thread of its own without the GIL, the answer comes back as Python objects built from the
# command's document (never its printed text parsed back), and an interrupt (Ctrl-C, or a
# notebook's interrupt) cancels it: its temporary output is removed before ``KeyboardInterrupt``
# is raised.


def _count(name: str, value: Optional[int]) -> Optional[int]:
    """A non-negative whole number argument (``None`` kept); a :class:`UsageError` otherwise."""
    if value is None:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be a whole number, not {value!r}") from None
    if number < 0:
        raise UsageError(f"{name} must not be negative, not {number}")
    return number


def _inflated(max_inflated: Optional[str]) -> Optional[str]:
    return None if max_inflated is None else str(max_inflated)


def _path(path: Optional[PathLike]) -> Optional[str]:
    return None if path is None else os.fspath(path)


def inspect(
    path: PathLike,
    *,
    format: Optional[str] = None,
    graph: Optional[PathLike] = None,
    max_planes: Optional[int] = 10_000,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> Dict[str, Any]:
    """The summary of a profile, as ``profkit inspect --json`` prints it.

    For an XSpace: ``{"file", "format", "summary": {"planes": [...], "total_lines",
    "total_events", "hostnames", ...}}``; the other formats give their own summaries (see
    docs/cli.md).

    Args:
        path: the file (or an XDL dataset directory or prefix).
        format: the format, when detection from the content is not wanted (``"xspace"``,
            ``"chrome"``, ``"paddle"``, ``"paddle-trace"``, ``"poplar"``, ``"xdl"``).
        graph: Poplar: the graph profile an execution profile belongs to.
        max_planes: XSpace: list at most this many planes (``None``: every one); the summary's
            totals count every plane, and ``planes_not_listed`` the ones left out.
        max_inflated: what a gzip-compressed input may decompress to (``"2G"``, ``"64x"``,
            ``"unlimited"``; default 16 times its size plus 4 MiB, or ``PROFKIT_MAX_INFLATED``).
        paddle_bytes_per_message: Paddle's message budget, one message per this many bytes
            (default 20, or ``PROFKIT_PADDLE_BYTES_PER_MESSAGE``; 0 turns it off).

    Raises:
        ProfkitError: the file cannot be read (the subclass and attributes say why and where).
    """
    return _native.inspect(
        os.fspath(path),
        format,
        _path(graph),
        _count("max_planes", max_planes),
        _inflated(max_inflated),
        _count("paddle_bytes_per_message", paddle_bytes_per_message),
    )


@dataclass(frozen=True)
class Problem:
    """One problem :func:`validate` found.

    Attributes:
        kind: the kind of problem (``"dangling-metadata-id"``, ``"overlap"``, ...).
        message: what is wrong.
        location: where: a field path (``planes[0].lines[1].events[3]``), a JSON path, or
            ``file#frame@offset`` for XDL traces.
        severity: ``"error"`` or ``"warning"``.
        details: the problem as ``profkit validate --json`` prints it.
    """

    kind: str
    message: str
    location: str
    severity: str = "error"
    details: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


def _problems(doc: Any) -> Iterator[Problem]:
    """Every problem object in a ``validate --json`` document, wherever the format nests it."""
    if isinstance(doc, dict):
        if "kind" in doc and "message" in doc:
            location = doc.get("path")
            if location is None:
                parts = [str(doc.get("file") or "")]
                if doc.get("frame") is not None:
                    parts.append(f"#{doc['frame']}")
                if doc.get("offset") is not None:
                    parts.append(f"@{doc['offset']}")
                location = "".join(parts)
            yield Problem(
                kind=str(doc["kind"]),
                message=str(doc["message"]),
                location=str(location),
                severity=str(doc.get("severity", "error")),
                details=doc,
            )
            return
        for value in doc.values():
            yield from _problems(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _problems(value)


class Problems(List[Problem]):
    """The problems :func:`validate` lists; ``not_listed`` counts those past ``max_problems``."""

    not_listed: int = 0


def validate(
    path: PathLike,
    *,
    format: Optional[str] = None,
    graph: Optional[PathLike] = None,
    max_problems: Optional[int] = 10_000,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> "Problems":
    """Checks a profile; the problems found (empty when it is valid).

    A file that cannot be read at all raises instead (the problems are of files that decode).
    At most ``max_problems`` problems are listed (``None``: every one; a damaged file can have
    one per event), the rest counted in the result's ``not_listed``. ``max_inflated`` and
    ``paddle_bytes_per_message`` are :func:`inspect`'s.

    Raises:
        ProfkitError: the file cannot be read.
    """
    doc = _native.validate(
        os.fspath(path),
        format,
        _path(graph),
        _count("max_problems", max_problems),
        _inflated(max_inflated),
        _count("paddle_bytes_per_message", paddle_bytes_per_message),
    )
    found = Problems(_problems(doc))
    found.not_listed = int(doc.get("problems_not_listed") or 0)
    return found


def _progress_callback(progress: Progress, total_hint: int = 0) -> tuple:
    """A callable ``(done, total)`` for ``progress=``, and a function that closes it."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, lambda: None
    bar = tqdm(total=total_hint or None, unit="B", unit_scale=True, unit_divisor=1024)

    def update(done: int, total: int) -> None:
        if total and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    return update, bar.close


def convert(
    inputs: Union[PathLike, Sequence[PathLike]],
    out: PathLike,
    to: Optional[str] = None,
    *,
    format: Optional[str] = None,
    max_file_mb: Optional[float] = None,
    overwrite: bool = False,
    progress: Progress = None,
    layout: Optional[str] = None,
    hosts: Optional[Sequence[str]] = None,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> List[str]:
    """Converts profiles, as ``profkit convert IN... OUT`` does.

    Args:
        inputs: one input or several (several XSpaces are merged, one per host; several Paddle
            profiles make one timeline; with ``to="parquet"`` each is a host of the dataset).
        out: the output file (or directory, for ``xdl`` and ``parquet``).
        to: ``"chrome"``, ``"xspace"``, ``"paddle-timeline"``, ``"xdl"`` or ``"parquet"``;
            by default from ``out``'s extension (``.json`` chrome, ``.pb`` xspace).
        format: the inputs' format, when detection is not wanted.
        max_file_mb: XDL output: start a new data file at this size.
        overwrite: replace what is already in the output (datasets, hosts).
        progress: a callable ``(inputs_done, inputs_total)`` called as each input is finished,
            or ``True`` for a tqdm bar.
        layout: Chrome output: ``"xprof"`` (xprof's trace viewer JSON exactly) or
            ``"trace-event"`` (the Trace Event Format's own members: flow events, ``cat``, typed
            args, counter events, as PyTorch's tools read them); by default ``xprof`` for an
            XSpace unless profkit made it from a Chrome trace, ``trace-event`` for other inputs.
        hosts: ``to="parquet"`` and several XSpaces merged: each input's host, one per input in
            their order (``--host``); by default an XSpace's recorded ``hostnames`` when its file
            name says nothing (``host.xplane.pb``), else the file's name.
        max_inflated, paddle_bytes_per_message: the limits, as :func:`inspect` takes them.

    A failure or an interrupt (``KeyboardInterrupt``) leaves ``out`` as it was, and no
    temporary file or directory behind.

    Returns:
        The warnings the conversion printed (events left out, unmatched pairs).

    Raises:
        ProfkitError: an input cannot be read or the output cannot be written.
    """
    paths = [inputs] if isinstance(inputs, (str, bytes, os.PathLike)) else list(inputs)
    callback, close = _progress_callback(progress, len(paths))
    try:
        if callback:
            callback(0, len(paths))
        warnings = _native.convert(
            [os.fspath(p) for p in paths],
            os.fspath(out),
            to or None,
            format,
            None if max_file_mb is None else float(max_file_mb),
            bool(overwrite),
            layout or None,
            [str(h) for h in hosts or []],
            _inflated(max_inflated),
            _count("paddle_bytes_per_message", paddle_bytes_per_message),
        )
        if callback:
            callback(len(paths), len(paths))
    finally:
        close()
    return list(warnings)


def merge(
    inputs: Sequence[PathLike],
    out: PathLike,
    *,
    hosts: Optional[Sequence[str]] = None,
    max_inflated: Optional[str] = None,
) -> None:
    """Merges the XSpaces of several hosts into one file, as ``profkit merge`` does; ``hosts``
    names each input's host (one per input, in their order, ``--host``) whatever the spaces
    record."""
    _native.merge(
        [os.fspath(p) for p in inputs],
        os.fspath(out),
        [str(h) for h in hosts or []],
        _inflated(max_inflated),
    )


def report(
    path: PathLike,
    *,
    sorted_by: Optional[str] = None,
    op_detail: bool = True,
    thread_sep: bool = False,
    time_unit: Optional[str] = None,
    legacy: bool = False,
    sort: Optional[str] = None,
    place: Optional[str] = None,
    as_data: bool = False,
    format: Optional[str] = None,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
    style: Optional[str] = None,
    row_limit: Optional[int] = None,
    group_by_input_shape: bool = False,
    group_by_stack_n: int = 0,
    group_by_overload_name: bool = False,
    include_python_functions: bool = False,
    top_level_events_only: bool = False,
    header: Optional[str] = None,
    max_name_column_width: Optional[int] = None,
    max_shapes_column_width: Optional[int] = None,
    max_src_column_width: Optional[int] = None,
) -> Union[str, Dict[str, Any]]:
    """The tables PaddlePaddle's ``Profiler.summary()`` prints, of a profile (Paddle's node trees,
    an XSpace, a Chrome trace), as ``profkit report`` prints them; a legacy Paddle ``Profile``
    (or ``legacy=True``) gets Paddle's legacy profiling report instead.

    Args:
        sorted_by: the summary's sort key, one of Paddle's ``SortedKeys`` (``"CPUTotal"``, the
            default, ``"CPUAvg"``, ``"CPUMax"``, ``"CPUMin"``, ``"GPUTotal"``, ``"GPUAvg"``,
            ``"GPUMax"``, ``"GPUMin"``), or ``"CPUSelf"`` (``"self"``): the calls' self time.
        op_detail: the Operator Summary's inner rows (``summary(op_detail=...)``).
        thread_sep: a table per thread (``summary(thread_sep=...)``).
        time_unit: ``"s"``, ``"ms"``, ``"us"`` or ``"ns"`` (default: ``"us"`` for XSpaces,
            ``"ms"`` for the other inputs, as Paddle prints them).
        legacy: the legacy report, for any input.
        sort: the legacy report's order among siblings (``"calls"``, ``"total"``, ``"max"``,
            ``"min"``, ``"ave"``); implies ``legacy``.
        place: what the legacy report's times measure (``"cpu"``, ``"cuda"``, ``"all"``); implies
            ``legacy``.
        as_data: the tables as data (``profkit report --json``) instead of text.
        style: ``"torch"`` for the table torch's ``prof.key_averages().table()`` prints (the
            default for PyTorch profiler traces; ``sorted_by`` then takes torch's keys, such as
            ``"self_cpu_time_total"``), ``"paddle"`` for Paddle's tables.
        row_limit: torch's ``row_limit`` (default 100, -1 for all).
        group_by_input_shape: torch's ``group_by_input_shape``.
        group_by_stack_n: torch's ``group_by_stack_n``.
        group_by_overload_name: torch's ``group_by_overload_name`` (the trace names overloads
            when the run set ``capture_overload_names``).
        include_python_functions: torch's ``include_python_functions``.
        top_level_events_only: torch's ``top_level_events_only``.
        header: torch's ``header``.
        max_name_column_width: torch's ``max_name_column_width`` (default 55).
        max_shapes_column_width: torch's ``max_shapes_column_width`` (default 80).
        max_src_column_width: torch's ``max_src_column_width`` (default 75).

    Returns:
        The text, or with ``as_data`` the tables as a dict.
    """
    return _native.report(
        os.fspath(path),
        format,
        bool(legacy),
        sort or None,
        place or None,
        sorted_by or None,
        bool(op_detail),
        bool(thread_sep),
        time_unit or None,
        bool(as_data),
        _inflated(max_inflated),
        _count("paddle_bytes_per_message", paddle_bytes_per_message),
        style or None,
        None if row_limit is None else int(row_limit),
        bool(group_by_input_shape),
        int(group_by_stack_n) or None,
        bool(group_by_overload_name),
        bool(include_python_functions),
        bool(top_level_events_only),
        None if header is None else str(header),
        _count("max_name_column_width", max_name_column_width),
        _count("max_shapes_column_width", max_shapes_column_width),
        _count("max_src_column_width", max_src_column_width),
    )


def hta(
    analysis: str,
    paths: Sequence[PathLike],
    *,
    as_arrow: bool = False,
    max_inflated: Optional[str] = None,
    include_memory_events: bool = True,
    use_gpu_annotation: bool = True,
    max_queue_length: Optional[int] = None,
) -> Dict[str, Any]:
    """HolisticTraceAnalysis 0.5.0's analysis ``analysis`` (``"temporal-breakdown"``,
    ``"kernel-breakdown"``, ``"idle-time-breakdown"``, ``"comm-comp-overlap"``,
    ``"kernel-launch-stats"``, ``"user-annotation-breakdown"``, ``"profiler-steps"``,
    ``"queue-length-summary"``,
    ``"queue-length-time-series"``, ``"queue-full-time"``, ``"memory-bw-summary"``,
    ``"memory-bw-time-series"``) of
    PyTorch profiler traces, one per rank, as ``profkit hta --json`` gives it: ``{"frames": {name:
    [records]}, "ranks": [...], "notes": [...]}``, each frame's records under HTA's column names
    (``pandas.DataFrame(records)`` is HTA's frame; a summary's statistics are columns beside its
    index's levels). ``include_memory_events`` (kernel launch statistics), ``use_gpu_annotation``
    (user annotation breakdown) and ``max_queue_length`` (queue full time, 1024 by default) are
    HTA's arguments of those names. With
    ``as_arrow``, each frame is a ``pyarrow.Table`` instead. Runs in-process.
    """
    result = _native.hta(
        str(analysis),
        [os.fspath(p) for p in paths],
        _inflated(max_inflated),
        bool(include_memory_events),
        bool(use_gpu_annotation),
        None if max_queue_length is None else int(max_queue_length),
    )
    if as_arrow:
        import pyarrow

        result["frames"] = {
            name: pyarrow.Table.from_pylist(records) for name, records in result["frames"].items()
        }
    return result


def op_stats(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    hosts: Sequence[str] = (),
    table: str = "op_metrics",
) -> "pyarrow.Table":
    """A table of xprof's OpStats of XSpaces (each a host; ``hosts`` names them, else the files'
    names as xprof names hosts), as ``--to parquet`` datasets hold it, one ``pyarrow.Table`` for
    all hosts (see docs/scale.md for the columns):

    - ``"op_metrics"`` (the default): a row per op of each host's OpStats, ``side`` ``"host"``
      (framework ops on the host threads) or ``"device"``, times in picoseconds summed over the
      op's occurrences, the idle time as the op named ``IDLE``;
    - ``"steps"``: a row per step per core, its time by kind;
    - ``"kernels"``: a row per GPU kernel of the kernel stats, the rows of the ``kernel_stats``
      tool, durations in nanoseconds;
    - ``"hlo_ops"``: a row per HLO op of the device ops, the rows of the ``hlo_stats`` tool, times
      in picoseconds, FLOP rates in GFLOP/s and bandwidths in GiB/s.

    Built in-process, the GIL released.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return _native.op_metrics([os.fspath(p) for p in paths], [str(h) for h in hosts], str(table))


def xprof(
    paths: Union[PathLike, Sequence[PathLike]],
    tool: Optional[str] = None,
    *,
    raw: bool = False,
    max_inflated: Optional[str] = None,
    group_by: Optional[str] = None,
    module: Optional[str] = None,
    memory_space: Optional[int] = None,
) -> Any:
    """What xprof's tool ``tool`` shows for XSpaces (several paths: the hosts of one run), as
    ``profkit xprof TOOL`` computes it without xprof: xprof 2.24.2's JSON, parsed (``raw``: the
    text itself, byte for byte xprof's). ``framework_op_stats`` is two DataTables (with and without
    the idle time), ``{"cols", "rows", "p"}`` each; ``overview_page`` seven parts and
    ``input_pipeline_analyzer`` five DataTables; ``kernel_stats`` and ``hlo_stats`` one
    DataTable, ``roofline_model`` two (records, diagnostics); ``pod_viewer`` and
    ``memory_profile`` protobuf JSON; ``op_profile`` protobuf JSON grouped by ``group_by``
    (``"program"``, the default, ``"category"``, ``"provenance"``); ``memory_viewer`` protobuf
    JSON of the program ``module`` (``"<module name>(<program id>)"``) in ``memory_space``
    (default 0). The kernel stats and HLO op stats as typed tables: :func:`op_stats` with
    ``table="kernels"`` or ``"hlo_ops"``.
    Without ``tool``, the list of tools xprof offers for the profile. What is not reproduced is
    named in a ``UserWarning``.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    text, notes = _native.xprof(
        tool,
        [os.fspath(p) for p in paths],
        _inflated(max_inflated),
        None if group_by is None else str(group_by),
        module,
        None if memory_space is None else int(memory_space),
    )
    if notes:
        import warnings

        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
    if raw:
        return text
    return json.loads(text) if text.strip() else None


def formats() -> List[str]:
    """The formats :func:`events` and friends read (``format=`` names one of them)."""
    return list(_native.formats())


# ---------------------------------------------------------------------------------------------
# Arrow tables, built in Rust.


@dataclass
class Tables:
    """Every table of one input (see docs/scale.md for the columns).

    Attributes:
        events: one row per event (``None`` when not asked for).
        planes: one row per plane.
        lines: one row per line.
        metadata: key-value facts (schema version, source format and files, hostnames,
            recorded errors and warnings).
        format: the format read.
        warnings: what the conversion to events noted (events left out, unmatched pairs).
    """

    events: Optional["pyarrow.Table"]
    planes: "pyarrow.Table"
    lines: "pyarrow.Table"
    metadata: "pyarrow.Table"
    format: str
    warnings: List[str]


def _file_size(path: PathLike) -> int:
    try:
        return os.path.getsize(path) if os.path.isfile(path) else 0
    except OSError:
        return 0


def tables(
    path: PathLike,
    *,
    format: Optional[str] = None,
    host: Optional[str] = None,
    batch_rows: int = TABLE_BATCH_ROWS,
    events: bool = True,
    progress: Progress = None,
    layout: str = DEFAULT_LAYOUT,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> Tables:
    """Every table of an input, read in one pass.

    Args:
        path: the file (or an XDL dataset directory or prefix).
        format: the format, when detection from the content is not wanted.
        host: the ``host`` column (default: from the file name, as ``--to parquet`` names hosts).
        batch_rows: rows per record batch of the events table.
        events: ``False`` leaves the events table out (the pass still reads every event).
        progress: a callable ``(bytes_read, file_size)``, or ``True`` for a tqdm bar.
        layout: the events table's columns: ``"frame"`` (the default: ``timestamp_ns`` and
            ``offset_ps`` as ``int64``, ``stats`` as the text of a JSON object) or ``"parquet"``
            (exactly the Parquet dataset's columns: ``start_ps`` as ``decimal128(38, 0)``,
            ``stats`` as a map). Both hold the same values exactly; see docs/python.md.
        max_inflated, paddle_bytes_per_message: the limits, as :func:`inspect` takes them (a
            gzip-compressed input is read as it is decompressed, as the command line reads it).

    Raises:
        ProfkitError: the input cannot be read (subclass and attributes say why and where).
    """
    import pyarrow  # noqa: F401  (the tables are pyarrow's: fail early and clearly without it)

    callback, close = _progress_callback(progress, _file_size(path))
    try:
        read = _native.read_tables(
            os.fspath(path),
            format,
            host,
            batch_rows,
            events,
            callback,
            layout,
            None if max_inflated is None else str(max_inflated),
            paddle_bytes_per_message,
        )
    finally:
        close()
    return Tables(
        events=read.get("events"),
        planes=read["planes"],
        lines=read["lines"],
        metadata=read["metadata"],
        format=read["format"],
        warnings=list(read["warnings"]),
    )


def events(
    path: PathLike,
    *,
    format: Optional[str] = None,
    host: Optional[str] = None,
    batch_rows: int = TABLE_BATCH_ROWS,
    progress: Progress = None,
    layout: str = DEFAULT_LAYOUT,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> "pyarrow.Table":
    """The events of a profile as a ``pyarrow.Table``: one row per event with its host, plane,
    line, name, start, duration (``duration_ps``), the common stats as typed columns and every
    stat in ``stats``.

    The start is exact: by default (``layout="frame"``) as the XSpace's own pair, the line's
    ``timestamp_ns`` and the event's ``offset_ps`` (both ``int64``; the start in picoseconds is
    ``timestamp_ns * 1000 + offset_ps``, none for an aggregated event, whose ``num_occurrences``
    is set), and ``stats`` is the text of a JSON object of stat names and value texts, so that
    ``to_pandas()`` makes no Python object per row. ``layout="parquet"`` gives the Parquet
    dataset's columns instead (``start_ps`` as ``decimal128(38, 0)``, ``stats`` as a map).

    Every format profkit reads works: XSpaces are read plane by plane, the others through their
    conversion to an XSpace. See :func:`tables` for the arguments; :func:`stream_events` for
    files larger than memory.
    """
    return tables(
        path,
        format=format,
        host=host,
        batch_rows=batch_rows,
        progress=progress,
        layout=layout,
        max_inflated=max_inflated,
        paddle_bytes_per_message=paddle_bytes_per_message,
    ).events


def planes(path: PathLike, *, format: Optional[str] = None, host: Optional[str] = None, progress: Progress = None) -> "pyarrow.Table":
    """The planes table of a profile (one row per plane: events, lines, time span)."""
    return tables(path, format=format, host=host, events=False, progress=progress).planes


def lines(path: PathLike, *, format: Optional[str] = None, host: Optional[str] = None, progress: Progress = None) -> "pyarrow.Table":
    """The lines table of a profile (one row per line)."""
    return tables(path, format=format, host=host, events=False, progress=progress).lines


def metadata(path: PathLike, *, format: Optional[str] = None, host: Optional[str] = None, progress: Progress = None) -> "pyarrow.Table":
    """The metadata table of a profile (key-value facts)."""
    return tables(path, format=format, host=host, events=False, progress=progress).metadata


def xdl_records(path: PathLike, *, host: Optional[str] = None, batch_rows: int = DEFAULT_BATCH_ROWS) -> Dict[str, "pyarrow.Table"]:
    """The records of the XDL datasets at ``path`` (a directory, prefix or data file): one
    ``pyarrow.Table`` per dataset, keyed by its id (``phase.name.rank``), one column per scalar
    key."""
    import pyarrow  # noqa: F401

    return dict(_native.xdl_records(os.fspath(path), host, batch_rows))


class EventStream:
    """The events of a profile as ``pyarrow.RecordBatch``es, one at a time.

    Memory stays at one XSpace plane plus one batch whatever the file's size (other formats are
    converted in memory first). Iterate it; after the last batch, :meth:`side_tables` gives the
    planes, lines and metadata tables. Usable as a context manager (closes the file).
    """

    def __init__(
        self,
        path: PathLike,
        *,
        format: Optional[str] = None,
        host: Optional[str] = None,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        progress: Progress = None,
        layout: str = DEFAULT_LAYOUT,
        max_inflated: Optional[str] = None,
        paddle_bytes_per_message: Optional[int] = None,
    ) -> None:
        import pyarrow  # noqa: F401

        self._callback, self._close_progress = _progress_callback(progress, _file_size(path))
        self._inner = _native.EventStream(
            os.fspath(path),
            format,
            host,
            batch_rows,
            self._callback,
            layout,
            None if max_inflated is None else str(max_inflated),
            paddle_bytes_per_message,
        )

    @property
    def schema(self) -> "pyarrow.Schema":
        """The events table's schema."""
        return self._inner.schema

    @property
    def format(self) -> str:
        """The format read."""
        return self._inner.format

    @property
    def warnings(self) -> List[str]:
        """What the conversion to events noted."""
        return list(self._inner.warnings)

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> "pyarrow.RecordBatch":
        try:
            return next(self._inner)
        except StopIteration:
            self._close_progress()
            raise

    def side_tables(self) -> Dict[str, "pyarrow.Table"]:
        """``{"planes", "lines", "metadata"}`` tables, once every batch was read."""
        return dict(self._inner.side_tables())

    def read_all(self) -> "pyarrow.Table":
        """The remaining batches as one table."""
        import pyarrow

        return pyarrow.Table.from_batches(list(self), schema=self.schema)

    def close(self) -> None:
        """Closes the input."""
        self._inner.close()
        self._close_progress()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def stream_events(
    path: PathLike,
    *,
    format: Optional[str] = None,
    host: Optional[str] = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: Progress = None,
    layout: str = DEFAULT_LAYOUT,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> EventStream:
    """The events of a profile as a stream of ``pyarrow.RecordBatch`` (see :class:`EventStream`)
    for files larger than memory (``layout`` as :func:`events` says)::

        for batch in profkit.stream_events("big.xplane.pb", batch_rows=1_000_000):
            df = batch.to_pandas()
    """
    return EventStream(
        path,
        format=format,
        host=host,
        batch_rows=batch_rows,
        progress=progress,
        layout=layout,
        max_inflated=max_inflated,
        paddle_bytes_per_message=paddle_bytes_per_message,
    )
