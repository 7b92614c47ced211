"""Pipelines in Python, in the shape of Spark Declarative Pipelines.

A pipeline file lists Python libraries (``libraries: [transformations/*.py]``); each is run with
``spark`` (a sluice.Session on the pipeline's warehouse and storage) in its globals, and its
decorators declare tables, flows and sinks beside the file's own:

    from sluice import pipelines as dp

    @dp.foreach_batch_sink(name="audit")
    def audit(df, batch_id):
        df.write.mode("append").option("txnAppId", "audit").option("txnVersion", batch_id).saveAsTable("audit_log")

    @dp.append_flow(target="audit")
    def orders_to_audit():
        return spark.readStream.table("main.shop.orders").where("total > 100")

Table names of one or two parts are in the session's catalog and schema (``main.default``).
``python -m sluice run FILE`` (or ``sluice run FILE``, which hands such a file to Python) runs them
with the same runner, checkpoints and event log as YAML flows. See docs/python.md.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import pickle
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _sluice
from .errors import SluiceError
from .session import Session, column_list_text


@dataclass
class _Dataset:
    kind: str  # table, materialized_view, streaming_table
    name: str
    function: Optional[Callable]
    partition_cols: Optional[Sequence[str]] = None


@dataclass
class _Flow:
    target: str
    name: str
    function: Callable
    output_mode: str


@dataclass
class _Graph:
    datasets: List[_Dataset] = field(default_factory=list)
    flows: List[_Flow] = field(default_factory=list)
    sinks: Dict[str, Callable] = field(default_factory=dict)


# What the decorators of the libraries being loaded declared.
_graph = _Graph()


def _named(function: Optional[Callable], register: Callable[[Callable], None]):
    """A decorator usable as @dp.x and as @dp.x(...)."""
    if function is not None:
        register(function)
        return function

    def decorate(f: Callable) -> Callable:
        register(f)
        return f

    return decorate


def table(query_function: Optional[Callable] = None, *, name: Optional[str] = None, comment: Optional[str] = None,
          partition_cols: Optional[Sequence[str]] = None, **_settings: Any):
    """A table: the function returns a streaming DataFrame (a streaming table fed by a flow of the
    function's name) or a batch DataFrame (written when the table is missing or refreshed).
    ``partition_cols``: the table's partition columns."""
    return _named(query_function,
                  lambda f: _graph.datasets.append(_Dataset("table", name or f.__name__, f, partition_cols)))


def materialized_view(query_function: Optional[Callable] = None, *, name: Optional[str] = None,
                      partition_cols: Optional[Sequence[str]] = None, **_settings: Any):
    """A table computed from a batch DataFrame (written when missing or refreshed)."""
    return _named(query_function, lambda f: _graph.datasets.append(
        _Dataset("materialized_view", name or f.__name__, f, partition_cols)))


def create_streaming_table(name: str, partition_cols: Optional[Sequence[str]] = None, **_settings: Any) -> None:
    """A table that flows (append_flow) write into."""
    _graph.datasets.append(_Dataset("streaming_table", name, None, partition_cols))


def append_flow(*, target: str, name: Optional[str] = None, **_settings: Any):
    """A flow: the function returns a streaming DataFrame whose rows are appended to ``target`` (a
    table or a foreach_batch_sink)."""
    return _named(None, lambda f: _graph.flows.append(_Flow(target, name or f.__name__, f, "append")))


def update_flow(*, target: str, name: Optional[str] = None, **_settings: Any):
    """A flow in output mode update (each batch's rows handed on as changes, as a MERGE takes them)."""
    return _named(None, lambda f: _graph.flows.append(_Flow(target, name or f.__name__, f, "update")))


def foreach_batch_sink(function: Optional[Callable] = None, *, name: Optional[str] = None):
    """A sink calling the function with each batch: ``fn(df, batch_id)``."""
    return _named(function, lambda f: _graph.sinks.__setitem__(name or f.__name__, f))


def _expectations(function: Callable) -> List[Tuple[str, str, str]]:
    return list(getattr(function, "_sluice_expectations", []))


def _expect(action: str, expectations: Dict[str, str]):
    def decorate(f: Callable) -> Callable:
        f._sluice_expectations = [(n, c, action) for n, c in expectations.items()] + _expectations(f)
        return f

    return decorate


def expect(name: str, condition: str):
    return _expect("warn", {name: condition})


def expect_or_drop(name: str, condition: str):
    return _expect("drop", {name: condition})


def expect_or_fail(name: str, condition: str):
    return _expect("fail", {name: condition})


def expect_all(expectations: Dict[str, str]):
    return _expect("warn", expectations)


def expect_all_or_drop(expectations: Dict[str, str]):
    return _expect("drop", expectations)


def expect_all_or_fail(expectations: Dict[str, str]):
    return _expect("fail", expectations)


# ---- running --------------------------------------------------------------------------------

def _foreach_batch(session: Session, function: Callable) -> Callable:
    from .dataframe import DataFrame

    def call(frame, batch_id):
        function(DataFrame(session, frame), batch_id)

    return call


def _resolve_function(reference: str, base: str) -> Callable:
    """``python:package.module:function``, the module looked up beside the pipeline file first."""
    _, module_name, function_name = (reference.split(":", 2) + ["", ""])[:3]
    if not module_name or not function_name:
        raise SluiceError("INVALID_PIPELINE", f"foreachBatch function '{reference}' is not python:module:function")
    if base not in sys.path:
        sys.path.insert(0, base)
    try:
        module = importlib.import_module(module_name)
        return getattr(module, function_name)
    except (ImportError, AttributeError) as error:
        raise SluiceError("FOREACH_BATCH_FUNCTION_NOT_FOUND", f"'{reference}': {error}") from None


def _load_libraries(patterns: Sequence[str], base: str, session: Session) -> List[str]:
    files: List[str] = []
    for pattern in patterns:
        matched = sorted(glob.glob(os.path.join(base, pattern)))
        if not matched:
            raise SluiceError("INVALID_PIPELINE", f"libraries: '{pattern}' matches no file beside the pipeline")
        files.extend(m for m in matched if m not in files)
    for number, path in enumerate(files):
        name = f"_sluice_pipeline_library_{number}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.spark = session
        sys.modules[name] = module  # its functions are then found (and pickled) by reference
        spec.loader.exec_module(module)
    return files


def _unpicklable_warning(name: str, function: Callable) -> Optional[str]:
    """A warning when the function uses a value that cannot be pickled (a file, a socket, a lock
    from its module or closure): such a function cannot move to another process."""
    code = getattr(function, "__code__", None)
    if code is None:  # a callable object, a functools.partial: it is pickled whole
        used = {"the function": function}
    else:
        used = {n: function.__globals__[n] for n in code.co_names if n in function.__globals__}
        used.update((n, cell.cell_contents) for n, cell in zip(code.co_freevars, function.__closure__ or ()))
    for variable, value in used.items():
        if isinstance(value, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)):
            continue  # pickled by reference
        try:
            pickle.dumps(value)
        except Exception as error:  # what cannot be pickled differs by object: every failure counts
            return (f"WARN foreachBatch sink '{name}': its function uses `{variable}` ({type(value).__name__}), "
                    f"which cannot be pickled ({error}); pass values in instead of holding files, sockets or "
                    "locks, so the function can move to another process")
    return None


