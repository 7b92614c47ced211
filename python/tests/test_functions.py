"""Columns as PySpark writes them, turned into SQL the engine binds."""
import datetime

import pyarrow as pa
import pytest

import sluice
from sluice import functions as F
from sluice.functions import col, lit


def people(spark):
    return spark.createDataFrame(pa.table({
        "id": pa.array([1, 2, 3, None], pa.int64()),
        "name": pa.array(["ann", "bob", None, "it's"], pa.large_string()),
        "s": pa.array([{"x": 1}, {"x": 2}, None, {"x": 4}], pa.struct([("x", pa.int32())])),
    }))


def test_columns_filter_and_select(spark):
    df = people(spark)
    assert [r.id for r in df.where(col("name").isNotNull() & (col("id") > 1)).collect()] == [2]
    assert [r.id for r in df.filter(~col("id").isin(1, 2) | col("id").isNull()).collect()] == [3, None]
    assert [r.id for r in df.where(col("id").between(2, 3)).collect()] == [2, 3]
    assert [r.id for r in df.where(col("name") == lit("it's")).collect()] == [None]
    assert [r.id for r in df.where(col("name").like("a%")).collect()] == [1]
    assert [r.id for r in df.where(col("id").eqNullSafe(None)).collect()] == [None]
    rows = df.select(col("id"), (col("id") * 10 + 1).alias("x"), F.upper("name").alias("u"), col("s.x").alias("sx"),
                     col("id").cast("string").alias("t")).collect()
    assert [r.asDict() for r in rows][:2] == [{"id": 1, "x": 11, "u": "ANN", "sx": 1, "t": "1"},
                                             {"id": 2, "x": 21, "u": "BOB", "sx": 2, "t": "2"}]
    assert df.withColumn("d", lit(datetime.date(2024, 2, 29))).collect()[0].d == datetime.date(2024, 2, 29)
    assert df.withColumn("n", F.coalesce("name", lit("?"))).collect()[2].n == "?"
    assert df.withColumn("t", F.current_timestamp()).collect()[0].t.year >= 2026
    assert df.select(df["id"]).columns == ["id"]


def test_a_column_has_no_truth_value_and_unknown_functions_fail_by_class(spark):
    with pytest.raises(ValueError):
        bool(col("a") > 1)
    with pytest.raises(sluice.SluiceError) as error:
        people(spark).select(F.nosuchfunction("id"))
    assert error.value.error_class == "UNRESOLVED_ROUTINE"


def test_merge_conditions_as_columns(spark):
    spark.range(3).write.saveAsTable("main.s.t")
    table = sluice.DeltaTable.forName(spark, "main.s.t")
    source = spark.createDataFrame(pa.table({"id": pa.array([1, 5], pa.int64())}))
    table.alias("t").merge(source.alias("s"), col("t.id") == col("s.id")) \
        .whenMatchedUpdate(set={"id": col("s.id") * 100}).whenNotMatchedInsertAll().execute()
    table.delete(col("id") == 0)
    assert sorted(r.id for r in table.toDF().collect()) == [2, 5, 100]
