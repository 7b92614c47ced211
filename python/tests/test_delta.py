"""Delta's Python API on sluice's DML: the merge builder with every clause kind, update,
delete, history, spark.sql MERGE with a temporary view; results checked row by row against
what the clauses say."""
import decimal

import pyarrow as pa
import pytest

import sluice


def make_table(spark, name="main.s.t"):
    spark.createDataFrame(pa.table({
        "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "qty": pa.array([10, 20, 30, 40, 50], pa.int64()),
        "note": pa.array(["a", "b", "c", "d", "e"], pa.large_string()),
    })).write.saveAsTable(name)
    return sluice.DeltaTable.forName(spark, name)


def rows(df):
    return sorted((tuple(r) for r in df.collect()), key=lambda r: r[0])


def test_merge_builder_every_clause_kind(spark):
    table = make_table(spark)
    updates = spark.createDataFrame(pa.table({"id": pa.array([2, 3, 4, 9], pa.int64()),
                                              "qty": pa.array([21, 0, 41, 90], pa.int64()),
                                              "note": pa.array(["B", "C", "D", "I"], pa.large_string())}))
    metrics = (table.alias("t").merge(updates.alias("s"), "t.id = s.id")
               .whenMatchedDelete(condition="s.qty = 0")
               .whenMatchedUpdate(condition="s.id = 2", set={"qty": "s.qty + 1000"})
               .whenMatchedUpdateAll()
               .whenNotMatchedInsert(condition="s.id > 100", values={"id": "s.id", "qty": "-1"})
               .whenNotMatchedInsertAll()
               .whenNotMatchedBySourceUpdate(condition="t.id = 1", set={"note": "'gone?'"})
               .whenNotMatchedBySourceDelete()
               .execute())
    assert rows(table.toDF()) == [(1, 10, "gone?"), (2, 1021, "b"), (4, 41, "D"), (9, 90, "I")]
    assert metrics.collect()[0].asDict() == {"num_affected_rows": 6, "num_updated_rows": 3,
                                             "num_deleted_rows": 2, "num_inserted_rows": 1}
    history = table.history().collect()
    assert [h.operation for h in history] == ["MERGE", "WRITE"]
    assert history[0].version == 1 and dict(history[0].operationMetrics)["numTargetRowsInserted"] == "1"
    assert len(table.history(1).collect()) == 1


def test_update_delete_and_schema_evolution(spark, tmp_path):
    make_table(spark)
    table = sluice.DeltaTable.forPath(spark, spark._table_path("main.s.t"))
    table.update("qty >= 30", {"qty": "qty * 2", "note": "upper(note)"})
    table.delete("id = 1 OR note = 'E'")
    assert rows(table.toDF()) == [(2, 20, "b"), (3, 60, "C"), (4, 80, "D")]
    wider = spark.createDataFrame(pa.table({"id": pa.array([2, 7], pa.int64()), "qty": pa.array([1, 2], pa.int64()),
                                            "note": pa.array(["x", "y"], pa.large_string()),
                                            "extra": pa.array([True, False])}))
    (table.alias("t").merge(wider.alias("s"), "t.id = s.id").whenMatchedUpdateAll().whenNotMatchedInsertAll()
     .withSchemaEvolution().execute())
    assert rows(table.toDF()) == [(2, 1, "x", True), (3, 60, "C", None), (4, 80, "D", None), (7, 2, "y", False)]


