"""Arrow across the boundary: every type both ways, nulls, nesting, decimals, pandas, and the
engine's buffers handed out without a copy."""
import datetime
import decimal

import pyarrow as pa
import pytest

import sluice


def every_type_table():
    point = pa.struct([("x", pa.int32()), ("tags", pa.large_list(pa.large_string()))])
    return pa.table({
        "b": pa.array([True, None, False], pa.bool_()),
        "i8": pa.array([-128, 127, None], pa.int8()),
        "i16": pa.array([None, -32768, 32767], pa.int16()),
        "i32": pa.array([1, None, -2147483648], pa.int32()),
        "i64": pa.array([2**63 - 1, -(2**63), None], pa.int64()),
        "f32": pa.array([1.5, None, float("-inf")], pa.float32()),
        "f64": pa.array([float("nan"), -0.0, None], pa.float64()),
        "dec": pa.array([decimal.Decimal("-12345678901234567890.1234"), None, decimal.Decimal("0.0001")],
                        pa.decimal128(38, 4)),
        "s": pa.array(["héllo", "", None], pa.large_string()),
        "bin": pa.array([b"\x00\xff", None, b""], pa.large_binary()),
        "d": pa.array([datetime.date(1, 1, 1), None, datetime.date(9999, 12, 31)], pa.date32()),
        "ts": pa.array([datetime.datetime(2026, 12, 4, 21, 0, tzinfo=datetime.timezone.utc), None,
                        datetime.datetime(1900, 1, 1, tzinfo=datetime.timezone.utc)], pa.timestamp("us", tz="UTC")),
        "ntz": pa.array([None, datetime.datetime(2026, 2, 28, 23, 59, 59, 999999), datetime.datetime(1970, 1, 1)],
                        pa.timestamp("us")),
        "st": pa.array([{"x": 1, "tags": ["a", None]}, None, {"x": None, "tags": []}], point),
        "arr": pa.array([[1, None], None, []], pa.large_list(pa.int64())),
        "m": pa.array([[("k", 1.0), ("n", None)], None, []], pa.map_(pa.large_string(), pa.float64())),
    })


def test_every_type_round_trips_with_its_values(spark):
    table = every_type_table()
    back = spark.createDataFrame(table).to_arrow()
    assert back.schema.equals(table.schema, check_metadata=False), back.schema
    assert back.to_pylist()[1:] == table.to_pylist()[1:]
    first, expected = back.to_pylist()[0], table.to_pylist()[0]
    assert str(first.pop("f64")) == "nan" and str(expected.pop("f64")) == "nan"
    assert first == expected


def test_other_producers_layouts_are_read(spark):
    # 32-bit offsets, views, unsigned integers, nanoseconds, a zone, slices (array offsets).
    table = pa.table({
        "s": pa.array(["a", None, "ccc", "dddd"], pa.string()),
        "v": pa.array(["short", "a string longer than twelve", None, "x"], pa.string_view()),
        "u8": pa.array([0, 255, None, 1], pa.uint8()),
        "u64": pa.array([0, 2**64 - 1, 5, None], pa.uint64()),
        "ns": pa.array([1999, -1000, None, 0], pa.timestamp("ns", tz="Europe/Paris")),
        "l": pa.array([[1], None, [2, 3], []], pa.list_(pa.int16())),
    }).slice(1, 3)
    back = spark.createDataFrame(table).to_arrow()
    assert [str(t) for t in back.schema.types] == [
        "large_string", "large_string", "int16", "decimal128(20, 0)", "timestamp[us, tz=UTC]", "large_list<item: int16>"]
    rows = back.to_pylist()
    assert [r["s"] for r in rows] == [None, "ccc", "dddd"]
    assert [r["v"] for r in rows] == ["a string longer than twelve", None, "x"]
    assert [r["u8"] for r in rows] == [255, None, 1]
    assert [r["u64"] for r in rows] == [decimal.Decimal(2**64 - 1), decimal.Decimal(5), None]
    assert rows[0]["ns"] == datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc)
    assert [r["l"] for r in rows] == [None, [2, 3], []]


def test_what_cannot_be_imported_is_refused_by_class(spark):
    dictionary = pa.table({"d": pa.array(["a", "b", "a"]).dictionary_encode()})
    with pytest.raises(sluice.SluiceError) as error:
        spark.createDataFrame(dictionary)
    assert error.value.error_class == "NOT_IMPLEMENTED"
    assert "'d'" in error.value.message


def test_pandas_and_python_rows(spark):
    import pandas
    frame = pandas.DataFrame({"id": [1, 2, 3], "name": ["a", None, "c"], "x": [0.5, 1.5, None]})
    df = spark.createDataFrame(frame)
    assert df.count() == 3
    back = df.to_pandas()
    assert back["id"].tolist() == [1, 2, 3]
    assert back["name"].tolist()[::2] == ["a", "c"]
    rows = spark.createDataFrame([(1, "x"), (2, None)], schema=["id", "v"]).collect()
    assert rows[1].id == 2 and rows[1]["v"] is None and rows[0].asDict() == {"id": 1, "v": "x"}


def test_buffers_are_handed_out_without_copies(spark):
    df = spark.createDataFrame(pa.table({"n": pa.array(range(100_000), pa.int64()),
                                         "s": pa.array([str(i) for i in range(100_000)], pa.large_string())}))
    first, second = df.to_arrow(), df.to_arrow()
    # Both exports point at the engine's one copy of the values and of the string bytes.
    assert first.column("n").chunk(0).buffers()[1].address == second.column("n").chunk(0).buffers()[1].address
    assert first.column("s").chunk(0).buffers()[2].address == second.column("s").chunk(0).buffers()[2].address
    del df
    assert sum(first.column("n").to_pylist()) == sum(range(100_000))
