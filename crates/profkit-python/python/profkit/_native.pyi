"""Type stubs of ``profkit._native``, the Rust extension module (use the ``profkit`` API)."""

from typing import Any, Callable, Dict, List, Literal, Optional

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