class _Build:
    """The graph's tables, flows and sinks added to a loaded pipeline file."""

    def __init__(self, pipeline, session: Session, trigger: str):
        self.pipeline = pipeline
        self.session = session
        self.trigger = trigger
        self.table_sinks: Dict[str, str] = {}
        self.batch_tables: List[Tuple[_Dataset, Any, List[Tuple[str, str, str]]]] = []
        self.warnings: List[Tuple[str, str]] = []  # (sink, message)

    def table_sink(self, name: str, partition_cols: Optional[Sequence[str]] = None) -> str:
        qualified = self.session._qualified(name)
        if qualified not in self.table_sinks:
            sink = "table_" + qualified.replace(".", "__")
            options = {"partitionBy": column_list_text([partition_cols])} if partition_cols else {}
            self.pipeline.add_sink(sink, "delta", options, qualified)
            self.table_sinks[qualified] = sink
        return self.table_sinks[qualified]

    def flow(self, name: str, df, sink: str, output_mode: str, expectations) -> None:
        if not getattr(df, "isStreaming", False):
            raise SluiceError("INVALID_PIPELINE", f"flow '{name}' returns no streaming DataFrame: read its source "
                              "with spark.readStream")
        stream = df._stream
        where = " AND ".join(f"({w})" for w in stream["where"])
        self.pipeline.add_flow(name, stream["format"], stream["options"], where, stream["select"], sink,
                               self.trigger, output_mode, expectations)

    def add(self, graph: _Graph) -> None:
        for name, function in graph.sinks.items():
            reference = f"python:{name}"
            self.pipeline.register_function(reference, _foreach_batch(self.session, function))
            self.pipeline.add_sink(name, "foreachBatch", {"function": reference}, None)
            warning = _unpicklable_warning(name, function)
            if warning:
                self.warnings.append((name, warning))
        for dataset in graph.datasets:
            if dataset.function is None:
                self.table_sink(dataset.name, dataset.partition_cols)
                continue
            df = dataset.function()
            if getattr(df, "isStreaming", False):
                self.flow(dataset.function.__name__, df, self.table_sink(dataset.name, dataset.partition_cols),
                          "append", _expectations(dataset.function))
            else:
                self.batch_tables.append((dataset, df, _expectations(dataset.function)))
        for flow in graph.flows:
            sink = flow.target if flow.target in graph.sinks else self.table_sink(flow.target)
            self.flow(flow.name, flow.function(), sink, flow.output_mode, _expectations(flow.function))

    def write_batch_tables(self, full_refresh: Sequence[str], full_refresh_all: bool) -> None:
        """Tables of batch DataFrames, written when missing or refreshed (a streaming read of them
        then sees one version per refresh)."""
        from .delta import DeltaTable

        for dataset, df, expectations in self.batch_tables:
            name = dataset.name
            path = self.session._table_path(name)
            if DeltaTable.isDeltaTable(self.session, path) and not full_refresh_all and name not in full_refresh:
                continue
            for expectation, condition, action in expectations:
                if action == "drop":
                    df = df.where(f"({condition}) IS TRUE")
                elif action == "fail" and df.where(f"NOT (({condition}) IS TRUE)").count() > 0:
                    raise SluiceError("EXPECTATION_VIOLATION", f"table {name}: expectation '{expectation}' failed")
            writer = df.write.mode("overwrite")
            if dataset.partition_cols:
                writer = writer.partitionBy(dataset.partition_cols)
            writer.saveAsTable(name)


