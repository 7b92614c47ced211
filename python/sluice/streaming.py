"""Streaming writes and the queries they start."""
from __future__ import annotations

import json
import re
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import _sluice
from .errors import SluiceError, StreamingQueryException
from .session import column_list_text, option_text

# A query name becomes a checkpoint directory under the session's storage.
_QUERY_NAME = re.compile(r"^[A-Za-z0-9_-]{1,255}$")


class DataStreamWriter:
    """``df.writeStream``: a streaming query from the DataFrame's source into a sink format or a
    foreachBatch function, exactly once through the checkpoint at ``checkpointLocation``."""

    def __init__(self, df):
        self._df = df
        self._format: Optional[str] = None
        self._options: Dict[str, str] = {}
        self._output_mode = "append"
        self._trigger = ("processing_time", "")
        self._name: Optional[str] = None
        self._foreach_batch: Optional[Callable] = None

    def format(self, source: str) -> "DataStreamWriter":
        self._format = source
        return self

    def option(self, key: str, value: Any) -> "DataStreamWriter":
        self._options[key] = option_text(value)
        return self

    def options(self, **options: Any) -> "DataStreamWriter":
        for key, value in options.items():
            self.option(key, value)
        return self

    def partitionBy(self, *cols: Any) -> "DataStreamWriter":
        """The partition columns of a table the query creates (into an existing table: its own)."""
        return self.option("partitionBy", column_list_text(cols))

    def outputMode(self, mode: str) -> "DataStreamWriter":
        self._output_mode = mode
        return self

    def queryName(self, name: str) -> "DataStreamWriter":
        self._name = name
        return self

    def trigger(self, processingTime: Optional[str] = None, once: Optional[bool] = None,
                availableNow: Optional[bool] = None, realTime: Optional[str] = None,
                continuous: Optional[str] = None) -> "DataStreamWriter":
        given = [(k, v) for k, v in [("processing_time", processingTime), ("once", once),
                                     ("available_now", availableNow), ("real_time", realTime),
                                     ("continuous", continuous)] if v is not None]
        if len(given) != 1:
            raise SluiceError("INVALID_OPTIONS", "trigger() takes exactly one of processingTime, once, availableNow, "
                              "realTime")
        kind, value = given[0]
        if kind == "continuous":
            raise SluiceError("NOT_IMPLEMENTED", "the continuous trigger: use realTime, sluice's low-latency mode")
        if kind in ("once", "available_now"):
            if value is not True:
                raise SluiceError("INVALID_OPTIONS", f"trigger {kind} is given as True")
            value = ""
        self._trigger = (kind, value)
        return self

    def foreachBatch(self, function: Callable) -> "DataStreamWriter":
        """Calls ``function(batch_df, batch_id)`` with each batch; a replayed batch comes again
        with the same id and rows."""
        self._foreach_batch = function
        self._format = "foreachBatch"
        return self

    def start(self, path: Optional[str] = None) -> "StreamingQuery":
        options = dict(self._options)
        if path is not None:
            options["path"] = _sluice.absolute_path(path)
        return self._start(options)

    def toTable(self, name: str) -> "StreamingQuery":
        if self._format not in (None, "delta"):
            raise SluiceError("INVALID_OPTIONS", "toTable writes Delta tables: format('delta')")
        self._format = "delta"
        return self._start(dict(self._options, path=self._df._session._table_path(name)))

    def _start(self, options: Dict[str, str]) -> "StreamingQuery":
        session = self._df._session
        stream = self._df._stream
        format = self._format or "delta"
        checkpoint = self._checkpoint(options, format)
        callback = None
        if self._foreach_batch is not None:
            user_function = self._foreach_batch
            from .dataframe import DataFrame

            def callback(frame, batch_id):
                user_function(DataFrame(session, frame), batch_id)

            sink_options: Dict[str, str] = {}
        else:
            sink_options = session._expand(format, options)
            # A sink that keeps its own progress beside the query's (the postgresql sink) is told
            # the checkpoint, as Spark's sinks are.
            if "checkpointlocation" in {n.lower() for n in _sluice.sink_option_names(format)}:
                sink_options["checkpointLocation"] = checkpoint
        where = " AND ".join(f"({w})" for w in stream["where"])
        query = _sluice.start_query(
            stream["format"], stream["options"], where, stream["select"],
            "" if callback else format, sink_options, callback, checkpoint,
            self._trigger[0], self._trigger[1], self._output_mode, self._name or "query", session.ansi)
        started = StreamingQuery(query)
        session._streams._started(started)
        return started

    def _checkpoint(self, options: Dict[str, str], format: str) -> str:
        checkpoint = None
        for key in list(options):
            if key.lower() == "checkpointlocation":
                checkpoint = options.pop(key)
        if checkpoint is not None:
            return _sluice.absolute_path(checkpoint)
        if self._name is not None:
            if not _QUERY_NAME.match(self._name):
                raise SluiceError("INVALID_OPTIONS", f"queryName '{self._name}' names a checkpoint directory: "
                                  "use letters, digits, `_` and `-`")
            return self._df._session.storage + "/checkpoints/" + self._name
        if format in ("console", "memory"):
            return tempfile.mkdtemp(prefix="sluice-checkpoint-")
        raise SluiceError("INVALID_OPTIONS", "a streaming query needs option('checkpointLocation', dir) "
                          "or a queryName (its checkpoint is then <storage>/checkpoints/<name>)")


