"""Pipelines with Python libraries: decorators, expectations, YAML sinks naming Python functions,
validation, the pickling warning, and `sluice run` handing such a file to Python."""
import json
import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import sluice
from sluice import pipelines


def write(path, text):
    path.write_text(textwrap.dedent(text))


def test_tables_flows_expectations_and_a_yaml_sink_with_a_python_function(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spark = sluice.Session(warehouse="warehouse", storage="storage")
    spark.createDataFrame(pa.table({"id": pa.array(range(10), pa.int64()),
                                    "amount": pa.array([5, -1, 7, 8, -2, 10, 11, 12, 13, 14], pa.int64())})) \
        .write.saveAsTable("main.raw.orders")
    (tmp_path / "handlers").mkdir()
    write(tmp_path / "handlers" / "audit.py", """
        seen = []
        def handle(df, batch_id):
            df.write.mode("append").option("txnAppId", "audit").option("txnVersion", batch_id) \\
                .saveAsTable("main.out.audit")
    """)
    write(tmp_path / "transformations.py", """
        from sluice import pipelines as dp

        dp.create_streaming_table("main.out.big", partition_cols=["cents"])

        @dp.materialized_view(name="main.out.signs", partition_cols=["positive"])
        def signs():
            return spark.table("main.raw.orders").selectExpr("id", "amount > 0 AS positive")

        @dp.table(name="main.out.valid")
        @dp.expect_or_drop("positive", "amount > 0")
        def valid():
            return spark.readStream.table("main.raw.orders")

        @dp.append_flow(target="main.out.big", name="big_orders")
        @dp.expect("very big", "cents > 1200")
        def big():
            return spark.readStream.table("main.out.valid").where("amount > 10").select("id", "amount * 100 AS cents")

        @dp.foreach_batch_sink(name="counter")
        def counter(df, batch_id):
            df.write.mode("append").option("txnAppId", "counter").option("txnVersion", batch_id) \\
                .saveAsTable("main.out.counted")

        @dp.append_flow(target="counter")
        def to_counter():
            return spark.readStream.table("main.raw.orders")
    """)
    write(tmp_path / "pipeline.yml", """
        name: py
        storage: storage
        warehouse: warehouse
        libraries: [transformations.py]
        sinks:
          audit: {format: foreachBatch, options: {function: "python:handlers.audit:handle"}}
        flows:
          - name: audit_flow
            source: {format: delta, table: main.raw.orders}
            sink: audit
            trigger: available_now
    """)
    figures = {f["name"]: f for f in pipelines.run_file("pipeline.yml", trigger="available_now")}
    assert {name: f["state"] for name, f in figures.items()} == {
        "audit_flow": "COMPLETED", "valid": "COMPLETED", "big_orders": "COMPLETED", "to_counter": "COMPLETED"}
    assert sorted(r.amount for r in spark.table("main.out.valid").collect()) == [5, 7, 8, 10, 11, 12, 13, 14]
    assert sorted(r.cents for r in spark.table("main.out.big").collect()) == [1100, 1200, 1300, 1400]
    assert spark.table("main.out.counted").count() == 10
    assert spark.table("main.out.audit").count() == 10
    for table, partitioned_by in (("main.out.big", ["cents"]), ("main.out.signs", ["positive"]),
                                  ("main.out.valid", [])):
        path = os.path.join("warehouse", *table.split("."))
        with open(os.path.join(path, "_delta_log", "00000000000000000000.json")) as log:
            assert [json.loads(line)["metaData"]["partitionColumns"] for line in log
                    if "metaData" in json.loads(line)] == [partitioned_by], table
    assert sorted(d for d in os.listdir(os.path.join("warehouse", "main", "out", "signs"))
                  if not d.startswith("_")) == ["positive=false", "positive=true"]
    assert sorted((r.id, r.positive) for r in spark.table("main.out.signs").collect()) == \
        [(i, i not in (1, 4)) for i in range(10)]
    events = [json.loads(line) for line in open(os.path.join("storage", "system", "events.jsonl"))]
    sinks = {e["origin"]["dataset"]: e["message"] for e in events if e["event_type"] == "sink_definition"}
    assert "foreachBatch" in sinks["counter"] and "foreachBatch" in sinks["audit"], sinks
    # A second run reads nothing new; a full refresh of flows rebuilds their tables.
    pipelines.run_file("pipeline.yml", trigger="available_now")
    assert spark.table("main.out.counted").count() == 10
    versions = len(sluice.DeltaTable.forName(spark, "main.out.big").history().collect())
    pipelines.run_file("pipeline.yml", trigger="available_now", full_refresh=["big_orders"])
    assert spark.table("main.out.big").count() == 4 and spark.table("main.out.valid").count() == 8
    assert len(sluice.DeltaTable.forName(spark, "main.out.big").history().collect()) > versions


def test_validation_and_wrong_libraries(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pipeline.yml", """
        name: py
        storage: storage
        libraries: [lib.py]
    """)
    write(tmp_path / "lib.py", """
        import threading
        from sluice import pipelines as dp
        lock = threading.Lock()

        @dp.foreach_batch_sink(name="holds_a_lock")
        def holds(df, batch_id):
            with lock:
                pass

        @dp.append_flow(target="holds_a_lock")
        def reads():
            return spark.readStream.format("delta").option("nosuch", 1).table("main.a.b")
    """)
    with pytest.raises(sluice.SluiceError) as error:
        pipelines.run_file("pipeline.yml", validate_only=True)
    assert error.value.error_class == "INVALID_PIPELINE" and "nosuch" in error.value.message
    assert "cannot be pickled" in capsys.readouterr().err
    with pytest.raises(sluice.SluiceError) as error:
        pipelines.run_file("pipeline.yml")
    warnings = [json.loads(line) for line in open(os.path.join("storage", "system", "events.jsonl"))]
    assert [(w["level"], w["event_type"], w["origin"]["dataset"]) for w in warnings] == [
        ("WARN", "warning", "holds_a_lock")]
    assert "`lock` (lock)" in warnings[0]["message"]
    write(tmp_path / "pipeline.yml", """
        name: py
        storage: storage
        libraries: [missing/*.py]
    """)
    with pytest.raises(sluice.SluiceError) as error:
        pipelines.run_file("pipeline.yml")
    assert error.value.error_class == "INVALID_PIPELINE" and "missing/*.py" in error.value.message
    write(tmp_path / "pipeline.yml", """
        name: py
        storage: storage
        libraries: [lib2.py]
    """)
    write(tmp_path / "lib2.py", """
        from sluice import pipelines as dp
        @dp.append_flow(target="main.x.y")
        def batch():
            return spark.range(3)
    """)
    with pytest.raises(sluice.SluiceError) as error:
        pipelines.run_file("pipeline.yml")
    assert error.value.error_class == "INVALID_PIPELINE" and "streaming" in error.value.message


def test_the_command_line_runs_a_pipeline_with_libraries(tmp_path):
    write(tmp_path / "pipeline.yml", """
        name: py
        storage: storage
        warehouse: warehouse
        libraries: [lib.py]
    """)
    write(tmp_path / "lib.py", """
        from sluice import pipelines as dp

        @dp.table()
        def numbers():
            return spark.range(4)

        @dp.table()
        def doubled():
            return spark.readStream.table("numbers").select("id * 2 AS twice")
    """)
    command = [sys.executable, "-m", "sluice"]
    validate = subprocess.run(command + ["validate", "pipeline.yml"], cwd=tmp_path, capture_output=True, text=True)
    assert validate.returncode == 0, validate.stderr
    run = subprocess.run(command + ["run", "pipeline.yml", "--available-now"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "flow doubled: COMPLETED, 1 batch(es), 4 rows in, 4 rows out" in run.stdout
    # The sluice binary hands the file to Python (SLUICE_PYTHON names the interpreter).
    binary = os.path.join(os.path.dirname(sluice.__file__), "bin", "sluice")
    handed = subprocess.run([binary, "validate", "pipeline.yml"], cwd=tmp_path, capture_output=True, text=True,
                            env=dict(os.environ, SLUICE_PYTHON=sys.executable))
    assert handed.returncode == 0 and "valid" in handed.stdout, handed.stderr
    # status lists the flows the libraries declared, from the run's events, from any directory.
    status = subprocess.run([binary, "status", str(tmp_path / "pipeline.yml"), "--json"], capture_output=True,
                            text=True)
    assert status.returncode == 0, status.stderr
    doubled = [flow for flow in json.loads(status.stdout)["flows"] if flow["name"] == "doubled"]
    assert [(f["kind"], f["state"], f["last_batch"], f["batch_input_rows"], f["batch_output_rows"]) for f in doubled] \
        == [("flow", "COMPLETED", 0, 4, 4)], status.stdout


def plain(df, batch_id):
    return batch_id + 1


def test_the_pickling_check_names_what_cannot_move():
    import functools
    import socket
    import threading

    connection = socket.socket()
    try:
        def closes_over(df, batch_id):
            connection.send(b"")

        lock = threading.Lock()
        assert "`connection` (socket)" in pipelines._unpicklable_warning("s", closes_over)
        assert pipelines._unpicklable_warning("s", plain) is None
        assert "cannot be pickled" in pipelines._unpicklable_warning("s", functools.partial(plain, lock))
        assert pipelines._unpicklable_warning("s", functools.partial(plain, 1)) is None
    finally:
        connection.close()


def test_a_full_refresh_starts_a_python_sinks_batch_ids_at_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spark = sluice.Session(warehouse="warehouse", storage="storage")
    for commit in range(2):
        spark.range(commit * 3, commit * 3 + 3).write.mode("append").saveAsTable("main.raw.n")
    write(tmp_path / "pipeline.yml", """
        name: ids
        storage: storage
        warehouse: warehouse
        libraries: [lib.py]
    """)
    write(tmp_path / "lib.py", """
        from sluice import pipelines as dp

        @dp.foreach_batch_sink(name="ids")
        def ids(df, batch_id):
            with open("ids.txt", "a") as out:
                out.write(f"{batch_id}:{sorted(r.id for r in df.collect())}\\n")

        @dp.append_flow(target="ids")
        def numbers():
            return spark.readStream.format("delta").option("maxFilesPerTrigger", 1).table("main.raw.n")
    """)
    pipelines.run_file("pipeline.yml", trigger="available_now")
    pipelines.run_file("pipeline.yml", trigger="available_now")
    pipelines.run_file("pipeline.yml", trigger="available_now", full_refresh=["numbers"])
    assert (tmp_path / "ids.txt").read_text().splitlines() == ["0:[0, 1, 2]", "1:[3, 4, 5]"] * 2


def test_a_pipelines_aggregations_keep_their_state_in_rocksdb_when_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spark = sluice.Session(warehouse="warehouse", storage="storage")

    def add(values):
        spark.createDataFrame(pa.table({"k": pa.array([v % 7 for v in values], pa.int64()),
                                        "v": pa.array(values, pa.int64())})) \
            .write.mode("append").saveAsTable("main.raw.events")

    write(tmp_path / "pipeline.yml", """
        name: agg
        storage: storage
        warehouse: warehouse
        state: {store: rocksdb}
        sinks:
          totals: {format: delta, table: main.out.totals}
        flows:
          - name: totals
            sql: SELECT k, count(*) AS n, sum(v) AS s, max(v) AS top FROM STREAM(main.raw.events) GROUP BY k
            sink: totals
            output_mode: complete
            trigger: available_now
    """)
    seen = []
    for values in (list(range(0, 100)), list(range(100, 250)), [1000]):
        add(values)
        seen += values
        pipelines.run_file("pipeline.yml", trigger="available_now")
        expected = sorted((k, sum(1 for v in seen if v % 7 == k), sum(v for v in seen if v % 7 == k),
                           max(v for v in seen if v % 7 == k)) for k in {v % 7 for v in seen})
        assert sorted((r.k, r.n, r.s, r.top) for r in spark.table("main.out.totals").collect()) == expected
    state = os.path.join("storage", "checkpoints", "totals", "state", "0")
    assert sorted(f for f in os.listdir(state) if f.endswith(".rocksdb")) == ["0.rocksdb", "1.rocksdb", "2.rocksdb"]
    assert os.listdir(os.path.join(state, "sst")) and not any(f.endswith(".parquet") for f in os.listdir(state))
    # Another store is named in the error, and a checkpoint keeps the store it started with.
    text = (tmp_path / "pipeline.yml").read_text()
    (tmp_path / "pipeline.yml").write_text(text.replace("store: rocksdb", "store: disk"))
    with pytest.raises(sluice.SluiceError, match="state.store: expected memory or rocksdb, got 'disk'"):
        pipelines.run_file("pipeline.yml", trigger="available_now")
    (tmp_path / "pipeline.yml").write_text(text.replace("store: rocksdb", "store: memory"))
    add([2000])
    with pytest.raises(sluice.SluiceError, match="CANNOT_LOAD_STATE_STORE.*holds the state of the rocksdb state store"):
        pipelines.run_file("pipeline.yml", trigger="available_now")
    # A full refresh starts the flow's checkpoint, and its state, again in the store asked for.
    pipelines.run_file("pipeline.yml", trigger="available_now", full_refresh=["totals"])
    assert sum(r.n for r in spark.table("main.out.totals").collect()) == len(seen) + 1
    assert any(f.endswith(".parquet") for f in os.listdir(state))
