"""Batch reads and writes through the API: every file format and Delta, save modes, idempotent
writes, transformations, and wrong input refused by class."""
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sluice


def orders(spark):
    return spark.createDataFrame(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "item": pa.array(["apple", "pear", None, "fig"], pa.large_string()),
        "total": pa.array([5.5, 12.0, 30.25, None], pa.float64()),
    }))


def test_delta_write_read_and_table_names(spark, tmp_path):
    df = orders(spark)
    df.write.format("delta").save(str(tmp_path / "t"))
    assert spark.read.format("delta").load(str(tmp_path / "t")).to_arrow().sort_by("id").to_pylist() == \
        df.to_arrow().to_pylist()
    df.write.saveAsTable("main.shop.orders")
    assert os.path.isdir(os.path.join(spark.warehouse, "main", "shop", "orders", "_delta_log"))
    assert sorted(r.id for r in spark.table("main.shop.orders").collect()) == [1, 2, 3, 4]


def test_save_modes(spark, tmp_path):
    df = orders(spark)
    path = str(tmp_path / "t")
    df.write.save(path)
    with pytest.raises(sluice.SluiceError) as error:
        df.write.save(path)
    assert error.value.error_class == "PATH_ALREADY_EXISTS"
    df.write.mode("ignore").save(path)
    assert spark.read.load(path).count() == 4
    df.write.mode("append").save(path)
    assert spark.read.load(path).count() == 8
    df.limit(1).write.mode("overwrite").save(path)
    assert [r.id for r in spark.read.load(path).collect()] == [1]
    df.write.saveAsTable("main.s.t")
    with pytest.raises(sluice.SluiceError) as error:
        df.write.saveAsTable("main.s.t")
    assert error.value.error_class == "TABLE_OR_VIEW_ALREADY_EXISTS"
    with pytest.raises(sluice.SluiceError) as error:
        df.write.mode("upsert")
    assert error.value.error_class == "INVALID_OPTIONS"


def test_txn_options_make_a_write_idempotent(spark, tmp_path):
    df = orders(spark)
    for version in [0, 1, 1, 0, 2]:
        (df.write.format("delta").mode("append").option("txnAppId", "app").option("txnVersion", version)
         .saveAsTable("main.s.a"))
    assert spark.table("main.s.a").count() == 12
    for version in [7, 7]:
        df.write.format("parquet").mode("append").option("txnAppId", "app").option("txnVersion", version) \
            .save(str(tmp_path / "p"))
    assert spark.read.parquet(str(tmp_path / "p")).count() == 4


@pytest.mark.parametrize("format", ["parquet", "csv", "json"])
def test_file_formats_round_trip(spark, tmp_path, format):
    df = orders(spark)
    path = str(tmp_path / format)
    df.write.format(format).save(path)
    reader = spark.read.format(format)
    if format == "csv":
        reader = reader.option("schema", "id BIGINT, item STRING, total DOUBLE")
    if format == "json":
        reader = reader.option("schema", "id BIGINT, item STRING, total DOUBLE")
    rows = sorted(reader.load(path).collect(), key=lambda r: r.id)
    assert [r.asDict() for r in rows] == [r.asDict() for r in df.collect()]
    if format == "parquet":
        files = [f for f in os.listdir(path) if f.endswith(".parquet")]
        assert pq.read_table(os.path.join(path, files[0])).num_rows == 4  # an independent reader


def test_transformations(spark, capsys):
    df = orders(spark)
    assert [r.asDict() for r in df.where("total > 10").select("id", "total * 2 AS t").collect()] == \
        [{"id": 2, "t": 24.0}, {"id": 3, "t": 60.5}]
    assert df.filter("item IS NULL").count() == 1
    assert df.withColumn("big", "total > 10").columns == ["id", "item", "total", "big"]
    assert df.withColumn("total", "coalesce(total, 0)").collect()[3].total == 0.0
    assert df.drop("item").columns == ["id", "total"]
    assert df.withColumnRenamed("item", "name").columns == ["id", "name", "total"]
    assert df.limit(2).count() == 2 and df.union(df).count() == 8
    assert df.first().item == "apple"
    assert df.dtypes == [("id", "int64"), ("item", "large_string"), ("total", "double")]
    df.show(2)
    shown = capsys.readouterr().out
    assert "apple" in shown and "pear" in shown and "fig" not in shown
    df.printSchema()
    assert " |-- total: double (nullable = true)" in capsys.readouterr().out


def test_wrong_input_is_refused_by_class(spark, tmp_path):
    df = orders(spark)
    cases = [
        (lambda: df.where("nosuch > 1"), "UNRESOLVED_COLUMN"),
        (lambda: df.select("id +"), "PARSE_SYNTAX_ERROR"),
        (lambda: df.where("item"), "DATATYPE_MISMATCH"),
        (lambda: spark.read.format("nosuch").load(), "DATA_SOURCE_NOT_FOUND"),
        (lambda: spark.read.format("parquet").option("nosuch", 1).load(str(tmp_path)), "INVALID_OPTIONS"),
        (lambda: df.write.format("delta").option("txnAppId", "a").save(str(tmp_path / "x")), "INVALID_OPTIONS"),
        (lambda: df.write.saveAsTable("a.b.c.d"), "INVALID_PIPELINE"),
        (lambda: df.write.saveAsTable("main.../etc"), "INVALID_PIPELINE"),
        (lambda: spark.table("main.s.missing").count(), "DELTA_TABLE_NOT_FOUND"),
        (lambda: spark.sql("CREATE TABLE t (a INT)"), "NOT_IMPLEMENTED"),
        (lambda: spark.sql("SELECT id FROM nosuch_view"), "TABLE_OR_VIEW_NOT_FOUND"),
        (lambda: spark.sql("SELECT id FROM"), "PARSE_SYNTAX_ERROR"),
    ]
    for action, error_class in cases:
        with pytest.raises(sluice.SluiceError) as error:
            action()
        assert error.value.error_class == error_class, (error_class, str(error.value))
        assert str(error.value).startswith(f"[{error_class}] ")
    assert not os.path.exists(str(tmp_path / "x"))


