"""The batch copies of bench/pg_batch_bench.sh as Apache Spark does them: a PostgreSQL table read
with Spark's JDBC source and written to a new Delta table, and a Delta table appended to a
PostgreSQL table with Spark's JDBC writer, on the Spark and Delta Lake of the tests
(tests/tools/delta-spark) with the PostgreSQL JDBC driver of bench/spark-jdbc/jars.

Usage: tests/tools/delta-spark/venv/bin/python spark_jdbc_copy.py MODE ARGS...

  read JDBC_URL USER TABLE DELTA_PATH
      reads TABLE over one connection (master local[1]; fetchsize 10000, so that the driver streams
      the rows through a cursor instead of holding the whole result) and writes it to a new Delta
      table at DELTA_PATH (mode errorifexists)
  read-split N JDBC_URL USER TABLE DELTA_PATH
      the same read split N ways (master local[N]): numPartitions N on partitionColumn id, between
      the table's min(id) and max(id), which are queried first (in the timed part: a user has to)
  write DELTA_PATH JDBC_URL USER TABLE
      reads the Delta table at DELTA_PATH and appends it to TABLE, which exists (master local[1];
      batchsize 10000, and reWriteBatchedInserts=true added to the URL, so that the driver sends
      each batch as multi-row INSERTs)

JDBC_URL is jdbc:postgresql://HOST:PORT/DATABASE, with no password (the bench's server trusts
loopback connections). The session is set up as in tests/tools/delta_spark.py (Delta's extension
and catalog, UTC, no UI).

Prints one JSON object: spark (its version), startup_seconds (timed from before the pyspark import
to the session being ready), seconds (the copy itself), rows and sum_amount (of the Delta table
written, for a read; of TABLE after the append, for a write; both counted after the timed part).
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
FETCH_SIZE = "10000"
BATCH_SIZE = "10000"


def session(cores):
    jars = sorted(glob.glob(os.path.join(ROOT, "tests", "tools", "delta-spark", "jars", "*.jar")) +
                  glob.glob(os.path.join(HERE, "spark-jdbc", "jars", "*.jar")))
    return (SparkSession.builder.master(f"local[{cores}]")
            .config("spark.jars", ",".join(jars))
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", str(cores))
            .config("spark.databricks.delta.snapshotPartitions", str(cores))
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate())


def jdbc(spark, url, user):
    return (spark.read.format("jdbc")
            .option("url", url)
            .option("user", user)
            .option("driver", "org.postgresql.Driver")
            .option("fetchsize", FETCH_SIZE))


def read(spark, url, user, table, path, partitions):
    reader = jdbc(spark, url, user).option("dbtable", table)
    if partitions > 1:
        bounds = (jdbc(spark, url, user)
                  .option("query", f"SELECT min(id) AS lo, max(id) AS hi FROM {table}")
                  .load().first())
        reader = (reader.option("partitionColumn", "id")
                  .option("numPartitions", str(partitions))
                  .option("lowerBound", str(bounds["lo"]))
                  .option("upperBound", str(bounds["hi"])))
    reader.load().write.format("delta").mode("errorifexists").save(path)


def write(spark, path, url, user, table):
    separator = "&" if "?" in url else "?"
    (spark.read.format("delta").load(path).write.format("jdbc")
     .option("url", url + separator + "reWriteBatchedInserts=true")
     .option("user", user)
     .option("driver", "org.postgresql.Driver")
     .option("dbtable", table)
     .option("batchsize", BATCH_SIZE)
     .mode("append")
     .save())


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "read":
        cores = 1
    elif mode == "read-split":
        cores = int(args.pop(0))
    elif mode == "write":
        cores = 1
    else:
        raise SystemExit(f"unknown mode {mode}: read, read-split N or write")
    spark = session(cores)
    spark.sparkContext.setLogLevel("ERROR")
    startup = time.monotonic() - START

    copy_start = time.monotonic()
    if mode == "write":
        path, url, user, table = args
        write(spark, path, url, user, table)
    else:
        url, user, table, path = args
        read(spark, url, user, table, path, cores)
    seconds = time.monotonic() - copy_start

    if mode == "write":
        totals = (jdbc(spark, url, user)
                  .option("query", f"SELECT count(*) AS rows, sum(amount)::numeric(38, 2) AS amount FROM {table}")
                  .load().first())
    else:
        totals = (spark.read.format("delta").load(path)
                  .agg(F.count(F.lit(1)).alias("rows"), F.sum("amount").alias("amount")).first())
    print(json.dumps({"spark": spark.version, "startup_seconds": startup, "seconds": seconds,
                      "rows": totals["rows"],
                      "sum_amount": None if totals["amount"] is None else format(totals["amount"], "f")}))
    spark.stop()


if __name__ == "__main__":
    main()
