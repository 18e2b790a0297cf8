"""Type stubs of ``profkit._native``, the Rust extension module (use the ``profkit`` API)."""

from typing import Tuple, Any, Callable, Dict, List, Literal, Optional

import pyarrow

__version__: str
SCHEMA_VERSION: str

_Progress = Optional[Callable[[int, int], Any]]

def read_tables(
    path: str,
    format: Optional[str] = None,
    host: Optional[str] = None,
    batch_rows: int = 65536,
    events: bool = True,
    progress: _Progress = None,
    layout: Literal["frame", "parquet"] = "frame",
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> Dict[str, Any]:
    """``{"events"?, "planes", "lines", "metadata": pyarrow.Table, "format": str,
    "warnings": list[str]}``; the GIL is released while reading. ``layout="frame"``: the events'
    ``timestamp_ns`` and ``offset_ps`` as int64 and ``stats`` as JSON text; ``"parquet"``: the
    Parquet dataset's columns (``start_ps`` decimal128, ``stats`` map)."""

def xdl_records(
    path: str, host: Optional[str] = None, batch_rows: int = 65536
) -> Dict[str, pyarrow.Table]:
    """The records of each XDL dataset at ``path``, keyed by dataset id."""

def run_cli(argv: List[str], self_command: Optional[List[str]] = None) -> int:
    """Runs the ``profkit`` command in this process; usage errors exit the process.
    ``self_command`` runs the command again (for ``plugin check``)."""

# The commands, run in this process on a worker thread (the GIL released; an interrupt cancels
# the call and removes its temporary output before KeyboardInterrupt is raised).

def inspect(
    path: str,
    format: Optional[str] = None,
    graph: Optional[str] = None,
    max_planes: Optional[int] = None,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> Dict[str, Any]:
    """``profkit inspect --json``'s document."""

def validate(
    path: str,
    format: Optional[str] = None,
    graph: Optional[str] = None,
    max_problems: Optional[int] = None,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> Dict[str, Any]:
    """``profkit validate --json``'s document; an input that cannot be read raises."""

def report(
    path: str,
    format: Optional[str] = None,
    legacy: bool = False,
    sort: Optional[str] = None,
    place: Optional[str] = None,
    sorted_by: Optional[str] = None,
    op_detail: bool = True,
    thread_sep: bool = False,
    time_unit: Optional[str] = None,
    json: bool = False,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
    style: Optional[str] = None,
    row_limit: Optional[int] = None,
    group_by_input_shape: bool = False,
    group_by_stack_n: Optional[int] = None,
) -> Any:
    """``profkit report``'s text, or with ``json`` its tables as a dict."""

def op_metrics(paths: List[str], hosts: List[str] = ..., table: str = "op_metrics") -> Any:
    """A table of xprof's OpStats of XSpaces (``op_metrics``, ``steps``, ``kernels`` or
    ``hlo_ops``) as a ``pyarrow.Table``."""

def hta(analysis: str, traces: List[str], max_inflated: Optional[str] = None) -> Dict[str, Any]:
    """``profkit hta ANALYSIS TRACE... --json``'s document."""

def xprof(
    tool: Optional[str],
    inputs: List[str],
    max_inflated: Optional[str] = None,
    group_by: Optional[str] = None,
    module: Optional[str] = None,
    memory_space: Optional[int] = None,
) -> Tuple[str, List[str]]:
    """``profkit xprof TOOL IN...``'s text (``--list`` without a tool) and its notes."""

def convert(
    inputs: List[str],
    out: str,
    to: Optional[str] = None,
    format: Optional[str] = None,
    max_file_mb: Optional[float] = None,
    overwrite: bool = False,
    layout: Optional[str] = None,
    hosts: List[str] = ...,
    max_inflated: Optional[str] = None,
    paddle_bytes_per_message: Optional[int] = None,
) -> List[str]:
    """``profkit convert``; the warnings, as ``NAME: warning: MESSAGE``."""

def merge(
    inputs: List[str], out: str, hosts: List[str] = ..., max_inflated: Optional[str] = None
) -> List[str]:
    """``profkit merge``; the warnings."""

def empty_table(table: str, layout: Literal["frame", "parquet"] = "frame") -> pyarrow.Table:
    """An empty table with the columns ``table`` has when read with ``layout``."""

def formats() -> List[str]:
    """The formats the readers take."""

class EventStream:
    """Events as ``pyarrow.RecordBatch``es, one batch per ``next()``."""

    def __init__(
        self,
        path: str,
        format: Optional[str] = None,
        host: Optional[str] = None,
        batch_rows: int = 65536,
        progress: _Progress = None,
        layout: Literal["frame", "parquet"] = "frame",
        max_inflated: Optional[str] = None,
        paddle_bytes_per_message: Optional[int] = None,
    ) -> None: ...
    def __iter__(self) -> "EventStream": ...
    def __next__(self) -> pyarrow.RecordBatch: ...
    @property
    def schema(self) -> pyarrow.Schema: ...
    @property
    def format(self) -> str: ...
    @property
    def warnings(self) -> List[str]: ...
    def side_tables(self) -> Dict[str, pyarrow.Table]: ...
    def close(self) -> None: ...
