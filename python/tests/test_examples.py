"""The foreachBatch examples of examples/python/foreach_batch run as pipelines with Python
libraries, and write what their functions say."""
import json
import os
import shutil

import pyarrow as pa
import pytest

import sluice
from sluice import pipelines

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python", "foreach_batch")


@pytest.fixture
def example(tmp_path, monkeypatch):
    def copy(name):
        shutil.copytree(os.path.join(EXAMPLES, name), tmp_path / name)
        monkeypatch.chdir(tmp_path / name)
        return sluice.Session(warehouse="warehouse", storage="storage")

    return copy


def run():
    figures = pipelines.run_file("pipeline.yml", trigger="available_now")
    assert all(f["state"] == "COMPLETED" for f in figures), figures
    return figures


def test_basic_syntax(example):
    spark = example("basic")
    figures = run()
    assert [(f["name"], f["input_rows"]) for f in figures] == [("my_flow", 5)]
    assert sorted(r.id for r in spark.table("example_source_data").collect()) == [0, 1, 2, 3, 4]


def test_multiple_destinations_with_txn_options(example):
    shutil.rmtree("/tmp/json_target", ignore_errors=True)
    spark = example("multiple_destinations")
    run()
    run()  # nothing new: neither destination gets the rows twice
    assert sorted(r.id for r in spark.table("my_catalog.my_schema.example_table_1").collect()) == [0, 1, 2, 3, 4]
    rows = []
    for name in os.listdir("/tmp/json_target"):
        if name.endswith(".json"):
            with open(os.path.join("/tmp/json_target", name)) as lines:
                rows += [json.loads(line)["id"] for line in lines]
    assert sorted(rows) == [0, 1, 2, 3, 4]
    shutil.rmtree("/tmp/json_target")


def test_spark_sql_merge(example):
    spark = example("sql_merge")
    run()
    # Every source id matched a target id: each became id * 10.
    assert sorted(r.id for r in spark.table("target_table").collect()) == [0, 10, 20, 30, 40]


def test_external_delta_merge(example):
    spark = example("external_merge")
    shutil.rmtree("/tmp/source_delta_table", ignore_errors=True)
    spark.createDataFrame(pa.table({"value": pa.array([1, 2, None, 4], pa.int64())})).write.save(
        "/tmp/source_delta_table")
    spark.createDataFrame(pa.table({"value": pa.array([2, 3], pa.int64())})).write.saveAsTable("merge_target")
    run()
    # 2 matched (kept), 1 and 4 inserted, 3 deleted (no source row), the null filtered out.
    assert sorted(r.value for r in spark.table("merge_target").collect()) == [1, 2, 4]
    shutil.rmtree("/tmp/source_delta_table")
