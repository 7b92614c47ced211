"""Apache Spark with Delta Lake as an independent reader and writer of Delta tables, for
src/delta/delta_spark_interop_integration_test.cc: one local[1] session runs every command given.

Usage: delta-spark/venv/bin/python delta_spark.py COMMAND... > rows.json

  read:PATH          reads the table at PATH as Spark does
  rowids:PATH        reads each row's `id` with its row id and row commit version
                     (_metadata.row_id, _metadata.row_commit_version) of a row-tracking table
  sql:QUERY          runs a query (tables as delta.`PATH`) and gives its rows
  write:KIND:PATH    creates a table at PATH, changes it, then reads it back. KIND: `name` or
                     `id`, column mapping in that mode with deletion vectors, changed the ways that
                     leave physical names apart from logical ones (write_mapped); `v2-json` or
                     `v2-parquet`, V2 checkpoints with that top-level file and sidecars
                     (write_v2_checkpoints); `widened`, columns widened by type widening
                     (write_widened); `rowtracking`, a table with row tracking and deletion
                     vectors, rows inserted twice (write_row_tracking)

The output is one JSON object: for each command, the table's rows as Spark reads them, each a JSON
array of the columns' values in table order as sluice renders them (structs and maps as objects,
dates and timestamps in ISO-8601, timestamps in UTC with a Z, binary in base64, decimals as
strings), compact, sorted; or {"error": "..."} when the command failed. The session's jars come from
tests/tools/delta-spark/jars (scripts/install-test-tools.sh).
"""
import base64
import datetime
import glob
import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.types import ArrayType, BinaryType, DecimalType, MapType, StructType, TimestampType

HERE = os.path.dirname(os.path.abspath(__file__))
# PySpark gives timestamps in the process's time zone; the session's is UTC too.
os.environ["TZ"] = "UTC"
time.tzset()


def session():
    jars = sorted(glob.glob(os.path.join(HERE, "delta-spark", "jars", "*.jar")))
    return (SparkSession.builder.master("local[1]")
            .config("spark.jars", ",".join(jars))
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.databricks.delta.snapshotPartitions", "1")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.ui.enabled", "false")
            .getOrCreate())


def plain(value, data_type):
    """A value of `data_type` as sluice renders it in JSON: rows as objects in field order, maps as
    objects, dates and timestamp_ntz values in ISO-8601, timestamps in UTC with a Z, binary in
    base64, decimals in positional notation (as strings)."""
    if value is None:
        return None
    if isinstance(data_type, StructType):
        return {field.name: plain(value[field.name], field.dataType) for field in data_type.fields}
    if isinstance(data_type, MapType):
        return {str(plain(k, data_type.keyType)): plain(v, data_type.valueType) for k, v in value.items()}
    if isinstance(data_type, ArrayType):
        return [plain(v, data_type.elementType) for v in value]
    if isinstance(data_type, TimestampType):
        return value.isoformat() + "Z"  # the session and the process run in UTC
    if isinstance(data_type, BinaryType):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(data_type, DecimalType):
        return format(value, "f")
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def rows(spark, path):
    return rendered(spark.read.format("delta").load(path))


def rendered(frame):
    fields = frame.schema.fields
    lines = [json.dumps([plain(v, field.dataType) for v, field in zip(row, fields)], ensure_ascii=False,
                        separators=(",", ":"))
             for row in frame.collect()]
    return sorted(lines)


def write_mapped(spark, mode, path):
    """A partitioned table with names unmapped tables cannot hold, changed so that its files and
    its schema disagree on names: rows deleted and updated through deletion vectors, a column
    renamed, one dropped, one added, a dropped column's name added again as a new column, and
    checkpoints every second commit."""
    table = f"delta.`{path}`"
    spark.sql(f"""CREATE TABLE {table} (id BIGINT, `my name` STRING, `day.of` STRING,
                  s STRUCT<`a b`: INT, c: STRING>, tags ARRAY<STRING>, m MAP<STRING, INT>)
                  USING delta PARTITIONED BY (`day.of`)
                  TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}', 'delta.enableDeletionVectors' = 'true',
                                 'delta.checkpointInterval' = '2')""")
    spark.sql(f"""INSERT INTO {table}
                  SELECT id, concat('n', id), IF(id % 2 = 0, 'even', 'odd'),
                         named_struct('a b', CAST(id AS INT), 'c', concat('c', id)),
                         array(concat('t', id)), map('k', CAST(id AS INT))
                  FROM range(0, 60) DISTRIBUTE BY id % 3""")
    spark.sql(f"DELETE FROM {table} WHERE id % 7 = 0")
    spark.sql(f"UPDATE {table} SET `my name` = concat('u', id) WHERE id % 5 = 0")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN `my name` TO `full name`")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN s.`a b` TO `x y`")
    spark.sql(f"ALTER TABLE {table} DROP COLUMN tags")
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (`new col` INT)")
    spark.sql(f"""INSERT INTO {table} (id, `full name`, `day.of`, s, m, `new col`)
                  VALUES (100, 'late', 'odd', named_struct('x y', 1, 'c', 'z'), map('q', 2), 7)""")
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (tags STRING)")
    spark.sql(f"INSERT INTO {table} (id, `day.of`, tags) VALUES (101, 'even', 'again')")
    return rows(spark, path)