def run_file(path: str, flows: Sequence[str] = (), full_refresh: Sequence[str] = (), full_refresh_all: bool = False,
             trigger: str = "processing_time", validate_only: bool = False) -> List[Dict[str, Any]]:
    """Loads the pipeline file and its libraries and runs it (or, with ``validate_only``, lists its
    problems in an INVALID_PIPELINE error). Flows declared in Python run with ``trigger``; the
    file's own flows with theirs. Returns the flows' figures."""
    global _graph
    pipeline = _sluice.Pipeline.load(path)
    base = os.path.dirname(os.path.abspath(path))
    # Relative storage and warehouse paths are taken from the pipeline file's directory; URIs of
    # object stores are kept.
    pipeline.set_paths(*(p if "://" in p else os.path.join(base, p) for p in (pipeline.storage, pipeline.warehouse)))
    session = Session(warehouse=pipeline.warehouse, storage=pipeline.storage, ansi=pipeline.ansi)
    for reference in pipeline.foreach_batch_functions:
        if reference.startswith("python:"):
            function = _resolve_function(reference, base)
            pipeline.register_function(reference, _foreach_batch(session, function))
    _graph = _Graph()
    _load_libraries(pipeline.libraries, base, session)
    build = _Build(pipeline, session, trigger)
    build.add(_graph)
    for sink, warning in build.warnings:
        print(warning, file=sys.stderr)
        if not validate_only:
            pipeline.log_warning(sink, warning)
    if validate_only:
        problems = pipeline.validate()
        if problems:
            raise SluiceError("INVALID_PIPELINE", "\n".join(problems))
        return []
    build.write_batch_tables(full_refresh, full_refresh_all)
    return pipeline.run(list(flows), list(full_refresh), full_refresh_all)


def runs_in_python(path: str) -> bool:
    """Whether the pipeline file declares Python: libraries, or foreachBatch functions
    ``python:...`` (False when it does not load)."""
    try:
        pipeline = _sluice.Pipeline.load(path)
    except SluiceError:
        return False
    return bool(pipeline.libraries) or any(f.startswith("python:") for f in pipeline.foreach_batch_functions)


def main(argv: Sequence[str]) -> int:
    """``run FILE [--flow F]... [--full-refresh F]... [--full-refresh-all] [--available-now]`` and
    ``validate FILE``: the pipeline commands for files with Python libraries."""
    parser = argparse.ArgumentParser(prog="sluice")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run")
    run.add_argument("file")
    run.add_argument("--flow", action="append", default=[])
    run.add_argument("--full-refresh", action="append", default=[])
    run.add_argument("--full-refresh-all", action="store_true")
    run.add_argument("--available-now", action="store_true",
                     help="flows declared in Python read what is there now, then end")
    validate = commands.add_parser("validate")
    validate.add_argument("file")
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "validate":
            run_file(arguments.file, validate_only=True)
            print(f"{arguments.file}: valid")
            return 0
        figures = run_file(arguments.file, arguments.flow, arguments.full_refresh, arguments.full_refresh_all,
                           "available_now" if arguments.available_now else "processing_time")
    except SluiceError as error:
        print(str(error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    for flow in figures:
        print(f"flow {flow['name']}: {flow['state']}, {flow['batches']} batch(es), {flow['input_rows']} rows in, "
              f"{flow['output_rows']} rows out")
    return 0
