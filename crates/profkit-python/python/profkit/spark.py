"""profkit as a Spark data source: every format profkit reads, straight from the files.

::

    import profkit.spark
    profkit.spark.register(spark)
    events = spark.read.format("profkit").load("gs://bucket/run/*.xplane.pb")
    planes = spark.read.format("profkit").option("table", "planes").load("run/")

Built on pyspark's Python Data Source API (Spark 4). Each file is one partition (one task), read
by the executor that runs it, streamed as the command line streams it (an XSpace one plane at a
time); rows come as Arrow record batches with the Parquet dataset's columns (the ``host`` column
named from the file as ``profkit convert --to parquet`` names hosts), so that a query over the
files and over the converted dataset give the same answers. The schema is known without reading
any file. A file that cannot be read fails its task with profkit's message, naming the file and
the place in it.

Options: ``table`` (``events``, the default, ``planes``, ``lines`` or ``metadata``), ``format``
(when detection from the content is not wanted), ``batch_rows``, ``max_inflated`` (the gzip
limit, as ``--max-inflated`` takes it), and ``paths`` (a JSON list, beside or instead of
``load``'s path). ``load`` takes a file, a directory, a glob or a comma-separated list; the paths
must be readable from the executors (a shared file system, or local mode).

``spark.readStream.format("profkit")`` reads a directory as files arrive: each micro-batch reads
the files that appeared since the last (by name, in sorted order); a file is read once, so write
files elsewhere and move them in whole.

The wheel must be installed where the executors run Python (``spark-submit --py-files`` does not
carry the compiled extension: install the wheel on the nodes, or ship a virtual environment with
``--archives``).
"""

import os
from typing import Any, Iterator, List

from . import _sources

try:
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceReader,
        DataSourceStreamReader,
        InputPartition,
    )
except ImportError as e:  # pragma: no cover - without pyspark the module is of no use
    raise ImportError("profkit.spark needs pyspark 4 (pip install 'pyspark>=4')") from e

__all__ = ["ProfkitDataSource", "register"]


def register(spark: Any) -> None:
    """Registers the ``profkit`` data source with a Spark session."""
    spark.dataSource.register(ProfkitDataSource)


def _table(options: Any) -> str:
    table = options.get("table", "events")
    if table not in _sources.TABLES:
        raise ValueError(f"profkit: the table option is one of {', '.join(_sources.TABLES)}, not {table!r}")
    return table


class _File(InputPartition):
    """One file: one partition."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _read(options: Any, partition: _File) -> Iterator[Any]:
    yield from _sources.batches(
        partition.path,
        _table(options),
        format=options.get("format"),
        batch_rows=int(options.get("batch_rows", 65536)),
        max_inflated=options.get("max_inflated"),
    )


class ProfkitDataSource(DataSource):
    """The ``profkit`` format of ``spark.read`` and ``spark.readStream``."""

    @classmethod
    def name(cls) -> str:
        return "profkit"

    def schema(self) -> Any:
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(_sources.schema_of(_table(self.options)))

    def reader(self, schema: Any) -> "DataSourceReader":
        return _Reader(self.options)

    def streamReader(self, schema: Any) -> "DataSourceStreamReader":
        return _StreamReader(self.options)


class _Reader(DataSourceReader):
    def __init__(self, options: Any) -> None:
        self.options = dict(options)
        _table(self.options)
        self.files = _sources.paths_option(self.options)

    def partitions(self) -> List[_File]:
        return [_File(path) for path in self.files]

    def read(self, partition: _File) -> Iterator[Any]:
        yield from _read(self.options, partition)


class _StreamReader(DataSourceStreamReader):
    """A directory (or glob) read as its files arrive: the offset is how many of its files, in
    sorted order, were read."""

    def __init__(self, options: Any) -> None:
        self.options = dict(options)
        _table(self.options)

    def _files(self) -> List[str]:
        files = _sources.paths_option(self.options)
        return sorted(f for f in files if os.path.isfile(f))

    def initialOffset(self) -> dict:
        return {"files": 0}

    def latestOffset(self) -> dict:
        return {"files": len(self._files())}

    def partitions(self, start: dict, end: dict) -> List[_File]:
        return [_File(p) for p in self._files()[int(start["files"]) : int(end["files"])]]

    def read(self, partition: _File) -> Iterator[Any]:
        yield from _read(self.options, partition)

    def commit(self, end: dict) -> None:
        pass