def write_v2_checkpoints(spark, file_format, path):
    """A partitioned table with V2 checkpoints every second commit, their adds and removes in
    sidecar files (one action per sidecar), and deletion vectors."""
    spark.conf.set("spark.databricks.delta.checkpointV2.topLevelFileFormat", file_format)
    spark.conf.set("spark.databricks.delta.checkpoint.partSize", "1")
    table = f"delta.`{path}`"
    spark.sql(f"""CREATE TABLE {table} (id BIGINT, part STRING) USING delta PARTITIONED BY (part)
                  TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2',
                                 'delta.enableDeletionVectors' = 'true')""")
    for first in range(0, 40, 10):
        spark.sql(f"INSERT INTO {table} SELECT id, IF(id % 3 = 0, 'a', 'b') FROM range({first}, {first + 10})")
    spark.sql(f"DELETE FROM {table} WHERE id % 4 = 0")
    spark.sql(f"INSERT INTO {table} VALUES (100, 'c')")
    spark.conf.unset("spark.databricks.delta.checkpointV2.topLevelFileFormat")
    spark.conf.unset("spark.databricks.delta.checkpoint.partSize")
    return rows(spark, path)


def write_widened(spark, path):
    """Columns widened by ALTER TABLE with type widening: byte to int, int to bigint, float to
    double, inside a struct too, int to double, a decimal to a wider one, bigint to a decimal,
    with rows written before and after."""
    table = f"delta.`{path}`"
    spark.sql(f"""CREATE TABLE {table} (b BYTE, i INT, f FLOAT, s STRUCT<x: SHORT>, n INT, d DECIMAL(5,2), k BIGINT)
                  USING delta TBLPROPERTIES ('delta.enableTypeWidening' = 'true')""")
    spark.sql(f"INSERT INTO {table} VALUES (1, 2, 1.5, named_struct('x', 3), -4, -1.25, 5)")
    spark.sql(f"ALTER TABLE {table} CHANGE COLUMN b TYPE INT")
    spark.sql(f"ALTER TABLE {table} CHANGE COLUMN i TYPE BIGINT")
    spark.sql(f"ALTER TABLE {table} CHANGE COLUMN f TYPE DOUBLE")
    spark.sql(f"ALTER TABLE {table} CHANGE COLUMN s.x TYPE INT")
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN n TYPE DOUBLE")
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN d TYPE DECIMAL(10,4)")
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN k TYPE DECIMAL(22,2)")
    spark.sql(f"""INSERT INTO {table} VALUES (100000, 9000000000, 0.1, named_struct('x', 70000), 0.5, 12345.6789,
                  12345678901234567890.25)""")
    return rows(spark, path)


def write_row_tracking(spark, path):
    """A table with row tracking (and deletion vectors), ids 0-9 then 10-14 in two inserts."""
    table = f"delta.`{path}`"
    spark.sql(f"""CREATE TABLE {table} (id BIGINT, name STRING) USING delta
                  TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'true')""")
    spark.sql(f"INSERT INTO {table} SELECT id, concat('s', id) FROM range(0, 10)")
    spark.sql(f"INSERT INTO {table} SELECT id, concat('s', id) FROM range(10, 15)")
    return rows(spark, path)


def row_ids(spark, path):
    frame = spark.read.format("delta").load(path).select("id", "_metadata.row_id", "_metadata.row_commit_version")
    return sorted(json.dumps(list(row), separators=(",", ":")) for row in frame.collect())


def main() -> None:
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")
    out = {}
    for command in sys.argv[1:]:
        kind, _, rest = command.partition(":")
        try:
            if kind == "read":
                out[command] = rows(spark, rest)
            elif kind == "rowids":
                out[command] = row_ids(spark, rest)
            elif kind == "sql":
                out[command] = rendered(spark.sql(rest))
            elif kind == "write":
                what, _, path = rest.partition(":")
                if what in ("name", "id"):
                    out[command] = write_mapped(spark, what, path)
                elif what in ("v2-json", "v2-parquet"):
                    out[command] = write_v2_checkpoints(spark, what[3:], path)
                elif what == "widened":
                    out[command] = write_widened(spark, path)
                elif what == "rowtracking":
                    out[command] = write_row_tracking(spark, path)
                else:
                    raise ValueError(f"unknown table kind {what}")
            else:
                raise ValueError(f"unknown command {command}")
        except Exception as error:  # the test shows Spark's message
            out[command] = {"error": str(error).splitlines()[0]}
    json.dump(out, sys.stdout, ensure_ascii=False)
    spark.stop()


if __name__ == "__main__":
    main()
