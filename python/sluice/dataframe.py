"""DataFrames: rows held by the engine (batch) or a source not yet read (streaming)."""
from __future__ import annotations

import json
import tempfile
from typing import Any, Dict, List, Optional, Sequence

import pyarrow as pa

from . import _sluice
from .errors import SluiceError
from .functions import Column, col
from .functions import expression_text as sql_text
from .session import column_list_text, option_text


def quote(name: str) -> str:
    """A column name as SQL names it, whatever its characters."""
    return "`" + name.replace("`", "``") + "`"


def frame_of(data: Any, schema: Optional[Sequence[str]] = None):
    """The engine's frame of Arrow-shaped or Python data (see Session.createDataFrame)."""
    if isinstance(data, list):
        if schema is not None:
            data = [dict(zip(schema, row)) for row in data]
        data = pa.Table.from_pylist(data)
    elif not hasattr(data, "__arrow_c_stream__"):
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        elif type(data).__module__.startswith("pandas"):
            data = pa.Table.from_pandas(data, preserve_index=False)
    return _sluice.Frame.from_arrow(data)


def metrics_frame(metrics: Dict[str, Any],
                  names: Sequence[str] = ("num_affected_rows", "num_updated_rows", "num_deleted_rows",
                                          "num_inserted_rows")):
    """Metrics (a DML statement's by default, as Delta's MERGE returns them) as a one-row frame."""
    return _sluice.Frame.from_arrow(pa.table({name: pa.array([metrics[name]], pa.int64()) for name in names}))


class Row(tuple):
    """A row of collect(): a tuple whose values are also reachable by name (row.id, row["id"])."""

    def __new__(cls, fields: Sequence[str], values: Sequence[Any]):
        row = super().__new__(cls, values)
        row.__dict__["_fields"] = tuple(fields)
        return row

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._fields.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                key = self._fields.index(key)
            except ValueError:
                raise KeyError(key) from None
        return super().__getitem__(key)

    def asDict(self, recursive: bool = False) -> Dict[str, Any]:
        """The row as a dict; with `recursive`, rows inside it (in lists and dicts too) as well,
        as PySpark's Row.asDict does."""
        if not recursive:
            return dict(zip(self._fields, self))

        def plain(value):
            if isinstance(value, Row):
                return value.asDict(True)
            if isinstance(value, list):
                return [plain(item) for item in value]
            if isinstance(value, dict):
                return {key: plain(item) for key, item in value.items()}
            return value
        return {field: plain(value) for field, value in zip(self._fields, self)}

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{f}={v!r}" for f, v in zip(self._fields, self)) + ")"


