"""The Kafka-to-Delta stream of bench/kafka_delta_peers_bench, as Spark Structured Streaming runs
it: the topic's JSON values parsed with from_json into the columns of sluice's ingestion table
(key, value, stream_record_timestamp, record_source, kafka_topic, kafka_partition, kafka_offset),
appended to a Delta table with trigger availableNow and the same maxOffsetsPerTrigger.

Usage: tests/tools/delta-spark/venv/bin/python spark_kafka_to_delta.py BOOTSTRAP TOPIC SCHEMA_DDL
           MAX_OFFSETS_PER_TRIGGER TABLE CHECKPOINT

Prints one JSON object: startup_seconds (the session), query_seconds (start to the end of the
last batch), rows (in the table), batches.
"""
import glob
import json
import os
import sys
import time

START = time.monotonic()

from pyspark.sql import SparkSession  # noqa: E402 (timed from before the import)
from pyspark.sql import functions as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main() -> None:
    bootstrap, topic, schema, max_offsets, table, checkpoint = sys.argv[1:7]
    jars = sorted(glob.glob(os.path.join(ROOT, "tests", "tools", "delta-spark", "jars", "*.jar")) +
                  glob.glob(os.path.join(HERE, "spark", "jars", "*.jar")))
    spark = (SparkSession.builder.master("local[*]")
             .config("spark.jars", ",".join(jars))
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.databricks.delta.snapshotPartitions", "2")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    startup = time.monotonic() - START
    records = (spark.readStream.format("kafka")
               .option("kafka.bootstrap.servers", bootstrap)
               .option("subscribe", topic)
               .option("startingOffsets", "earliest")
               .option("maxOffsetsPerTrigger", max_offsets)
               .load())
    rows = records.select(
        F.col("key").cast("string").alias("key"),
        F.from_json(F.col("value").cast("string"), schema).alias("value"),
        F.col("timestamp").alias("stream_record_timestamp"),
        F.lit("stream").alias("record_source"),
        F.col("topic").alias("kafka_topic"),
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"))
    query_start = time.monotonic()
    query = (rows.writeStream.format("delta")
             .option("checkpointLocation", checkpoint)
             .trigger(availableNow=True)
             .start(table))
    query.awaitTermination()
    query_seconds = time.monotonic() - query_start
    batches = len(query.recentProgress)
    count = spark.read.format("delta").load(table).count()
    print(json.dumps({"startup_seconds": startup, "query_seconds": query_seconds, "rows": count,
                      "batches": batches}))
    spark.stop()


if __name__ == "__main__":
    main()
