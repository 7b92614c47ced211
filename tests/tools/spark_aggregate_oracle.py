"""Runs GROUP BY queries with a real Spark, for sluice's differential tests of streaming
aggregation (src/engine/aggregation_conformance_integration_test.cc).

Usage: spark_aggregate_oracle.py MODE... < cases.json > results.json, MODE being ansi or legacy

The input is {"columns": [[name, type], ...], "rows": [[sql literal, ...], ...], "queries": [...]}:
a table `t` whose cells are the literals cast to their column's type, and queries over it. The
output has, for each mode, for each query, either {"types": [simpleString, ...], "rows": [[text,
...], ...]} with the rows sorted (aggregation gives no order) or {"error": "<Spark error class>"}.
Values are rendered as spark_oracle.py renders them; dates as CAST(v AS STRING). One local[1]
session with one shuffle partition runs everything, so rows reach first(), last() and
collect_list() in the table's order.
"""
import json
import sys

from pyspark.sql import types as T

from spark_oracle import error_class, modes_and_session, render, set_mode


def run(spark, query):
    try:
        frame = spark.sql(query)
        types = [field.dataType for field in frame.schema.fields]
        rows = []
        for row in frame.collect():
            rendered = []
            for value, data_type in zip(row, types):
                if isinstance(data_type, (T.DateType, T.TimestampType, T.TimestampNTZType)):
                    rendered.append("null" if value is None else render(str(value), T.StringType()))
                else:
                    rendered.append(render(value, data_type))
            rows.append(rendered)
        rows.sort()
        return {"types": [t.simpleString() for t in types], "rows": rows}
    except Exception as exception:  # every failure is an outcome to compare
        return {"error": error_class(exception)}


def main():
    modes, spark = modes_and_session("usage: spark_aggregate_oracle.py MODE... (ansi, legacy) < cases.json")
    cases = json.load(sys.stdin)
    names = [name for name, _ in cases["columns"]]
    values = ", ".join(
        "(" + ", ".join(f"CAST({cell} AS {column_type})" for cell, (_, column_type) in zip(row, cases["columns"])) + ")"
        for row in cases["rows"])
    results = {}
    for mode in modes:
        set_mode(spark, mode)
        spark.sql(f"SELECT * FROM VALUES {values} AS t({', '.join(names)})").createOrReplaceTempView("t")
        results[mode] = [run(spark, query) for query in cases["queries"]]
    json.dump(results, sys.stdout)
    spark.stop()


if __name__ == "__main__":
    main()