class DataFrame:
    """A batch DataFrame holds its rows in the engine (immutable, shared without copies); a
    streaming one (``isStreaming``) names a source and the where/select applied to each batch."""

    def __init__(self, session, frame=None, stream: Optional[Dict[str, Any]] = None, alias: Optional[str] = None):
        self._session = session
        self._frame = frame
        self._stream = stream
        self._alias = alias

    # ---- shape --------------------------------------------------------------------------------
    @property
    def sparkSession(self):
        """The session the DataFrame belongs to (what a foreachBatch function runs spark.sql on)."""
        return self._session

    @property
    def isStreaming(self) -> bool:
        return self._stream is not None

    @property
    def schema(self) -> pa.Schema:
        """The columns as an Arrow schema (strings and binaries are Arrow's large types)."""
        return pa.table(self._batch().limit(0)).schema

    @property
    def columns(self) -> List[str]:
        return [field["name"] for field in json.loads(self._batch().schema_json)["fields"]]

    @property
    def dtypes(self):
        return [(field.name, str(field.type)) for field in self.schema]

    def printSchema(self) -> None:
        print("root")
        for field in json.loads(self._batch().schema_json)["fields"]:
            kind = field["type"] if isinstance(field["type"], str) else field["type"]["type"]
            print(f" |-- {field['name']}: {kind} (nullable = {str(field['nullable']).lower()})")

    def __getitem__(self, name: str) -> Column:
        return col(name)

    def alias(self, name: str) -> "DataFrame":
        return DataFrame(self._session, self._frame, self._stream, name)

    # ---- transformations ----------------------------------------------------------------------
    def where(self, condition) -> "DataFrame":
        """Rows for which the condition (SQL text or a Column) is true."""
        condition = sql_text(condition)
        if self._stream is not None:
            if self._stream["select"]:
                raise SluiceError("NOT_IMPLEMENTED", "on a streaming DataFrame, where() comes before select()")
            return self._with_stream(where=self._stream["where"] + [condition])
        return DataFrame(self._session, self._frame.transform(condition, [], self._session.ansi))

    filter = where

    def select(self, *columns: str) -> "DataFrame":
        """Columns or SQL expressions (``"total * 2 AS t"``), as selectExpr takes them."""
        items = [sql_text(c) for group in columns for c in (group if isinstance(group, (list, tuple)) else [group])]
        if self._stream is not None:
            if self._stream["select"]:
                raise SluiceError("NOT_IMPLEMENTED", "a streaming DataFrame takes one select()")
            return self._with_stream(select=items)
        return DataFrame(self._session, self._frame.transform("", items, self._session.ansi))

    selectExpr = select

    def withColumn(self, name: str, expression) -> "DataFrame":
        expression = sql_text(expression)
        items = [f"{expression} AS {quote(name)}" if c == name else quote(c) for c in self.columns]
        if name not in self.columns:
            items.append(f"{expression} AS {quote(name)}")
        return self.select(*items)

    def withColumnRenamed(self, existing: str, new: str) -> "DataFrame":
        return self.select(*[f"{quote(c)} AS {quote(new)}" if c == existing else quote(c) for c in self.columns])

    def drop(self, *names: str) -> "DataFrame":
        return self.select(*[quote(c) for c in self.columns if c not in names])

    def limit(self, n: int) -> "DataFrame":
        return DataFrame(self._session, self._batch().limit(n))

    def union(self, other: "DataFrame") -> "DataFrame":
        return DataFrame(self._session, self._batch().union_all(other._batch()))

    unionAll = union

    def createOrReplaceTempView(self, name: str) -> None:
        """Makes the rows visible to ``spark.sql`` under ``name`` (a MERGE's USING), as a batch
        inside a foreachBatch function is made visible."""
        self._session._views[name.lower()] = self._batch()

    # ---- actions ------------------------------------------------------------------------------
    def to_arrow(self) -> pa.Table:
        """The rows as a pyarrow Table, sharing the engine's buffers (no copy of values)."""
        return pa.table(self._batch())

    toArrow = to_arrow

    def to_pandas(self):
        return self.to_arrow().to_pandas()

    toPandas = to_pandas

    def __arrow_c_stream__(self, requested_schema=None):
        return self._batch().__arrow_c_stream__(requested_schema)

    def count(self) -> int:
        return self._batch().num_rows

    def collect(self) -> List[Row]:
        table = self.to_arrow()
        names = table.column_names
        return [Row(names, [row[n] for n in names]) for row in table.to_pylist()]

    def take(self, n: int) -> List[Row]:
        return self.limit(n).collect()

    def first(self) -> Optional[Row]:
        rows = self.take(1)
        return rows[0] if rows else None

    def isEmpty(self) -> bool:
        return self.count() == 0

    def show(self, n: int = 20, truncate: bool = True) -> None:
        print(self._batch().pretty(n), end="")

    @property
    def write(self) -> "DataFrameWriter":
        self._batch()
        return DataFrameWriter(self)

    @property
    def writeStream(self):
        from .streaming import DataStreamWriter

        if self._stream is None:
            raise SluiceError("NOT_IMPLEMENTED", "writeStream is for DataFrames of spark.readStream; use write")
        return DataStreamWriter(self)

    # ---- internals ----------------------------------------------------------------------------
    def _batch(self):
        if self._frame is None:
            raise SluiceError("NOT_IMPLEMENTED", "a streaming DataFrame has no rows of its own: start it with "
                              "writeStream (foreachBatch gets each batch's rows)")
        return self._frame

    def _with_stream(self, **changes) -> "DataFrame":
        stream = dict(self._stream)
        stream.update(changes)
        return DataFrame(self._session, stream=stream, alias=self._alias)


