"""profkit's tables as Polars frames, straight from the files.

::

    import profkit.polars
    frame = profkit.polars.scan("run/*.xplane.pb")          # a LazyFrame
    top = frame.group_by("name").agg(pl.col("duration_ps").sum()).collect()

``scan`` is lazy: nothing is read until the frame is collected, then the files are streamed (an
XSpace one plane at a time) through Polars' IO plugin interface, which takes only the columns
the query uses. ``read`` reads every file into a ``DataFrame``. For one file already read as a
``pyarrow.Table`` (``profkit.events(path)``), ``polars.from_arrow(table)`` is the one-liner.
"""

from typing import Any, Iterator, Optional

from . import _sources

__all__ = ["read", "scan"]


def _polars() -> Any:
    try:
        import polars
    except ImportError as e:  # pragma: no cover
        raise ImportError("profkit.polars needs polars (pip install polars)") from e
    return polars


def scan(paths: "_sources.PathArg", table: str = "events", *, format: Optional[str] = None, max_inflated: Optional[str] = None) -> Any:
    """``table`` of every file ``paths`` names as a ``polars.LazyFrame``, read when collected."""
    pl = _polars()
    from polars.io.plugins import register_io_source

    files = _sources.expand(paths)
    arrow_schema = _sources.schema_of(table)
    schema = pl.from_arrow(arrow_schema.empty_table()).schema

    def source(with_columns: Optional[list], predicate: Any, n_rows: Optional[int], batch_size: Optional[int]) -> Iterator[Any]:
        left = n_rows
        for path in files:
            for batch in _sources.batches(path, table, format=format, max_inflated=max_inflated, batch_rows=batch_size or 65536):
                frame = pl.from_arrow(batch)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                if predicate is not None:
                    frame = frame.filter(predicate)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                yield frame
                if left is not None and left <= 0:
                    return

    return register_io_source(io_source=source, schema=schema)


def read(paths: "_sources.PathArg", table: str = "events", **options: Any) -> Any:
    """``table`` of every file ``paths`` names as a ``polars.DataFrame``."""
    return scan(paths, table, **options).collect()
