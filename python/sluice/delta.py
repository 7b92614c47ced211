"""Delta tables: Delta Lake's Python API (DeltaTable, the merge builder) on sluice's Delta layer."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa

from . import _sluice
from .errors import SluiceError
from .functions import expression_text as _text


def _assignments(values: Dict[str, Any]) -> List[str]:
    if not values:
        raise SluiceError("INVALID_OPTIONS", "set/values need at least one column")
    return [f"{column} = {_text(expression)}" for column, expression in values.items()]


class DeltaTable:
    """A Delta table by path or by catalog name (``catalog.schema.table`` of the session's
    warehouse)."""

    def __init__(self, session, path: str, alias: Optional[str] = None):
        self._session = session
        self._path = path
        self._alias = alias

    @classmethod
    def forPath(cls, session, path: str) -> "DeltaTable":
        path = _sluice.absolute_path(path)
        if not cls.isDeltaTable(session, path):
            raise SluiceError("DELTA_TABLE_NOT_FOUND", f"no Delta table at '{path}'")
        return cls(session, path)

    @classmethod
    def forName(cls, session, name: str) -> "DeltaTable":
        path = session._table_path(name)
        if not cls.isDeltaTable(session, path):
            raise SluiceError("DELTA_TABLE_NOT_FOUND", f"no Delta table named {name}")
        return cls(session, path)

    @staticmethod
    def isDeltaTable(session, path: str) -> bool:
        return _sluice.path_exists(path + "/_delta_log")

    def alias(self, name: str) -> "DeltaTable":
        return DeltaTable(self._session, self._path, name)

    def toDF(self):
        return self._session.read.format("delta").load(self._path)

    def history(self, limit: Optional[int] = None):
        """The versions, newest first, as DESCRIBE HISTORY shows them."""
        from .dataframe import DataFrame

        rows = _sluice.history(self._path, -1 if limit is None else limit)
        schema = pa.schema([
            ("version", pa.int64()), ("timestamp", pa.timestamp("ms", tz="UTC")), ("operation", pa.string()),
            ("operationParameters", pa.map_(pa.string(), pa.string())),
            ("operationMetrics", pa.map_(pa.string(), pa.string())), ("readVersion", pa.int64()),
            ("isolationLevel", pa.string()), ("isBlindAppend", pa.bool_()), ("engineInfo", pa.string()),
        ])
        for row in rows:
            for key in ("operationParameters", "operationMetrics"):
                if row[key] is not None:
                    row[key] = list(row[key].items())
        return DataFrame(self._session, _sluice.Frame.from_arrow(pa.Table.from_pylist(rows, schema=schema)))

    def merge(self, source, condition: str) -> "DeltaMergeBuilder":
        return DeltaMergeBuilder(self, source, condition)

    def update(self, condition: Optional[str] = None, set: Optional[Dict[str, Any]] = None) -> None:
        """Sets the columns of ``set`` (SQL expressions) in the rows ``condition`` holds for (all rows
        without one): one commit."""
        _sluice.update(self._path, _assignments(set or {}), _text(condition), self._session.ansi)

    def delete(self, condition: Optional[str] = None) -> None:
        """Deletes the rows ``condition`` holds for (all rows without one): one commit."""
        _sluice.delete(self._path, _text(condition), self._session.ansi)

    def optimize(self) -> "DeltaOptimizeBuilder":
        """Compaction of small files (Delta's optimize builder): ``.where(partition_predicate)``,
        then ``.executeCompaction()``."""
        return DeltaOptimizeBuilder(self)

    def vacuum(self, retentionHours: Optional[float] = None, dryRun: bool = False, force: bool = False) -> List[str]:
        """Deletes the files no version within the retention (default: the table's
        delta.deletedFileRetentionDuration, 1 week) uses; the files deleted (or, with ``dryRun``,
        to delete). A retention below the table's needs ``force``."""
        return _sluice.vacuum(self._path, retentionHours, dryRun, force)

    def restoreToVersion(self, version: int):
        """Gives the table back the rows of ``version`` in a new commit; its metrics as a one-row
        DataFrame."""
        return self._restore(version=version)

    def restoreToTimestamp(self, timestamp: str):
        """Gives the table back the rows of the latest version committed at or before
        ``timestamp`` (``yyyy-MM-dd[ HH:mm:ss[.f]][zone]``, UTC unless a zone is written) in a new
        commit; its metrics as a one-row DataFrame."""
        return self._restore(timestamp=timestamp)

    def _restore(self, **target):
        from .dataframe import DataFrame, metrics_frame

        names = ["table_size_after_restore", "num_of_files_after_restore", "num_removed_files", "num_restored_files"]
        return DataFrame(self._session, metrics_frame(_sluice.restore(self._path, **target), names))


class DeltaOptimizeBuilder:
    """``DeltaTable.optimize()``: which partitions, then the compaction."""

    def __init__(self, table: DeltaTable):
        self._table = table
        self._where: Optional[str] = None

    def where(self, partitionFilter) -> "DeltaOptimizeBuilder":
        self._where = _text(partitionFilter)
        return self

    def executeCompaction(self):
        """Compacts; the metrics (numFilesAdded, numFilesRemoved, ...) as a one-row DataFrame."""
        return self._execute([])

    def executeZOrderBy(self, *columns: str):
        """Rewrites each chosen partition with its rows in Z-order over ``columns``; the metrics."""
        names = [c for group in columns for c in (group if isinstance(group, (list, tuple)) else [group])]
        return self._execute(names)

    def _execute(self, zorder_by: List[str]):
        from .dataframe import DataFrame, metrics_frame

        metrics = _sluice.optimize(self._table._path, self._where, 0, zorder_by, self._table._session.ansi)
        names = ["numFilesAdded", "numFilesRemoved", "numBytesAdded", "numBytesRemoved", "partitionsOptimized",
                 "numDeletionVectorsRemoved"]
        return DataFrame(self._table._session, metrics_frame(metrics, names))


class DeltaMergeBuilder:
    """Delta's merge builder: clauses in the order given, then ``execute()``, one commit."""

    def __init__(self, table: DeltaTable, source, condition: str):
        self._table = table
        self._source = source
        self._condition = _text(condition)
        self._clauses: List[Tuple[str, Optional[str], str]] = []
        self._schema_evolution = False

    def _add(self, match: str, condition: Optional[str], action: str) -> "DeltaMergeBuilder":
        self._clauses.append((match, _text(condition), action))
        return self

    def whenMatchedUpdate(self, condition: Optional[str] = None, set: Optional[Dict[str, Any]] = None):
        return self._add("matched", condition, "UPDATE SET " + ", ".join(_assignments(set or {})))

    def whenMatchedUpdateAll(self, condition: Optional[str] = None):
        return self._add("matched", condition, "UPDATE SET *")

    def whenMatchedDelete(self, condition: Optional[str] = None):
        return self._add("matched", condition, "DELETE")

    def whenNotMatchedInsert(self, condition: Optional[str] = None, values: Optional[Dict[str, Any]] = None):
        if not values:
            raise SluiceError("INVALID_OPTIONS", "values need at least one column")
        columns = ", ".join(values.keys())
        expressions = ", ".join(_text(v) for v in values.values())
        return self._add("not_matched", condition, f"INSERT ({columns}) VALUES ({expressions})")

    def whenNotMatchedInsertAll(self, condition: Optional[str] = None):
        return self._add("not_matched", condition, "INSERT *")

    def whenNotMatchedBySourceUpdate(self, condition: Optional[str] = None, set: Optional[Dict[str, Any]] = None):
        return self._add("not_matched_by_source", condition, "UPDATE SET " + ", ".join(_assignments(set or {})))

    def whenNotMatchedBySourceDelete(self, condition: Optional[str] = None):
        return self._add("not_matched_by_source", condition, "DELETE")

    def withSchemaEvolution(self):
        self._schema_evolution = True
        return self

    def execute(self):
        """Runs the MERGE; its metrics as a one-row DataFrame (num_affected_rows, ...)."""
        from .dataframe import DataFrame, frame_of, metrics_frame

        source = self._source
        frame = source._batch() if hasattr(source, "_batch") else frame_of(source)
        metrics = _sluice.merge(self._table._path, frame, self._table._alias or "", getattr(source, "_alias", None) or "",
                                self._condition, self._clauses, self._schema_evolution, None, None,
                                self._table._session.ansi)
        return DataFrame(self._table._session, metrics_frame(metrics))
