"""What the engine integrations share: the files a path names, and each table of one file as
record batches with the Parquet dataset's columns (dictionary-encoded strings decoded, which
every engine takes)."""

import glob
import json
import os
from typing import Iterator, List, Optional, Sequence, Union

TABLES = ("events", "planes", "lines", "metadata")

PathArg = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]


def expand(paths: PathArg) -> List[str]:
    """The files ``paths`` names, in order: each a file, a directory (the files in it, sorted), a
    glob (its matches, sorted), or several of these as a list or a comma-separated string. A
    name that matches nothing is kept, so that reading it says it does not exist."""
    if isinstance(paths, (str, os.PathLike)):
        text = os.fspath(paths)
        items = [p for p in text.split(",") if p] if "," in text and not os.path.exists(text) else [text]
    else:
        items = [os.fspath(p) for p in paths]
    files: List[str] = []
    for item in items:
        if glob.has_magic(item):
            files.extend(sorted(p for p in glob.glob(item, recursive=True) if os.path.isfile(p)))
        elif os.path.isdir(item) and not _is_xdl_dataset(item):
            files.extend(sorted(os.path.join(item, n) for n in os.listdir(item) if os.path.isfile(os.path.join(item, n))))
        else:
            files.append(item)
    return files


def _is_xdl_dataset(path: str) -> bool:
    # An XDL dataset is a directory of its own: read whole, as the command line reads it.
    return any(n.endswith(".meta") or n.endswith(".meta.gz") for n in os.listdir(path))


def paths_option(options: "dict") -> List[str]:
    """The files of a Spark read: ``load(path)`` (a path, glob or comma-separated list) or the
    ``paths`` option (a JSON list)."""
    names: List[str] = []
    if options.get("paths"):
        value = json.loads(options["paths"])
        names.extend(value if isinstance(value, list) else [value])
    if options.get("path"):
        names.append(options["path"])
    if not names:
        raise ValueError('profkit: say which files to read: .load("run/*.xplane.pb") or .option("paths", ...)')
    files: List[str] = []
    for name in names:
        files.extend(expand(name))
    return files


def plain_schema(schema: "pyarrow.Schema") -> "pyarrow.Schema":
    """``schema`` with dictionary-encoded columns as their values' type."""
    import pyarrow as pa

    fields = []
    for field in schema:
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        fields.append(pa.field(field.name, kind, field.nullable, field.metadata))
    return pa.schema(fields, metadata=schema.metadata)


def plain_batch(batch: "pyarrow.RecordBatch", schema: "pyarrow.Schema") -> "pyarrow.RecordBatch":
    """``batch`` with its dictionary-encoded columns decoded, as ``schema`` (``plain_schema``)."""
    import pyarrow as pa

    columns = [c.cast(f.type) if pa.types.is_dictionary(c.type) else c for c, f in zip(batch.columns, schema)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def schema_of(table: str, decoded: bool = True) -> "pyarrow.Schema":
    """The schema of ``table`` (with the Parquet dataset's columns), without reading any file."""
    from . import _native

    if table not in TABLES:
        raise ValueError(f"profkit: the table is one of {', '.join(TABLES)}, not {table!r}")
    schema = _native.empty_table(table, "parquet").schema
    return plain_schema(schema) if decoded else schema


def batches(
    path: str,
    table: str = "events",
    *,
    format: Optional[str] = None,
    host: Optional[str] = None,
    batch_rows: int = 65536,
    decoded: bool = True,
    max_inflated: Optional[str] = None,
) -> Iterator["pyarrow.RecordBatch"]:
    """The record batches of ``table`` of one file, streamed for events (one XSpace plane and
    one batch in memory), read in one pass for the other tables."""
    from . import _native

    schema = schema_of(table, decoded)
    limit = None if max_inflated is None else str(max_inflated)
    if table == "events":
        stream = _native.EventStream(path, format, host, batch_rows, None, "parquet", limit, None)
        try:
            for batch in stream:
                yield plain_batch(batch, schema) if decoded else batch
        finally:
            stream.close()
        return
    read = _native.read_tables(path, format, host, batch_rows, False, None, "parquet", limit, None)
    for batch in read[table].to_batches():
        yield plain_batch(batch, schema) if decoded else batch