class StreamingQuery:
    """A running query (PySpark's StreamingQuery). Its thread runs the engine; the GIL is taken
    only while a foreachBatch function runs."""

    def __init__(self, query):
        self._query = query

    @property
    def id(self) -> str:
        return self._query.id

    @property
    def runId(self) -> str:
        return self._query.run_id

    @property
    def name(self) -> str:
        return self._query.name

    @property
    def isActive(self) -> bool:
        return self._query.is_active

    @property
    def lastProgress(self) -> Optional[Dict[str, Any]]:
        progress = self._query.last_progress
        return None if progress is None else json.loads(progress)

    @property
    def recentProgress(self) -> List[Dict[str, Any]]:
        return [json.loads(p) for p in self._query.recent_progress]

    def awaitTermination(self, timeout: Optional[float] = None) -> Optional[bool]:
        """Waits for the end (or ``timeout`` seconds: then whether it ended). A failed query
        raises StreamingQueryException with its error class."""
        try:
            ended = self._query.await_termination(timeout)
        except SluiceError as error:
            raise StreamingQueryException(error.error_class, error.message) from None
        return ended if timeout is not None else None

    def exception(self) -> Optional[StreamingQueryException]:
        failure = self._query.exception
        return None if failure is None else StreamingQueryException(*failure)

    def stop(self) -> None:
        """Stops after the batch in progress and waits until the query has."""
        self._query.stop()


class StreamingQueryManager:
    """``spark.streams``: the queries a session started, and waiting for any of them to end."""

    def __init__(self):
        self._lock = threading.Lock()
        self._queries: List[StreamingQuery] = []
        self._terminated: List[StreamingQuery] = []  # ended since the last resetTerminated()

    def _started(self, query: StreamingQuery) -> None:
        with self._lock:
            self._queries.append(query)

    def _sweep(self) -> None:
        with self._lock:
            for query in [q for q in self._queries if not q.isActive]:
                self._queries.remove(query)
                self._terminated.append(query)

    @property
    def active(self) -> List[StreamingQuery]:
        self._sweep()
        with self._lock:
            return list(self._queries)

    def get(self, id: str) -> Optional[StreamingQuery]:
        return next((q for q in self.active if q.id == id), None)

    def awaitAnyTermination(self, timeout: Optional[float] = None) -> Optional[bool]:
        """Waits until a query ends (or ``timeout`` seconds: then whether one did) since the last
        resetTerminated(); a query that failed raises its error."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._sweep()
            with self._lock:
                ended = list(self._terminated)
            if ended:
                for query in ended:
                    failure = query.exception()
                    if failure is not None:
                        raise failure
                return True if timeout is not None else None
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def resetTerminated(self) -> None:
        self._sweep()
        with self._lock:
            self._terminated.clear()
