"""Evaluates Spark SQL expressions with a real Spark, for sluice's differential conformance tests
(src/expr/spark_conformance_integration_test.cc).

Usage: spark_oracle.py MODE... < expressions.json > results.json, MODE being ansi or legacy

The input is a JSON array of expression texts; the output a JSON object with, for each mode, an
array with, for each expression, either {"type": "<simpleString>", "value": "<canonical text>"}
or {"error": "<Spark error class>"}. One local[1] session evaluates everything
(`SELECT <expr> AS v`), with the session time zone UTC and spark.sql.ansi.enabled set per mode.

The canonical text is what the C++ side renders the same way:
  null                 null
  boolean              true | false
  integral             decimal digits
  float, double        C's "%.17g" of the value as a double; nan for any NaN
  decimal              exact, with the type's scale ("4.50")
  string               a JSON string (non-ASCII kept, control characters escaped)
  binary               x'<lowercase hex>'
  date, timestamp(s)   Spark's CAST(v AS STRING) of the value, a JSON string
  array                [e1, e2]   struct {name: v, ...}   map {k -> v, ...}
"""
import json
import math
import sys
from decimal import Decimal

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import types as T


def render(value, data_type):
    if value is None:
        return "null"
    if isinstance(data_type, T.BooleanType):
        return "true" if value else "false"
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return str(value)
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return "nan" if math.isnan(value) else format(value, ".17g")
    if isinstance(data_type, T.DecimalType):
        return format(Decimal(value), "f")
    if isinstance(data_type, T.StringType):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(data_type, T.BinaryType):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(data_type, T.ArrayType):
        return "[" + ", ".join(render(e, data_type.elementType) for e in value) + "]"
    if isinstance(data_type, T.MapType):
        return "{" + ", ".join(render(k, data_type.keyType) + " -> " + render(v, data_type.valueType)
                               for k, v in value.items()) + "}"
    if isinstance(data_type, T.StructType):
        return "{" + ", ".join(f.name + ": " + render(value[i], f.dataType)
                               for i, f in enumerate(data_type.fields)) + "}"
    raise ValueError("no canonical form for " + data_type.simpleString())


def has_datetime(data_type):
    if isinstance(data_type, (T.DateType, T.TimestampType, T.TimestampNTZType)):
        return True
    if isinstance(data_type, T.ArrayType):
        return has_datetime(data_type.elementType)
    if isinstance(data_type, T.MapType):
        return has_datetime(data_type.keyType) or has_datetime(data_type.valueType)
    if isinstance(data_type, T.StructType):
        return any(has_datetime(f.dataType) for f in data_type.fields)
    return False


def error_class(exception):
    if isinstance(exception, PySparkException) and exception.getCondition():
        return exception.getCondition()
    return type(exception).__name__


def evaluate(spark, expression):
    try:
        frame = spark.sql(f"SELECT {expression} AS v")
        data_type = frame.schema["v"].dataType
        if has_datetime(data_type):
            # Dates and timestamps as Spark's text, which sluice's CAST AS STRING must match; a
            # value Python's datetime cannot hold (years beyond 9999) stays comparable too.
            if not isinstance(data_type, (T.DateType, T.TimestampType, T.TimestampNTZType)):
                return {"type": data_type.simpleString(), "error": "NESTED_DATETIME_NOT_COMPARED"}
            text = spark.sql(f"SELECT CAST(({expression}) AS STRING) AS v").collect()[0][0]
            return {"type": data_type.simpleString(), "value": render(text, T.StringType())}
        return {"type": data_type.simpleString(), "value": render(frame.collect()[0][0], data_type)}
    except Exception as exception:  # every failure is an outcome to compare
        return {"error": error_class(exception)}


def modes_and_session(usage):
    """The modes the command line names, and the one local[1] session every oracle runs in."""
    modes = sys.argv[1:]
    if not modes or any(mode not in ("ansi", "legacy") for mode in modes):
        sys.exit(usage)
    spark = (SparkSession.builder.master("local[1]").appName("sluice-conformance")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return modes, spark


def set_mode(spark, mode):
    spark.conf.set("spark.sql.ansi.enabled", "true" if mode == "ansi" else "false")


def main():
    modes, spark = modes_and_session("usage: spark_oracle.py MODE... (ansi, legacy) < expressions.json")
    expressions = json.load(sys.stdin)
    results = {}
    for mode in modes:
        set_mode(spark, mode)
        results[mode] = [evaluate(spark, expression) for expression in expressions]
    json.dump(results, sys.stdout)
    spark.stop()


if __name__ == "__main__":
    main()
