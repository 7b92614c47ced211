"""The session and its readers: where DataFrames come from."""
from __future__ import annotations

import os
import re
from typing import Any, Dict, Optional, Sequence

from . import _sluice
from .errors import SluiceError

# Statements spark.sql runs: Delta's DML (docs/delta.md).
_DML = re.compile(r"^\s*(MERGE|UPDATE|DELETE)\b", re.IGNORECASE)
_SELECT = re.compile(r"^\s*SELECT\b", re.IGNORECASE)
# Delta's maintenance statements; a table is delta.`/path` or a dotted name.
_NAME = r"(delta\.`(?:[^`]|``)+`|[A-Za-z0-9_.`-]+)"
_OPTIMIZE = re.compile(r"^\s*OPTIMIZE\s+" + _NAME + r"(?:\s+WHERE\s+(.+?))?(?:\s+ZORDER\s+BY\s+\(?([^()]*?)\)?)?\s*;?\s*$",
                       re.IGNORECASE | re.DOTALL)
_VACUUM = re.compile(r"^\s*VACUUM\s+" + _NAME + r"(?:\s+RETAIN\s+([0-9.]+)\s+HOURS)?(\s+DRY\s+RUN)?\s*;?\s*$",
                     re.IGNORECASE)
# A string literal in single quotes.
_LITERAL = r"'(?:[^'\\]|\\.|'')*'"
# ALTER TABLE's changes of a Delta table's properties and columns (docs/delta.md, "Column mapping").
_ALTER = re.compile(r"^\s*ALTER\s+TABLE\s+" + _NAME + r"\s+(.*?)\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_SET_PROPERTIES = re.compile(r"^SET\s+TBLPROPERTIES\s*\((.*)\)$", re.IGNORECASE | re.DOTALL)
_UNSET_PROPERTIES = re.compile(r"^UNSET\s+TBLPROPERTIES\s+(IF\s+EXISTS\s+)?\((.*)\)$", re.IGNORECASE | re.DOTALL)
_RENAME_COLUMN = re.compile(r"^RENAME\s+COLUMN\s+(.+?)\s+TO\s+(.+)$", re.IGNORECASE | re.DOTALL)
_DROP_COLUMNS = re.compile(r"^DROP\s+COLUMNS?\s+(?:\((.*)\)|(.*))$", re.IGNORECASE | re.DOTALL)
_ADD_COLUMNS = re.compile(r"^ADD\s+COLUMNS?\s+(?:\((.*)\)|(.*))$", re.IGNORECASE | re.DOTALL)
# A column path as written: names or `quoted names` joined by dots.
_PATH = r"(?:`(?:[^`]|``)+`|[^\s`.,()]+)(?:\.(?:`(?:[^`]|``)+`|[^\s`.,()]+))*"
_CHANGE_COLUMN = re.compile(r"^(?:ALTER|CHANGE)\s+(?:COLUMN\s+)?(" + _PATH + r")\s+(.+)$", re.IGNORECASE | re.DOTALL)
# What follows a column's type in ADD COLUMNS and CHANGE COLUMN, each optional.
_COLUMN_TAIL = re.compile(r"^(.+?)(\s+NOT\s+NULL)?(?:\s+COMMENT\s+(" + _LITERAL + r"))?"
                          r"(?:\s+(FIRST)|\s+AFTER\s+(" + _PATH + r"))?$", re.IGNORECASE | re.DOTALL)
_POSITION = re.compile(r"^(?:(FIRST)|AFTER\s+(" + _PATH + r"))$", re.IGNORECASE)
# One entry of a property list: a key ('quoted' or a dotted name), then `= value` where given.
_PROPERTY = re.compile(r"\s*(" + _LITERAL + r"|[A-Za-z0-9_.]+)\s*(?:=\s*(" + _LITERAL + r"|[A-Za-z0-9_.+-]+))?\s*(?:,|$)")
_RESTORE = re.compile(r"^\s*RESTORE\s+(?:TABLE\s+)?" + _NAME +
                      r"\s+TO\s+(?:VERSION\s+AS\s+OF\s+([0-9]+)|TIMESTAMP\s+AS\s+OF\s+'([^']*)')\s*;?\s*$",
                      re.IGNORECASE)


def _unquoted(text: str) -> str:
    """A property key or value as written: a 'literal' without its quotes, else the text."""
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return re.sub(r"\\(.)|''", lambda m: m.group(1) or "'", text[1:-1])
    return text


def _property_list(text: str, values: bool):
    """The (key, value) pairs of a TBLPROPERTIES list; keys alone when not `values`."""
    pairs = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _PROPERTY.match(text, position)
        if match is None or match.end() == position or (match.group(2) is None) == values:
            raise SluiceError("PARSE_SYNTAX_ERROR", "expected " + ("'key' = 'value'" if values else "'key'") +
                              " in the property list at: " + text[position:position + 40])
        pairs.append((_unquoted(match.group(1)), _unquoted(match.group(2) or "")))
        position = match.end()
    if not pairs:
        raise SluiceError("PARSE_SYNTAX_ERROR", "the property list is empty")
    return pairs


def _identifier(text: str) -> str:
    """A column name as written, back quotes taken off (a doubled one inside kept once)."""
    if len(text) >= 2 and text[0] == "`" and text[-1] == "`":
        return text[1:-1].replace("``", "`")
    return text


def _column_list(text: str):
    """Column paths separated by commas outside back quotes, each as written."""
    columns = _top_level_split(text)
    if any(not column for column in columns):
        raise SluiceError("PARSE_SYNTAX_ERROR", "an empty column name in DROP COLUMNS: " + text)
    return columns


def _top_level_split(text: str):
    """`text` split at the commas outside quotes, parentheses and angle brackets."""
    parts, current, depth, quote = [], "", 0, None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "`'":
            quote = char
        elif char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += char
    parts.append(current.strip())
    return parts


def _column_definition(text: str):
    """`path type [NOT NULL] [COMMENT 'text'] [FIRST | AFTER name]` as the tuple add_columns takes."""
    found = re.match(r"^(" + _PATH + r")\s+(.+)$", text.strip(), re.DOTALL)
    tail = _COLUMN_TAIL.match(found.group(2).strip()) if found else None
    if tail is None:
        raise SluiceError("PARSE_SYNTAX_ERROR", "expected `name type [NOT NULL] [COMMENT 'text'] "
                          "[FIRST | AFTER name]` in ADD COLUMNS at: " + text[:60])
    type_text, not_null, comment, first, after = tail.groups()
    return (found.group(1), type_text, not_null is None, _unquoted(comment) if comment else "",
            first is not None, _identifier(after) if after else "")


def _column_change(path: str, text: str):
    """The keyword arguments of change_column for `text`, what follows the column's path in ALTER
    COLUMN (TYPE t, COMMENT 'c', DROP NOT NULL, SET NOT NULL, FIRST, AFTER x) or CHANGE COLUMN
    (the same, or Hive's `name type [COMMENT 'c'] [FIRST | AFTER x]` keeping the name)."""
    change = {"type": None, "comment": None, "nullable": None, "first": False, "after": ""}
    text = text.strip()
    position = _POSITION.match(text)
    if re.match(r"^TYPE\s", text, re.IGNORECASE):
        change["type"] = text[4:].strip()
    elif re.match(r"^COMMENT\s", text, re.IGNORECASE):
        change["comment"] = _unquoted(text[7:].strip())
    elif re.match(r"^DROP\s+NOT\s+NULL$", text, re.IGNORECASE):
        change["nullable"] = True
    elif re.match(r"^SET\s+NOT\s+NULL$", text, re.IGNORECASE):
        change["nullable"] = False
    elif position is not None:
        change["first"], change["after"] = position.group(1) is not None, _identifier(position.group(2) or "")
    else:
        name, type_text, nullable, comment, first, after = _column_definition(text)
        if _identifier(name).lower() != _identifier(path.split(".")[-1]).lower():
            raise SluiceError("NOT_SUPPORTED_CHANGE_COLUMN", f"CHANGE COLUMN {path} {name}: a column is renamed "
                              "with RENAME COLUMN")
        change.update(type=type_text, comment=comment or None, nullable=None if nullable else False,
                      first=first, after=after)
    return change


def option_text(value: Any) -> str:
    """An option value as sluice's option tables read it (PySpark's str(), booleans lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def column_list_text(columns: Sequence[Any]) -> str:
    """Column names as a sink's column-list option reads them (``partitionBy``): comma-separated,
    a name in back quotes (a back quote inside doubled) when it holds a comma, a back quote or
    blanks at its ends. PySpark's ``partitionBy("a", "b")`` and ``partitionBy(["a", "b"])`` alike."""
    if len(columns) == 1 and isinstance(columns[0], (list, tuple)):
        columns = columns[0]
    names = []
    for column in columns:
        if not isinstance(column, str) or not column:
            raise SluiceError("INVALID_OPTIONS", f"partitionBy takes column names, not {column!r}")
        if "," in column or "`" in column or column != column.strip():
            column = "`" + column.replace("`", "``") + "`"
        names.append(column)
    return ",".join(names)


class Session:
    """What PySpark's SparkSession is to a Spark job: where reads, writes and queries start.

    ``warehouse`` holds the catalog's tables (``catalog.schema.table`` is
    ``<warehouse>/catalog/schema/table``; a name of one or two parts is in ``catalog`` and
    ``schema``, as Spark's current catalog and database) and connections; ``storage`` the checkpoints of queries
    started with a ``queryName`` and no ``checkpointLocation``. Relative paths are taken from the
    working directory. ``ansi`` is ``spark.sql.ansi.enabled``.
    """

    def __init__(self, warehouse: Optional[str] = None, storage: Optional[str] = None, ansi: bool = True,
                 catalog: str = "main", schema: str = "default"):
        self.catalog = catalog
        self.schema = schema
        self.warehouse = _sluice.absolute_path(warehouse or os.environ.get("SLUICE_WAREHOUSE", "warehouse"))
        self.storage = _sluice.absolute_path(storage or os.environ.get("SLUICE_STORAGE", "storage"))
        self.ansi = ansi
        self._views: Dict[str, Any] = {}
        from .streaming import StreamingQueryManager

        self._streams = StreamingQueryManager()

    @property
    def read(self) -> "DataFrameReader":
        return DataFrameReader(self)

    @property
    def readStream(self) -> "DataStreamReader":
        return DataStreamReader(self)

    @property
    def streams(self):
        """The streaming queries this session started (PySpark's StreamingQueryManager)."""
        return self._streams

    def table(self, name: str):
        return self.read.table(name)

    def createDataFrame(self, data, schema=None):
        """A DataFrame of Arrow data (a pyarrow Table or RecordBatch, a pandas DataFrame, anything
        with ``__arrow_c_stream__``) or of Python rows (dicts, or tuples with ``schema`` naming the
        columns)."""
        from .dataframe import DataFrame, frame_of

        return DataFrame(self, frame_of(data, schema))

    def range(self, start: int, end: Optional[int] = None, step: int = 1):
        """A DataFrame of one bigint column ``id``: range(5) is 0..4, range(2, 8, 3) is 2, 5."""
        import pyarrow as pa

        from .dataframe import DataFrame, frame_of

        if end is None:
            start, end = 0, start
        # (Inside the method, `range` is the built-in: class attributes are not in its scope.)
        return DataFrame(self, frame_of(pa.table({"id": pa.array(range(start, end, step), pa.int64())})))

    def sql(self, statement: str):
        """Runs a statement over the warehouse's tables (``catalog.schema.table``, or fewer parts
        in this session's catalog and schema), Delta paths (``delta.`/path```) and this session's
        temporary views: ``SELECT ... FROM name [WHERE] [GROUP BY] [HAVING]`` (docs/sql.md) gives
        its rows; ``MERGE``, ``UPDATE`` and ``DELETE`` (docs/delta.md) give their metrics as a
        one-row DataFrame (Delta's ``num_affected_rows`` ...)."""
        from .dataframe import DataFrame, metrics_frame

        views = dict(self._views)
        altered = self._alter(statement)
        if altered is not None:
            return altered
        maintenance = self._maintenance(statement)
        if maintenance is not None:
            return maintenance
        if _SELECT.match(statement):
            return DataFrame(self, _sluice.run_select(statement, self.warehouse, self.catalog, self.schema, views,
                                                      self.ansi))
        if not _DML.match(statement):
            raise SluiceError("NOT_IMPLEMENTED", "spark.sql runs SELECT, MERGE, UPDATE, DELETE, OPTIMIZE, VACUUM, "
                              "RESTORE and ALTER TABLE statements")
        return DataFrame(self, metrics_frame(_sluice.run_dml(statement, self.warehouse, self.catalog, self.schema,
                                                             views, self.ansi)))

    def _maintenance(self, statement: str):
        """OPTIMIZE t [WHERE ...], VACUUM t [RETAIN n HOURS] [DRY RUN], RESTORE [TABLE] t TO VERSION
        AS OF n | TIMESTAMP AS OF 'ts', through DeltaTable; None for other statements."""
        from .delta import DeltaTable

        for pattern, kind in ((_OPTIMIZE, "optimize"), (_VACUUM, "vacuum"), (_RESTORE, "restore")):
            match = pattern.match(statement)
            if match is None:
                continue
            name = match.group(1)
            if name.lower().startswith("delta.`"):
                table = DeltaTable.forPath(self, name[len("delta.`"):-1].replace("``", "`"))
            else:
                table = DeltaTable.forName(self, name.replace("`", ""))
            if kind == "optimize":
                builder = table.optimize()
                builder = builder.where(match.group(2)) if match.group(2) else builder
                if match.group(3):
                    columns = [c.strip().strip("`") for c in match.group(3).split(",") if c.strip()]
                    return builder.executeZOrderBy(*columns)
                return builder.executeCompaction()
            if kind == "vacuum":
                import pyarrow as pa

                from .dataframe import DataFrame, frame_of

                hours = float(match.group(2)) if match.group(2) else None
                files = table.vacuum(hours, dryRun=bool(match.group(3)))
                return DataFrame(self, frame_of(pa.table({"path": pa.array(files, pa.large_string())})))
            if match.group(2) is not None:
                return table.restoreToVersion(int(match.group(2)))
            return table.restoreToTimestamp(match.group(3))
        return None

    def _alter(self, statement: str):
        """ALTER TABLE t SET TBLPROPERTIES (k = v, ...) | UNSET TBLPROPERTIES [IF EXISTS] (k, ...) |
        RENAME COLUMN a.b TO c | DROP COLUMN[S] a[, b] | ADD COLUMN[S] (a.b type [COMMENT 'c']
        [FIRST | AFTER x], ...) | ALTER|CHANGE COLUMN a.b (TYPE t | COMMENT 'c' | DROP NOT NULL |
        FIRST | AFTER x); None for other statements. As in Spark, the result is an empty DataFrame."""
        import pyarrow as pa

        from .dataframe import DataFrame, frame_of

        match = _ALTER.match(statement)
        if match is None:
            return None
        name, change = match.group(1), match.group(2).strip()
        if name.lower().startswith("delta.`"):
            path = _sluice.absolute_path(name[len("delta.`"):-1].replace("``", "`"))
        else:
            path = self._table_path(name.replace("`", ""))
        properties: Dict[str, str] = {}
        names = []
        if_exists = False
        new_name = ""
        if (found := _SET_PROPERTIES.match(change)) is not None:
            kind = "set_properties"
            for key, value in _property_list(found.group(1), values=True):
                properties[key] = value
        elif (found := _UNSET_PROPERTIES.match(change)) is not None:
            kind = "unset_properties"
            if_exists = found.group(1) is not None
            names = [key for key, _ in _property_list(found.group(2), values=False)]
        elif (found := _RENAME_COLUMN.match(change)) is not None:
            kind = "rename_column"
            names = [found.group(1).strip()]
            new_name = _identifier(found.group(2).strip())
        elif (found := _DROP_COLUMNS.match(change)) is not None:
            kind = "drop_columns"
            names = _column_list(found.group(1) if found.group(1) is not None else found.group(2))
        elif (found := _ADD_COLUMNS.match(change)) is not None:
            listed = found.group(1) if found.group(1) is not None else found.group(2)
            _sluice.add_columns(path, [_column_definition(one) for one in _top_level_split(listed)])
            return DataFrame(self, frame_of(pa.table({})))
        elif (found := _CHANGE_COLUMN.match(change)) is not None:
            _sluice.change_column(path, found.group(1), **_column_change(found.group(1), found.group(2)))
            return DataFrame(self, frame_of(pa.table({})))
        else:
            raise SluiceError("PARSE_SYNTAX_ERROR", "ALTER TABLE takes SET TBLPROPERTIES, UNSET TBLPROPERTIES, "
                              "RENAME COLUMN, DROP COLUMNS, ADD COLUMNS and ALTER|CHANGE COLUMN here: " + change[:80])
        _sluice.alter(path, kind, properties, names, if_exists, new_name)
        return DataFrame(self, frame_of(pa.table({})))

    def stop(self) -> None:
        """Nothing to release: the engine lives in this process."""

    def _qualified(self, name: str) -> str:
        parts = name.split(".")
        if len(parts) == 1:
            return f"{self.catalog}.{self.schema}.{name}"
        if len(parts) == 2:
            return f"{self.catalog}.{name}"
        return name

    def _table_path(self, name: str) -> str:
        return _sluice.table_path(self.warehouse, self._qualified(name))

    def _expand(self, format: str, options: Dict[str, str]) -> Dict[str, str]:
        if any(key.lower() == "connection" for key in options):
            return _sluice.expand_connection(self.warehouse, format, options)
        return options


class _Reader:
    def __init__(self, session: Session):
        self._session = session
        self._format: Optional[str] = None
        self._options: Dict[str, str] = {}

    def format(self, source: str):
        self._format = source
        return self

    def option(self, key: str, value: Any):
        self._options[key] = option_text(value)
        return self

    def options(self, **options: Any):
        for key, value in options.items():
            self.option(key, value)
        return self

    def _spec(self, path: Optional[str], default_format: str):
        format = self._format or default_format
        options = dict(self._options)
        if path is not None:
            options["path"] = _sluice.absolute_path(path)
        return format, self._session._expand(format, options)


class DataFrameReader(_Reader):
    """``spark.read``: a batch read of any sluice source format (docs/engine.md lists them)."""

    def load(self, path: Optional[str] = None):
        from .dataframe import DataFrame

        format, options = self._spec(path, "delta")
        return DataFrame(self._session, _sluice.read(format, options))

    def table(self, name: str):
        return self.format("delta").load(self._session._table_path(name))

    def parquet(self, path: str):
        return self.format("parquet").load(path)

    def csv(self, path: str, **options: Any):
        return self.format("csv").options(**options).load(path)

    def json(self, path: str, **options: Any):
        return self.format("json").options(**options).load(path)


class DataStreamReader(_Reader):
    """``spark.readStream``: a streaming source, read by the query ``writeStream`` starts."""

    def load(self, path: Optional[str] = None):
        from .dataframe import DataFrame

        format, options = self._spec(path, "delta")
        return DataFrame(self._session, stream={"format": format, "options": options, "where": [], "select": []})

    def table(self, name: str):
        return self.format("delta").load(self._session._table_path(name))
