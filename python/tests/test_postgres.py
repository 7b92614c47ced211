"""PostgreSQL through the API against a real PostgreSQL 15 (the embedded server of
`sluice postgres-embedded`): batch writes in each save mode, query pass-through reads, and a
streaming upsert from Delta."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pyarrow as pa
import pytest

import sluice


@pytest.fixture(scope="module")
def postgres():
    # Not under pytest's folder: PostgreSQL runs as its own OS user, which must reach the data.
    folder = tempfile.mkdtemp(prefix="sluice-python-postgres-", dir="/var/tmp")
    os.chmod(folder, 0o755)
    server = subprocess.Popen([sys.executable, "-m", "sluice", "postgres-embedded", "--dir", folder + "/data"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if not line:
        server.wait(30)
        pytest.fail("the embedded PostgreSQL did not start: " + server.stderr.read())
    fields = {key: value.strip("'") for key, value in (part.split("=", 1) for part in line.split())}
    yield {"host": fields["host"], "port": fields["port"], "user": fields["user"], "database": "postgres"}
    server.send_signal(signal.SIGTERM)
    server.wait(60)
    shutil.rmtree(folder, ignore_errors=True)


def orders(spark, ids):
    return spark.createDataFrame(pa.table({
        "id": pa.array(ids, pa.int64()),
        "item": pa.array([f"item {i}" if i % 3 else None for i in ids], pa.large_string()),
        "total": pa.array([i * 1.25 for i in ids], pa.float64()),
    }))


def read(spark, postgres, query):
    return [r.asDict() for r in spark.read.format("postgresql").options(**postgres).option("query", query).load()
            .collect()]


def test_batch_writes_by_mode_and_query_reads(spark, postgres):
    writer = lambda df: df.write.format("postgresql").options(**postgres).option("dbtable", "orders")  # noqa: E731
    writer(orders(spark, [1, 2, 3])).save()
    with pytest.raises(sluice.SluiceError):
        writer(orders(spark, [4])).save()  # errorifexists, PySpark's default
    writer(orders(spark, [9])).mode("ignore").save()
    writer(orders(spark, [4, 5])).mode("append").save()
    assert read(spark, postgres, "SELECT id, item, total FROM orders ORDER BY id") == [
        {"id": i, "item": f"item {i}" if i % 3 else None, "total": i * 1.25} for i in [1, 2, 3, 4, 5]]
    writer(orders(spark, [7])).mode("overwrite").save()
    assert read(spark, postgres, "SELECT count(*) AS n, max(id) AS top FROM orders") == [{"n": 1, "top": 7}]
    whole = spark.read.format("postgresql").options(**postgres).option("dbtable", "orders").load()
    assert whole.columns == ["id", "item", "total"] and whole.count() == 1
    with pytest.raises(sluice.SluiceError) as error:
        spark.read.format("postgresql").options(**postgres).option("query", "SELECT nosuch FROM orders").load()
    assert error.value.error_class != "INTERNAL_ERROR"


def test_a_stream_upserts_into_postgres(spark, postgres, tmp_path):
    for ids in ([1, 2, 3], [2, 3, 4]):
        spark.createDataFrame(pa.table({"id": pa.array(ids, pa.int64()),
                                        "qty": pa.array([i * 10 + len(ids) for i in ids], pa.int64())})) \
            .write.mode("append").saveAsTable("main.s.stock")
    query = (spark.readStream.format("delta").option("maxFilesPerTrigger", 1).table("main.s.stock")
             .writeStream.format("postgresql").options(**postgres).option("dbtable", "stock").option("upsertkey", "id")
             .option("checkpointLocation", str(tmp_path / "c")).outputMode("update").trigger(availableNow=True).start())
    query.awaitTermination()
    assert read(spark, postgres, "SELECT id, qty FROM stock ORDER BY id") == [
        {"id": 1, "qty": 13}, {"id": 2, "qty": 23}, {"id": 3, "qty": 33}, {"id": 4, "qty": 43}]
    assert [p["numInputRows"] for p in query.recentProgress] == [3, 3]