def test_merge_errors_by_class(spark):
    table = make_table(spark)
    twice = spark.createDataFrame(pa.table({"id": pa.array([1, 1], pa.int64()), "qty": pa.array([0, 1], pa.int64()),
                                            "note": pa.array(["x", "y"], pa.large_string())}))
    cases = [
        (lambda: table.alias("t").merge(twice.alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute(),
         "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"),
        (lambda: table.alias("t").merge(twice.alias("s"), "t.id = s.id").whenMatchedDelete().whenMatchedUpdateAll()
         .execute(), "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION"),
        (lambda: table.alias("t").merge(twice.alias("s"), "t.nosuch = s.id").whenMatchedDelete().execute(),
         "UNRESOLVED_COLUMN"),
        (lambda: table.update("id = 1", {"nosuch": "1"}), "UNRESOLVED_COLUMN"),
        (lambda: sluice.DeltaTable.forName(spark, "main.s.none"), "DELTA_TABLE_NOT_FOUND"),
        (lambda: spark.sql("MERGE INTO main.s.t t USING nosuch s ON t.id = s.id WHEN MATCHED THEN DELETE"),
         "TABLE_OR_VIEW_NOT_FOUND"),
    ]
    for action, error_class in cases:
        with pytest.raises(sluice.SluiceError) as error:
            action()
        assert error.value.error_class == error_class, str(error.value)
    assert rows(table.toDF()) == [(1, 10, "a"), (2, 20, "b"), (3, 30, "c"), (4, 40, "d"), (5, 50, "e")]
    assert len(table.history().collect()) == 1


def test_spark_sql_merge_update_delete(spark, tmp_path):
    make_table(spark)
    spark.createDataFrame(pa.table({"id": pa.array([5, 6], pa.int64()), "qty": pa.array([55, 66], pa.int64()),
                                    "note": pa.array(["E", "F"], pa.large_string())})).createOrReplaceTempView("Batch")
    result = spark.sql("""
        MERGE INTO main.s.t AS t USING batch AS s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    assert result.collect()[0].num_affected_rows == 2
    spark.sql("UPDATE main.s.t SET qty = 0 WHERE id < 3")
    spark.sql("DELETE FROM main.s.t WHERE id = 4;")
    assert rows(spark.table("main.s.t")) == [(1, 0, "a"), (2, 0, "b"), (3, 30, "c"), (5, 55, "E"), (6, 66, "F")]
    path = spark._table_path("main.s.t")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE qty = 0")
    assert spark.table("main.s.t").count() == 3


def test_restore_to_a_timestamp(spark):
    import datetime
    import time

    marks = []
    for i in range(3):
        spark.range(i * 2, i * 2 + 2).write.mode("append").saveAsTable("main.s.when")
        time.sleep(0.05)
        marks.append(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f"))
        time.sleep(0.05)
    table = sluice.DeltaTable.forName(spark, "main.s.when")
    restored = table.restoreToTimestamp(marks[0]).collect()[0]
    assert restored.num_of_files_after_restore == 1
    assert sorted(r.id for r in table.toDF().collect()) == [0, 1]
    spark.sql(f"RESTORE TABLE main.s.when TO TIMESTAMP AS OF '{marks[1]}'")
    assert sorted(r.id for r in table.toDF().collect()) == [0, 1, 2, 3]
    last = table.history(1).collect()[0]
    assert last.operation == "RESTORE" and dict(last.operationParameters) == {"timestamp": marks[1]}
    for action, error_class in [
        (lambda: table.restoreToTimestamp("2000-01-01"), "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER"),
        (lambda: table.restoreToTimestamp("2999-01-01 00:00:00"), "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER"),
        (lambda: spark.sql("RESTORE TABLE main.s.when TO TIMESTAMP AS OF 'noon'"), "INVALID_ARGUMENT"),
    ]:
        with pytest.raises(sluice.SluiceError) as error:
            action()
        assert error.value.error_class == error_class, str(error.value)
    assert len(table.history().collect()) == 5  # three appends, two restores


def test_optimize_restore_and_vacuum(spark):
    import os
    import time

    for i in range(6):
        spark.range(i * 2, i * 2 + 2).write.mode("append").saveAsTable("main.s.m")
    table = sluice.DeltaTable.forName(spark, "main.s.m")
    metrics = table.optimize().executeCompaction().collect()[0]
    assert (metrics.numFilesRemoved, metrics.numFilesAdded, metrics.partitionsOptimized) == (6, 1, 1)
    assert sorted(r.id for r in table.toDF().collect()) == list(range(12))
    assert spark.sql("OPTIMIZE main.s.m").collect()[0].numFilesRemoved == 0
    restored = spark.sql("RESTORE TABLE main.s.m TO VERSION AS OF 2").collect()[0]
    assert (restored.num_restored_files, restored.num_removed_files, restored.num_of_files_after_restore) == (3, 1, 3)
    assert sorted(r.id for r in table.toDF().collect()) == list(range(6))

    errors = [
        (lambda: table.vacuum(0), "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"),
        (lambda: spark.sql("VACUUM main.s.m RETAIN 0 HOURS DRY RUN"), "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"),
        (lambda: table.optimize().where("id > 1").executeCompaction(), "DELTA_NON_PARTITION_COLUMN_REFERENCE"),
        (lambda: table.optimize().executeZOrderBy("nosuch"), "UNRESOLVED_COLUMN"),
        (lambda: spark.sql("OPTIMIZE main.s.m ZORDER BY (nosuch, id)"), "UNRESOLVED_COLUMN"),
        (lambda: table.restoreToVersion(99), "DELTA_CANNOT_RESTORE_TABLE_VERSION"),
    ]
    for action, error_class in errors:
        with pytest.raises(sluice.SluiceError) as error:
            action()
        assert error.value.error_class == error_class, str(error.value)

    time.sleep(0.01)  # the last removals are then older than a retention of 0
    listed = table.vacuum(0, dryRun=True, force=True)
    assert len(listed) == 4  # the compacted file and the three appends only it held
    assert all(os.path.exists(path) for path in listed)
    assert table.vacuum(0, force=True) == listed
    assert not any(os.path.exists(path) for path in listed)
    assert sorted(r.id for r in table.toDF().collect()) == list(range(6))
    operations = [h.operation for h in table.history().collect()]
    assert operations[:4] == ["VACUUM END", "VACUUM START", "RESTORE", "OPTIMIZE"]
    path = spark._table_path("main.s.m")
    assert spark.sql(f"VACUUM delta.`{path}` DRY RUN").count() == 0
    ordered = spark.sql("OPTIMIZE main.s.m ZORDER BY (id)").collect()[0]
    assert (ordered.numFilesRemoved, ordered.partitionsOptimized) == (3, 1)
    assert sorted(r.id for r in table.toDF().collect()) == list(range(6))
    assert dict(table.history(1).collect()[0].operationParameters)["zOrderBy"] == '["id"]'


def test_alter_table_maps_renames_and_drops_columns_in_place(spark):
    spark.createDataFrame([{"id": 1, "city": "Oslo", "zip": 150}, {"id": 2, "city": "Lima", "zip": 15001}]) \
        .write.saveAsTable("main.s.altered")
    with pytest.raises(sluice.SluiceError) as error:
        spark.sql("ALTER TABLE main.s.altered RENAME COLUMN city TO town")
    assert error.value.error_class == "DELTA_UNSUPPORTED_RENAME_COLUMN"
    # Delta's recipe, then changes of names only: every file reads as before.
    assert spark.sql("ALTER TABLE main.s.altered SET TBLPROPERTIES ('delta.minReaderVersion' = '2', "
                     "'delta.minWriterVersion' = '5', 'delta.columnMapping.mode' = 'name', owner = 'it''s us')"
                     ).collect() == []
    spark.sql("ALTER TABLE main.s.altered RENAME COLUMN city TO `home town`")
    spark.sql("ALTER TABLE main.s.altered DROP COLUMN zip")
    rows = sorted(spark.table("main.s.altered").collect(), key=lambda row: row.id)
    assert [row.asDict() for row in rows] == [{"id": 1, "home town": "Oslo"}, {"id": 2, "home town": "Lima"}]
    table = sluice.DeltaTable.forName(spark, "main.s.altered")
    assert [row.operation for row in table.history(3).collect()] == ["DROP COLUMNS", "RENAME COLUMN",
                                                                       "SET TBLPROPERTIES"]
    spark.sql("ALTER TABLE main.s.altered UNSET TBLPROPERTIES IF EXISTS ('owner', 'nothing')")
    for statement, error_class in [
        ("ALTER TABLE main.s.altered SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
         "DELTA_UNKNOWN_CONFIGURATION"),
        ("ALTER TABLE main.s.altered SET TBLPROPERTIES ('delta.columnMapping.mode' = 'id')",
         "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE"),
        ("ALTER TABLE main.s.altered UNSET TBLPROPERTIES ('owner')", "INVALID_ARGUMENT"),
        ("ALTER TABLE main.s.altered DROP COLUMNS (id, `home town`)", "DELTA_UNSUPPORTED_DROP_COLUMN"),
        ("ALTER TABLE main.s.altered SET TBLPROPERTIES ('a' 'b')", "PARSE_SYNTAX_ERROR"),
        ("ALTER TABLE main.s.altered ADD COLUMNS (x INT, )", "PARSE_SYNTAX_ERROR"),
        ("ALTER TABLE main.s.altered REPLACE COLUMNS (x INT)", "PARSE_SYNTAX_ERROR"),
        ("ALTER TABLE main.s.nothing DROP COLUMN id", "DELTA_TABLE_NOT_FOUND"),
    ]:
        with pytest.raises(sluice.SluiceError) as error:
            spark.sql(statement)
        assert error.value.error_class == error_class, statement


def test_alter_table_adds_columns_and_widens_their_types(spark):
    spark.createDataFrame(pa.table({
        "id": pa.array([1], pa.int32()),
        "city": pa.array(["Oslo"], pa.large_string()),
        "price": pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
        "s": pa.array([{"x": 2}], pa.struct([("x", pa.int32())])),
    })).write.saveAsTable("main.s.widened")
    spark.sql("ALTER TABLE main.s.widened ADD COLUMNS (score DOUBLE COMMENT 'points, in all' FIRST, "
              "s.`Y` STRING AFTER x, tags ARRAY<STRING>)")
    with pytest.raises(sluice.SluiceError) as error:
        spark.sql("ALTER TABLE main.s.widened ALTER COLUMN id TYPE BIGINT")
    assert error.value.error_class == "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP"
    spark.sql("ALTER TABLE main.s.widened SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    spark.sql("ALTER TABLE main.s.widened ALTER COLUMN id TYPE DOUBLE")
    spark.sql("ALTER TABLE main.s.widened CHANGE COLUMN price price DECIMAL(10, 4) COMMENT 'net' AFTER city")
    spark.sql("ALTER TABLE main.s.widened ALTER COLUMN s.x TYPE BIGINT")
    spark.sql("ALTER TABLE main.s.widened ALTER COLUMN city FIRST")
    frame = spark.table("main.s.widened")
    assert frame.columns == ["city", "score", "id", "price", "s", "tags"]
    row = frame.collect()[0].asDict(recursive=True)
    assert row == {"city": "Oslo", "score": None, "id": 1.0, "price": decimal.Decimal("1.2500"),
                   "s": {"x": 2, "Y": None}, "tags": None}
    assert type(row["id"]) is float
    assert [entry.operation for entry in sluice.DeltaTable.forName(spark, "main.s.widened").history(6).collect()] \
        == ["CHANGE COLUMN"] * 4 + ["SET TBLPROPERTIES", "ADD COLUMNS"]
    for statement, error_class in [
        ("ALTER TABLE main.s.widened ADD COLUMN extra INT NOT NULL", "DELTA_OPERATION_NOT_ALLOWED"),
        ("ALTER TABLE main.s.widened ADD COLUMNS (CITY STRING)", "FIELD_ALREADY_EXISTS"),
        ("ALTER TABLE main.s.widened ADD COLUMN id.part INT", "INVALID_FIELD_NAME"),
        ("ALTER TABLE main.s.widened ADD COLUMN `a b` INT", "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES"),
        ("ALTER TABLE main.s.widened ALTER COLUMN price TYPE DECIMAL(10, 1)", "NOT_SUPPORTED_CHANGE_COLUMN"),
        ("ALTER TABLE main.s.widened ALTER COLUMN s.x TYPE DOUBLE", "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP"),
        ("ALTER TABLE main.s.widened ALTER COLUMN city SET NOT NULL", "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP"),
        ("ALTER TABLE main.s.widened CHANGE COLUMN city town STRING", "NOT_SUPPORTED_CHANGE_COLUMN"),
        ("ALTER TABLE main.s.widened ALTER COLUMN city TYPE NOTATYPE", "INVALID_DATA_TYPE"),
    ]:
        with pytest.raises(sluice.SluiceError) as error:
            spark.sql(statement)
        assert error.value.error_class == error_class, statement
