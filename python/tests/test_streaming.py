"""Streaming queries: foreachBatch with batch ids, replays after a failing callback, progress,
a delta sink with where/select, and two queries in one process that never wait on each other."""
import json
import os
import threading
import time

import pyarrow as pa
import pytest

import sluice


def source_table(spark, commits=4, rows=3, name="main.src.events"):
    for c in range(commits):
        spark.createDataFrame(pa.table({
            "id": pa.array([c * rows + i for i in range(rows)], pa.int64()),
            "kind": pa.array(["odd" if (c * rows + i) % 2 else "even" for i in range(rows)], pa.large_string()),
        })).write.mode("append").saveAsTable(name)
    return name


def stream(spark, name="main.src.events"):
    # From the first commit, one file (one commit) a batch: batches in the order the rows were written.
    return spark.readStream.format("delta").option("startingVersion", 0).option("maxFilesPerTrigger", 1).table(name)


def test_foreach_batch_gets_each_batch_once_with_its_id(spark, tmp_path):
    source_table(spark)
    seen = []

    def handle(batch_df, batch_id):
        seen.append((batch_id, sorted(r.id for r in batch_df.collect())))
        batch_df.write.format("delta").mode("append").option("txnAppId", "app").option("txnVersion", batch_id) \
            .saveAsTable("main.out.a")

    query = (stream(spark).where("kind = 'even'").selectExpr("id", "id * 10 AS x").writeStream.foreachBatch(handle)
             .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    query.awaitTermination()
    assert seen == [(0, [0, 2]), (1, [4]), (2, [6, 8]), (3, [10])]
    assert sorted(r.x for r in spark.table("main.out.a").collect()) == [0, 20, 40, 60, 80, 100]
    assert not query.isActive and query.exception() is None
    progress = query.recentProgress
    assert [p["batchId"] for p in progress] == [0, 1, 2, 3]
    assert [p["numInputRows"] for p in progress] == [3, 3, 3, 3]
    assert query.lastProgress["batchId"] == 3 and query.lastProgress["id"] == query.id
    # A second run of the same checkpoint has nothing new.
    again = stream(spark).writeStream.foreachBatch(handle).option("checkpointLocation", str(tmp_path / "ckpt")) \
        .trigger(availableNow=True).start()
    again.awaitTermination()
    assert len(seen) == 4 and again.id == query.id and again.runId != query.runId


def test_a_failing_callback_stops_the_query_and_its_batch_runs_again(spark, tmp_path):
    source_table(spark, commits=3)
    calls = []

    def fragile(batch_df, batch_id):
        calls.append((batch_id, sorted(r.id for r in batch_df.collect())))
        if batch_id == 1 and len(calls) == 2:
            raise ValueError("bad row in batch one")

    def start():
        return stream(spark).writeStream.foreachBatch(fragile).option("checkpointLocation", str(tmp_path / "c")) \
            .trigger(availableNow=True).start()

    query = start()
    with pytest.raises(sluice.StreamingQueryException) as error:
        query.awaitTermination()
    assert error.value.error_class == "PYTHON_CALLBACK_FAILED"
    assert "ValueError: bad row in batch one" in error.value.message
    assert "in fragile" in error.value.message  # the traceback
    assert query.exception().error_class == "PYTHON_CALLBACK_FAILED"
    start().awaitTermination()
    assert calls == [(0, [0, 1, 2]), (1, [3, 4, 5]), (1, [3, 4, 5]), (2, [6, 7, 8])]


def test_a_delta_sink_with_where_and_select(spark, tmp_path):
    source_table(spark)
    query = (stream(spark).where("kind = 'odd'").select("id", "upper(kind) AS k").writeStream.format("delta")
             .option("checkpointLocation", str(tmp_path / "c")).trigger(once=True).toTable("main.out.odd"))
    query.awaitTermination()
    assert sorted((r.id, r.k) for r in spark.table("main.out.odd").collect()) == [(i, "ODD") for i in range(1, 12, 2)]


def test_two_queries_run_beside_a_waiting_callback(spark, tmp_path):
    source_table(spark)
    release = threading.Event()
    a_batches, b_batches = [], []

    def waits(batch_df, batch_id):
        assert release.wait(60), "query b never finished while a waited"
        a_batches.append(batch_id)

    def quick(batch_df, batch_id):
        b_batches.append(batch_df.count())

    a = stream(spark).writeStream.foreachBatch(waits).option("checkpointLocation", str(tmp_path / "a")) \
        .trigger(availableNow=True).start()
    b = stream(spark).writeStream.foreachBatch(quick).option("checkpointLocation", str(tmp_path / "b")) \
        .trigger(availableNow=True).start()
    b.awaitTermination()
    assert b_batches == [3, 3, 3, 3]
    assert a.isActive and a_batches == []
    release.set()
    a.awaitTermination()
    assert a_batches == [0, 1, 2, 3]


def test_wrong_stream_settings_are_refused(spark, tmp_path):
    source_table(spark, commits=1)
    cases = [
        (lambda: stream(spark).writeStream.foreachBatch(print).start(), "INVALID_OPTIONS"),
        (lambda: stream(spark).writeStream.queryName("../x").foreachBatch(print).start(), "INVALID_OPTIONS"),
        (lambda: stream(spark).writeStream.trigger(once=True, availableNow=True), "INVALID_OPTIONS"),
        (lambda: stream(spark).writeStream.trigger(processingTime="often"), None),
        (lambda: stream(spark).writeStream.format("delta").outputMode("complete")
         .option("checkpointLocation", str(tmp_path / "c")).toTable("main.x.y"), "UNSUPPORTED_OUTPUT_MODE"),
        (lambda: spark.readStream.format("delta").option("nosuch", 1).table("main.src.events").writeStream
         .foreachBatch(print).option("checkpointLocation", str(tmp_path / "d")).start(), "INVALID_OPTIONS"),
        (lambda: stream(spark).count(), "NOT_IMPLEMENTED"),
    ]
    for action, error_class in cases:
        if error_class is None:
            writer = action()
            with pytest.raises(sluice.SluiceError) as error:
                writer.foreachBatch(print).option("checkpointLocation", str(tmp_path / "e")).start()
            assert error.value.error_class == "INVALID_OPTIONS"
            continue
        with pytest.raises(sluice.SluiceError) as error:
            action()
        assert error.value.error_class == error_class, str(error.value)


def test_rate_console_and_memory(spark, tmp_path, capfd):
    two_seconds_ago = int(time.time() * 1000) - 2000
    rows = spark.read.format("rate").option("rowsPerSecond", 1000).option("startTimestamp", two_seconds_ago).load()
    assert rows.columns == ["timestamp", "value"]
    values = [r.value for r in rows.collect()]
    assert values == list(range(len(values))) and 2000 <= len(values) < 60000
    source_table(spark, commits=2)
    (stream(spark).where("id < 4").writeStream.format("console").trigger(availableNow=True).start()
     .awaitTermination())
    printed = capfd.readouterr().out
    assert "Batch: 0" in printed and "Batch: 1" in printed and "|  3|" in printed and "|  4|" not in printed
    query = (stream(spark).writeStream.format("memory").option("queryName", "events_copy")
             .trigger(availableNow=True).start())
    query.awaitTermination()
    assert [p["numInputRows"] for p in query.recentProgress] == [3, 3]


def test_the_session_knows_its_queries(spark, tmp_path):
    source_table(spark, commits=2)
    release = threading.Event()

    def waits(batch_df, batch_id):
        release.wait(60)

    def fails(batch_df, batch_id):
        raise RuntimeError("no")

    waiting = stream(spark).writeStream.foreachBatch(waits).option("checkpointLocation", str(tmp_path / "a")) \
        .trigger(availableNow=True).start()
    assert [q.id for q in spark.streams.active] == [waiting.id]
    assert spark.streams.get(waiting.id) is waiting and spark.streams.get("nosuch") is None
    assert spark.streams.awaitAnyTermination(timeout=0.1) is False
    release.set()
    assert spark.streams.awaitAnyTermination(timeout=30) is True
    assert spark.streams.active == []
    spark.streams.resetTerminated()
    stream(spark).writeStream.foreachBatch(fails).option("checkpointLocation", str(tmp_path / "b")) \
        .trigger(availableNow=True).start()
    with pytest.raises(sluice.StreamingQueryException) as error:
        spark.streams.awaitAnyTermination()
    assert error.value.error_class == "PYTHON_CALLBACK_FAILED"


def test_a_delta_sink_partitioned_by_a_column(spark, tmp_path):
    source_table(spark)
    query = (stream(spark).select("id", "kind").writeStream.partitionBy("KIND").format("delta")
             .option("checkpointLocation", str(tmp_path / "c")).trigger(once=True).toTable("main.out.by_kind"))
    query.awaitTermination()
    path = spark._table_path("main.out.by_kind")
    assert delta_partition_columns(path) == ["kind"]
    assert sorted(d for d in os.listdir(path) if not d.startswith("_")) == ["kind=even", "kind=odd"]
    assert sorted((r.id, r.kind) for r in spark.table("main.out.by_kind").collect()) == \
        [(i, "odd" if i % 2 else "even") for i in range(12)]


def delta_partition_columns(path):
    """The partition columns the table's first commit records, read from the log itself."""
    with open(os.path.join(path, "_delta_log", "00000000000000000000.json")) as log:
        for line in log:
            action = json.loads(line)
            if "metaData" in action:
                return action["metaData"]["partitionColumns"]
    return None


def test_uuid_and_rand_differ_across_the_files_of_one_batch(spark, tmp_path):
    """A batch read from four files comes in four pieces: uuid() gives every row its own value and
    rand(42) continues Spark's sequence across them (row n of the batch, its n-th value)."""
    source_table(spark)
    query = (spark.readStream.format("delta").option("startingVersion", 0).table("main.src.events")
             .selectExpr("id", "uuid() AS u", "rand(42) AS r").writeStream.format("delta")
             .option("checkpointLocation", str(tmp_path / "c")).trigger(availableNow=True).toTable("main.out.drawn"))
    query.awaitTermination()
    rows = spark.table("main.out.drawn").collect()
    assert len(rows) == 12
    assert len({row.u for row in rows}) == 12
    assert len({row.r for row in rows}) == 12
    assert min(row.r for row in rows) >= 0 and max(row.r for row in rows) < 1
    assert 0.619189370225301 in {row.r for row in rows}  # Spark's rand(42) of a partition's first row
