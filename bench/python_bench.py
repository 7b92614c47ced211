"""The Python package's costs, each beside a reference measured in the same run:

1. a 1 M-row batch handed to Python as a pyarrow.Table (DataFrame.to_arrow), against pyarrow
   importing the same table through the same C stream interface, and PySpark's toArrow() of the
   same rows (local[1]);
2. the per-batch overhead of an empty Python foreachBatch function: the same query into the
   `memory` sink (no Python) and into foreachBatch, one file per batch; and PySpark's
   foreachBatch over one Parquet file per batch;
3. rows/s of rate -> foreachBatch(to_arrow), and PySpark's rate -> foreachBatch(toArrow);
4. a 5 M-row pyarrow.Table written as a new Delta table (df.write.format("delta").save), against
   delta-rs's write_deltalake of the same table (the Python peer) and pyarrow.parquet.write_table
   of it as one file (the bare Parquet write), each table read back and counted.

    tests/tools/venv/bin/python bench/python_bench.py [--no-spark]

Run with the package installed (pip install .). Spark runs on the machine's Java 17.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

import sluice

ROWS = 1_000_000
WRITE_ROWS = 5_000_000


def median_seconds(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table_of(rows):
    return pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "x": pa.array([i * 0.5 for i in range(rows)], pa.float64()),
        "s": pa.array([f"row-{i}" for i in range(rows)], pa.large_string()),
    })


def handoff(spark, table, with_spark):
    df = spark.createDataFrame(table)
    ours = median_seconds(df.to_arrow, 50)
    pyarrow_alone = median_seconds(lambda: pa.table(table), 50)
    reader = median_seconds(lambda: pa.RecordBatchReader.from_stream(table).read_all(), 50)
    print(f"1. 1 M rows to a pyarrow.Table: sluice {ours * 1e3:.3f} ms; pyarrow's own C-stream import "
          f"{reader * 1e3:.3f} ms (ratio {reader / ours:.2f}x); pa.table(table) {pyarrow_alone * 1e3:.3f} ms")
    if with_spark:
        session = spark_session()
        spark_df = session.createDataFrame(table.to_pandas()).cache()
        spark_df.count()
        theirs = median_seconds(spark_df.toArrow, 3)
        print(f"   PySpark toArrow() of the same rows: {theirs * 1e3:.1f} ms ({theirs / ours:.0f}x sluice's time)")


def per_batch(spark, root, batches, with_spark):
    for i in range(batches):
        spark.createDataFrame(pa.table({"id": pa.array([i], pa.int64())})).write.mode("append").saveAsTable(
            "main.bench.tiny")

    def run(sink):
        stream = spark.readStream.format("delta").option("maxFilesPerTrigger", 1).table("main.bench.tiny")
        writer = stream.writeStream.option("checkpointLocation", tempfile.mkdtemp(dir=root)).trigger(availableNow=True)
        writer = writer.foreachBatch(sink) if callable(sink) else writer.format(sink).option("queryName", "bench")
        start = time.perf_counter()
        writer.start().awaitTermination()
        return (time.perf_counter() - start) / batches

    memory = run("memory")
    python = run(lambda df, batch_id: None)
    print(f"2. per batch, {batches} batches of one file: memory sink {memory * 1e3:.2f} ms, empty Python "
          f"foreachBatch {python * 1e3:.2f} ms: the Python call adds {(python - memory) * 1e6:.0f} µs")
    if with_spark:
        folder = os.path.join(root, "spark-files")
        os.makedirs(folder)
        for i in range(batches):
            pq.write_table(pa.table({"id": pa.array([i], pa.int64())}), os.path.join(folder, f"{i:05}.parquet"))
        session = spark_session()
        stream = session.readStream.schema("id BIGINT").option("maxFilesPerTrigger", 1).parquet(folder)
        start = time.perf_counter()
        stream.writeStream.foreachBatch(lambda df, batch_id: None).option(
            "checkpointLocation", os.path.join(root, "spark-ckpt")).trigger(availableNow=True).start().awaitTermination()
        theirs = (time.perf_counter() - start) / batches
        print(f"   PySpark foreachBatch per batch, one Parquet file each: {theirs * 1e3:.1f} ms "
              f"({theirs / python:.0f}x sluice's)")


def throughput(spark, root, seconds, with_spark):
    rows = [0]

    def count(df, batch_id):
        rows[0] += df.to_arrow().num_rows

    # More rows a second than one core can generate: the query, not the rate, sets the pace.
    start = time.perf_counter()
    query = (spark.readStream.format("rate").option("rowsPerSecond", 500_000_000).option("maxRowsPerBatch", 1_000_000)
             .load().writeStream.foreachBatch(count).option("checkpointLocation", tempfile.mkdtemp(dir=root)).start())
    time.sleep(seconds)
    query.stop()
    elapsed = time.perf_counter() - start
    ours = rows[0] / elapsed
    print(f"3. rate -> foreachBatch(to_arrow): {rows[0]} rows in {elapsed:.2f} s, {ours / 1e6:.2f} M rows/s "
          f"({len(query.recentProgress)} batches)")
    if with_spark:
        session = spark_session()
        spark_rows = [0]

        def spark_count(df, batch_id):
            spark_rows[0] += df.toArrow().num_rows

        start = time.perf_counter()
        q = (session.readStream.format("rate").option("rowsPerSecond", 1_000_000).load().writeStream
             .foreachBatch(spark_count).option("checkpointLocation", os.path.join(root, "spark-rate")).start())
        time.sleep(seconds)
        q.stop()
        theirs = spark_rows[0] / (time.perf_counter() - start)
        print(f"   PySpark rate -> foreachBatch(toArrow): {theirs / 1e6:.2f} M rows/s ({ours / theirs:.1f}x "
              "in sluice's favour)")


def delta_writes(spark, root):
    import deltalake

    table = table_of(WRITE_ROWS)
    runs = {"sluice": [], "write_deltalake": [], "pyarrow.parquet": []}
    for run in range(3):
        paths = {name: os.path.join(root, f"write-{name}-{run}") for name in runs}
        start = time.perf_counter()
        spark.createDataFrame(table).write.format("delta").save(paths["sluice"])
        runs["sluice"].append(time.perf_counter() - start)
        start = time.perf_counter()
        deltalake.write_deltalake(paths["write_deltalake"], table)
        runs["write_deltalake"].append(time.perf_counter() - start)
        os.makedirs(paths["pyarrow.parquet"])
        start = time.perf_counter()
        pq.write_table(table, os.path.join(paths["pyarrow.parquet"], "part-0.parquet"))
        runs["pyarrow.parquet"].append(time.perf_counter() - start)
        for name in ("sluice", "write_deltalake"):
            counted = deltalake.DeltaTable(paths[name]).to_pyarrow_table().num_rows
            if counted != WRITE_ROWS or spark.read.format("delta").load(paths[name]).count() != WRITE_ROWS:
                raise SystemExit(f"the {name} table does not hold {WRITE_ROWS} rows")
    best = {name: min(times) for name, times in runs.items()}
    rate = {name: WRITE_ROWS / seconds for name, seconds in best.items()}
    print(f"4. {WRITE_ROWS:,} rows written as a new Delta table (best of 3): sluice {best['sluice']:.3f} s "
          f"({rate['sluice']:,.0f} rows/s); delta-rs write_deltalake {best['write_deltalake']:.3f} s "
          f"({rate['write_deltalake']:,.0f} rows/s, sluice {best['write_deltalake'] / best['sluice']:.2f}x); "
          f"pyarrow.parquet.write_table {best['pyarrow.parquet']:.3f} s "
          f"(sluice {best['pyarrow.parquet'] / best['sluice']:.2f}x)")


_spark = None


def spark_session():
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession

        _spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                  .config("spark.sql.shuffle.partitions", "1").getOrCreate())
        _spark.sparkContext.setLogLevel("ERROR")
    return _spark


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--only-writes", action="store_true", help="run part 4 alone")
    arguments = parser.parse_args()
    with_spark = not arguments.no_spark
    with tempfile.TemporaryDirectory() as root:
        spark = sluice.Session(warehouse=os.path.join(root, "w"), storage=os.path.join(root, "s"))
        if not arguments.only_writes:
            handoff(spark, table_of(ROWS), with_spark)
            per_batch(spark, root, arguments.batches, with_spark)
            throughput(spark, root, arguments.seconds, with_spark)
        delta_writes(spark, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
