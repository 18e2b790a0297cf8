"""profkit's tables in DuckDB, straight from the files.

::

    import duckdb, profkit.duckdb
    con = duckdb.connect()
    profkit.duckdb.register(con, "events", "run/*.xplane.pb")
    con.sql("select name, sum(duration_ps) from events group by name").show()

The ``stats`` column comes as a list of ``{key, value}`` structs rather than a ``MAP``: a stat can
repeat in an event (an event with two flows has two ``flow`` stats), which a DuckDB map cannot
hold (``list_filter(stats, s -> s.key = 'step_num')[1].value`` reads one).

DuckDB's Python API has no table functions of Python's own, so the files are offered as an
Arrow stream registered under a name (``register``), or as a relation (``relation``): both are
streamed (an XSpace one plane at a time, then one record batch), with the Parquet dataset's
columns. A registered stream is read once: a second query on the same name reads nothing, so
register again (each registration reads the files as they are then) or, for repeated queries,
``create table t as select * from events`` once, or convert to a Parquet dataset
(``profkit convert ... --to parquet``) and query that.
"""

from typing import Any, Optional

from . import _sources

__all__ = ["reader", "register", "relation"]


def reader(paths: "_sources.PathArg", table: str = "events", *, format: Optional[str] = None, max_inflated: Optional[str] = None) -> Any:
    """A ``pyarrow.RecordBatchReader`` over ``table`` of every file ``paths`` names (a file, a
    directory, a glob, or a list of them), one file after the other."""
    import pyarrow as pa

    files = _sources.expand(paths)
    schema = _sources.schema_of(table)
    entries = None
    if "stats" in schema.names:
        i = schema.get_field_index("stats")
        kind = schema.field(i).type
        entries = pa.list_(pa.field("entries", pa.struct([pa.field("key", kind.key_type, False), pa.field("value", kind.item_type)]), False))
        schema = schema.set(i, pa.field("stats", entries, schema.field(i).nullable))

    def all_batches():
        for path in files:
            for batch in _sources.batches(path, table, format=format, max_inflated=max_inflated):
                if entries is not None:
                    columns = [c.cast(f.type) if f.name == "stats" else c for c, f in zip(batch.columns, schema)]
                    batch = pa.RecordBatch.from_arrays(columns, schema=schema)
                yield batch

    return pa.RecordBatchReader.from_batches(schema, all_batches())


def register(con: Any, name: str, paths: "_sources.PathArg", table: str = "events", **options: Any) -> Any:
    """Registers ``table`` of the files as the view ``name`` of the connection ``con`` (read
    once: see the module documentation); returns ``con``."""
    con.register(name, reader(paths, table, **options))
    return con


def relation(con: Any, paths: "_sources.PathArg", table: str = "events", **options: Any) -> Any:
    """``table`` of the files as a DuckDB relation of the connection ``con`` (streamed)."""
    return con.from_arrow(reader(paths, table, **options))