class DataFrameWriter:
    """``df.write``: the rows written once, as one commit, through any sluice sink format.

    Modes as PySpark's: ``error``/``errorifexists`` (the default: PATH_ALREADY_EXISTS or
    TABLE_OR_VIEW_ALREADY_EXISTS when there is data already), ``ignore``, ``append``, ``overwrite``.
    ``txnAppId`` with ``txnVersion`` make the write idempotent (a version not above the last one
    recorded for the app id is skipped).
    """

    def __init__(self, df: DataFrame):
        self._df = df
        self._format = "delta"
        self._mode = "errorifexists"
        self._options: Dict[str, str] = {}

    def format(self, source: str) -> "DataFrameWriter":
        self._format = source
        return self

    def mode(self, save_mode: str) -> "DataFrameWriter":
        modes = {"append", "overwrite", "error", "errorifexists", "ignore", "default"}
        if save_mode.lower() not in modes:
            raise SluiceError("INVALID_OPTIONS", f"unknown save mode '{save_mode}': one of {', '.join(sorted(modes))}")
        self._mode = "errorifexists" if save_mode.lower() in ("error", "default") else save_mode.lower()
        return self

    def option(self, key: str, value: Any) -> "DataFrameWriter":
        self._options[key] = option_text(value)
        return self

    def options(self, **options: Any) -> "DataFrameWriter":
        for key, value in options.items():
            self.option(key, value)
        return self

    def save(self, path: Optional[str] = None) -> None:
        options = dict(self._options)
        if path is not None:
            options["path"] = _sluice.absolute_path(path)
        self._write(options, "PATH_ALREADY_EXISTS", options.get("path"))

    def partitionBy(self, *cols: Any) -> "DataFrameWriter":
        """The partition columns of a table the write creates (into an existing table: its own)."""
        return self.option("partitionBy", column_list_text(cols))

    def saveAsTable(self, name: str) -> None:
        if self._format != "delta":
            raise SluiceError("INVALID_OPTIONS", "saveAsTable writes Delta tables: format('delta')")
        self._write(dict(self._options, path=self._df._session._table_path(name)), "TABLE_OR_VIEW_ALREADY_EXISTS",
                    name)

    def parquet(self, path: str) -> None:
        self.format("parquet").save(path)

    def csv(self, path: str) -> None:
        self.format("csv").save(path)

    def json(self, path: str) -> None:
        self.format("json").save(path)

    def _write(self, options: Dict[str, str], exists_class: str, what: Optional[str]) -> None:
        path = options.get("path")
        mode = self._mode
        declared = {name.lower() for name in _sluice.sink_option_names(self._format)}
        if path is not None:
            # A directory sink: whether there is data already is decided here.
            if mode in ("errorifexists", "ignore") and _holds_data(self._format, path):
                if mode == "ignore":
                    return
                raise SluiceError(exists_class, f"'{what}' already exists: choose mode append, overwrite or ignore")
            options["mode"] = "overwrite" if mode == "overwrite" else "append"
        elif "mode" in declared:
            options["mode"] = mode  # the sink decides (a PostgreSQL table that exists ...)
        if "checkpointlocation" in declared and not any(k.lower() == "checkpointlocation" for k in options):
            options["checkpointLocation"] = tempfile.mkdtemp(prefix="sluice-write-")
        options = self._df._session._expand(self._format, options)
        _sluice.write(self._df._batch(), self._format, options)


def _holds_data(format: str, path: str) -> bool:
    if format == "delta":
        return _sluice.path_exists(path + "/_delta_log")
    return any(not name.startswith(("_", ".")) for name in _sluice.list_names(path))