def test_spark_sql_selects_over_views_and_tables(spark):
    df = orders(spark)
    df.createOrReplaceTempView("Orders")
    rows = spark.sql("SELECT id, total * 2 AS t FROM orders WHERE total > 10").collect()
    assert [r.asDict() for r in rows] == [{"id": 2, "t": 24.0}, {"id": 3, "t": 60.5}]
    df.union(df).write.saveAsTable("main.shop.orders")
    groups = spark.sql("SELECT item, count(*) AS n, sum(total) AS s FROM main.shop.orders GROUP BY item "
                       "HAVING count(*) > 1").collect()
    assert sorted((r.item or "", r.n, r.s) for r in groups) == [
        ("", 2, 60.5), ("apple", 2, 11.0), ("fig", 2, None), ("pear", 2, 24.0)]
    assert spark.sql("SELECT count(*) AS n FROM shop.orders WHERE id > 100").collect()[0].n == 0
    assert spark.sql("SELECT * FROM orders WHERE id > 100").columns == ["id", "item", "total"]


def test_spark_sql_selects_without_from_over_one_row(spark):
    assert [r.asDict() for r in spark.sql("SELECT 1 AS id, 'a' AS s, 2.5D * 2 AS d").collect()] == \
        [{"id": 1, "s": "a", "d": 5.0}]
    assert spark.sql("SELECT count(*) AS n").collect()[0].n == 1
    assert spark.sql("SELECT 1 AS one WHERE false").collect() == []
    assert spark.sql("SELECT max(2) AS m WHERE false").collect()[0].m is None
    with pytest.raises(sluice.SluiceError) as error:
        spark.sql("SELECT *")
    assert error.value.error_class == "PARSE_SYNTAX_ERROR"


def test_a_write_partitions_the_table_it_creates(spark, tmp_path):
    df = orders(spark).withColumnRenamed("item", "item,kind")
    path = str(tmp_path / "t")
    df.write.format("delta").partitionBy(["ITEM,KIND"]).save(path)
    with open(os.path.join(path, "_delta_log", "00000000000000000000.json")) as log:
        metadata = [json.loads(line)["metaData"] for line in log if "metaData" in json.loads(line)]
    assert metadata[0]["partitionColumns"] == ["item,kind"]
    # A name with a comma needs column mapping, whose partitions go into random two-character folders.
    assert len([d for d in os.listdir(path) if not d.startswith("_")]) == 4
    df.write.format("delta").mode("append").partitionBy("item,kind").save(path)
    df.write.format("delta").mode("append").save(path)
    assert spark.read.format("delta").load(path).count() == 12
    for other in (("id",), ("item,kind", "id")):
        with pytest.raises(sluice.SluiceError) as error:
            df.write.format("delta").mode("append").partitionBy(*other).save(path)
        assert error.value.error_class == "DELTA_METADATA_MISMATCH", str(error.value)
    for columns, error_class in ((("nosuch",), "DELTA_PARTITION_COLUMN_NOT_FOUND"),
                                 (("id", "ID"), "DELTA_DUPLICATE_COLUMNS_FOUND"),
                                 (("id", "item,kind", "total"), "DELTA_CANNOT_USE_ALL_COLUMNS_FOR_PARTITION"),
                                 ((1,), "INVALID_OPTIONS")):
        with pytest.raises(sluice.SluiceError) as error:
            df.write.format("delta").partitionBy(*columns).save(str(tmp_path / "refused"))
        assert error.value.error_class == error_class, str(error.value)
    assert not os.path.exists(str(tmp_path / "refused" / "_delta_log"))
    assert spark.read.format("delta").load(path).count() == 12
    # overwriteSchema, as in Delta: an overwrite changes the partitioning (and the schema); an append does not.
    with pytest.raises(sluice.SluiceError) as error:
        df.write.format("delta").mode("append").option("overwriteSchema", True).partitionBy("id").save(path)
    assert error.value.error_class == "DELTA_METADATA_MISMATCH", str(error.value)
    assert "overwriteSchema" in str(error.value)
    df.select("id", "total").write.format("delta").mode("overwrite").option("overwriteSchema", True) \
        .partitionBy("id").save(path)
    with open(os.path.join(path, "_delta_log", "00000000000000000003.json")) as log:
        metadata = [json.loads(line)["metaData"] for line in log if "metaData" in json.loads(line)]
    assert metadata[0]["partitionColumns"] == ["id"]
    replaced = spark.read.format("delta").load(path)
    assert replaced.columns == ["id", "total"]
    assert sorted(tuple(row) for row in replaced.collect()) == sorted(tuple(row) for row in df.select("id", "total").collect())
