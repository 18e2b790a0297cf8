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
import subprocess
import sys
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
    from_cli,
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
# The profkit command, run in a child process: inspect, validate, convert, merge, report.


def _run(args: List[str], files: Sequence[PathLike], ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess:
    """Runs ``profkit ARGS`` (this package's command, in a child process) and raises the
    :class:`ProfkitError` its failure message describes.

    An interrupt (``KeyboardInterrupt``, say Ctrl-C in a notebook, which reaches this process
    only) or any other exception while it runs ends the child with SIGTERM, on which it removes
    its temporary files and directories, and waits for it before passing the exception on: no
    ``OUT.profkit-PID.tmp`` is left behind."""
    child = subprocess.Popen(
        [sys.executable, "-m", "profkit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    # On an interrupt, `communicate` would first give the child a quarter of a second to end on
    # its own (as if the interrupt had reached it too), time in which a conversion can finish and
    # leave its output: stop it at once instead.
    child._sigint_wait_secs = 0
    try:
        stdout, stderr = child.communicate()
    except BaseException:
        _stop(child)
        raise
    done = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    if done.returncode not in ok:
        raise from_cli(done.stderr, done.returncode, [os.fspath(f) for f in files])
    return done


def _stop(child: subprocess.Popen) -> None:
    """Ends ``child`` so that it cleans up (SIGTERM), then for good should it not end."""
    try:
        child.terminate()
        child.wait(timeout=30)
    except BaseException:
        child.kill()
        child.wait()


def _json(text: str, files: Sequence[PathLike]) -> Any:
    """The JSON the command printed; a document too large for this process's memory is a
    :class:`LimitError`, not a bare ``MemoryError``."""
    try:
        return json.loads(text)
    except MemoryError:
        raise LimitError(
            "the command's JSON answer is too large for this process's memory",
            os.fspath(files[0]) if files else None,
        ) from None
    except ValueError as e:
        raise DecodeError(f"the command's JSON answer does not read: {e}", None) from None


def _limit_args(max_inflated: Optional[str], paddle_bytes_per_message: Optional[int]) -> List[str]:
    """The command line's options for the limits (each left to its environment variable or its
    default when ``None``)."""
    args: List[str] = []
    if max_inflated is not None:
        args += ["--max-inflated", str(max_inflated)]
    if paddle_bytes_per_message is not None:
        args += ["--paddle-bytes-per-message", str(int(paddle_bytes_per_message))]
    return args


def _format_args(format: Optional[str]) -> List[str]:
    return ["--from", format] if format else []


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
    args = ["inspect", "--json", *_format_args(format), os.fspath(path)]
    args += _limit_args(max_inflated, paddle_bytes_per_message)
    if max_planes is not None:
        args += ["--max-planes", str(int(max_planes))]
    if graph is not None:
        args += ["--graph", os.fspath(graph)]
    files = [path] + ([graph] if graph is not None else [])
    done = _run(args, files)
    return _json(done.stdout, files)


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
    args = ["validate", "--json", *_format_args(format), os.fspath(path)]
    args += _limit_args(max_inflated, paddle_bytes_per_message)
    if max_problems is not None:
        args += ["--max-problems", str(int(max_problems))]
    if graph is not None:
        args += ["--graph", os.fspath(graph)]
    done = _run(args, [path] + ([graph] if graph is not None else []), ok=(0, 1))
    if done.returncode == 1 and not done.stdout.strip():
        raise from_cli(done.stderr, 1, [path])
    doc = _json(done.stdout, [path])
    if isinstance(doc, dict) and "error" in doc:
        # The input broke off after some problems were written: it cannot be read.
        raise from_cli(done.stderr, 1, [path])
    found = Problems(_problems(doc))
    if isinstance(doc, dict):
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
    args = ["convert", *[os.fspath(p) for p in paths], os.fspath(out)]
    if to:
        args += ["--to", to]
    args += _format_args(format)
    if max_file_mb is not None:
        args += ["--max-file-mb", str(max_file_mb)]
    if overwrite:
        args.append("--overwrite")
    if layout:
        args += ["--layout", layout]
    for host in hosts or []:
        args += ["--host", host]
    args += _limit_args(max_inflated, paddle_bytes_per_message)
    callback, close = _progress_callback(progress, len(paths))
    try:
        if callback:
            callback(0, len(paths))
        done = _run(args, [*paths, out])
        if callback:
            callback(len(paths), len(paths))
    finally:
        close()
    return [line[len("profkit: "):] for line in done.stderr.splitlines() if ": warning: " in line]


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
    paths = list(inputs)
    args = ["merge", *[os.fspath(p) for p in paths], os.fspath(out)]
    for host in hosts or []:
        args += ["--host", host]
    _run(args + _limit_args(max_inflated, None), [*paths, out])


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

    Returns:
        The text, or with ``as_data`` the tables as a dict.
    """
    args = ["report", *_format_args(format), os.fspath(path)]
    args += _torch_args(style, row_limit, group_by_input_shape, group_by_stack_n)
    if legacy:
        args.append("--legacy")
    if sort:
        args += ["--sort", sort]
    if place:
        args += ["--place", place]
    if sorted_by:
        args += ["--sorted-by", sorted_by]
    if not op_detail:
        args.append("--no-op-detail")
    if thread_sep:
        args.append("--thread-sep")
    if time_unit:
        args += ["--time-unit", time_unit]
    if as_data:
        args.append("--json")
    args += _limit_args(max_inflated, paddle_bytes_per_message)
    done = _run(args, [path])
    return _json(done.stdout, [path]) if as_data else done.stdout


def hta(analysis: str, paths: Sequence[PathLike], *, as_arrow: bool = False) -> Dict[str, Any]:
    """HolisticTraceAnalysis 0.5.0's analysis ``analysis`` (``"temporal-breakdown"``,
    ``"kernel-breakdown"``, ``"idle-time-breakdown"``, ``"comm-comp-overlap"``,
    ``"kernel-launch-stats"``) of PyTorch profiler traces, one per rank, as ``profkit hta --json``
    gives it: ``{"frames": {name: [records]}, "ranks": [...], "notes": [...]}``, each frame's
    records under HTA's column names (``pandas.DataFrame(records)`` is HTA's frame). With
    ``as_arrow``, each frame is a ``pyarrow.Table`` instead.
    """
    paths = list(paths)
    done = _run(["hta", analysis, *map(os.fspath, paths), "--json"], paths)
    result = _json(done.stdout, paths)
    if as_arrow:
        import pyarrow

        result["frames"] = {
            name: pyarrow.Table.from_pylist(records) for name, records in result["frames"].items()
        }
    return result


def _torch_args(
    style: Optional[str], row_limit: Optional[int], by_shape: bool, stack_n: int
) -> List[str]:
    """``profkit report``'s options of torch's table (``--style torch``)."""
    args = ["--style", style] if style else []
    if row_limit is not None:
        args += ["--row-limit", str(row_limit)]
    if by_shape:
        args.append("--group-by-input-shape")
    if stack_n:
        args += ["--group-by-stack-n", str(stack_n)]
    return args


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
