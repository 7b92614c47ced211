"""Writes a Parquet file the way pyarrow writes it with one set of options.

Usage: pyarrow_write.py CASE PATH. Each case is a layout another engine produces and sluice must
read exactly as DuckDB reads it (src/parquet/pyarrow_interop_integration_test.cc compares them).
"""
import datetime
import decimal
import sys

import pyarrow as pa
import pyarrow.parquet as pq

N = 500


def rows(n=N):
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "name": pa.array([None if i % 7 == 0 else f"name {i % 13}" for i in range(n)], pa.string()),
        "score": pa.array([i * 0.25 - 3 for i in range(n)], pa.float64()),
        "ratio": pa.array([float(i) / 7 for i in range(n)], pa.float32()),
        "small": pa.array([(i * 37) % 120 - 60 for i in range(n)], pa.int32()),
    })


def nested(n=N):
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "tags": pa.array([None if i % 11 == 0 else [f"t{j}" for j in range(i % 4)] for i in range(n)],
                         pa.list_(pa.string())),
        "points": pa.array([[{"x": i, "y": None if j % 2 else j} for j in range(i % 3)] for i in range(n)],
                           pa.list_(pa.struct([("x", pa.int32()), ("y", pa.int32())]))),
        "attrs": pa.array([None if i % 5 == 0 else [(f"k{j}", i * j) for j in range(i % 3)] for i in range(n)],
                          pa.map_(pa.string(), pa.int64())),
        "matrix": pa.array([[[i, j] for j in range(i % 3)] for i in range(n)], pa.list_(pa.list_(pa.int16()))),
    })


def temporal(n=N):
    base = datetime.datetime(2026, 1, 31, 10, 0, 0, tzinfo=datetime.timezone.utc)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "at": pa.array([base + datetime.timedelta(seconds=i * 3601, microseconds=i) for i in range(n)],
                       pa.timestamp("us", tz="UTC")),
        "local": pa.array([datetime.datetime(1969, 12, 31) + datetime.timedelta(hours=i) for i in range(n)],
                          pa.timestamp("us")),
        "day": pa.array([datetime.date(2024, 2, 28) + datetime.timedelta(days=i) for i in range(n)], pa.date32()),
    })


def decimals(n=N):
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "price": pa.array([decimal.Decimal(i * 1001 - 50000).scaleb(-2) for i in range(n)], pa.decimal128(9, 2)),
        "wide": pa.array([decimal.Decimal(10**30 + i).scaleb(-10) for i in range(n)], pa.decimal128(38, 10)),
        "text": pa.array([f"{i:05d}" * (i % 3) for i in range(n)], pa.large_string()),
        "raw": pa.array([bytes([i % 256, (i * 7) % 256]) for i in range(n)], pa.binary()),
    })


def all_null(n=N):
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "nothing": pa.array([None] * n, pa.int64()),
        "no_text": pa.array([None] * n, pa.string()),
    })


def dictionary(n=N):
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "kind": pa.array([["red", "green", "blue"][i % 3] for i in range(n)]).dictionary_encode(),
    })


CASES = {
    # Data pages v2 under every codec sluice reads, one column entirely null.
    "v2_snappy_all_null": lambda p: pq.write_table(all_null(), p, data_page_version="2.0", compression="snappy"),
    "v2_zstd_all_null": lambda p: pq.write_table(all_null(), p, data_page_version="2.0", compression="zstd"),
    "v2_gzip": lambda p: pq.write_table(rows(), p, data_page_version="2.0", compression="gzip"),
    # Lists named as older pyarrow and parquet-cpp named them ("item" in a "list" group).
    "legacy_list_names": lambda p: pq.write_table(nested(), p, use_compliant_nested_type=False),
    "compliant_nested": lambda p: pq.write_table(nested(), p, data_page_version="2.0", compression="snappy"),
    # Timestamps as INT96 (what Spark and Impala write by default).
    "int96": lambda p: pq.write_table(temporal(), p, use_deprecated_int96_timestamps=True),
    "timestamps_millis_v1": lambda p: pq.write_table(temporal(), p, coerce_timestamps="ms",
                                                     allow_truncated_timestamps=True, version="1.0"),
    # Encodings chosen per column.
    "delta_encodings": lambda p: pq.write_table(rows(), p, use_dictionary=False, data_page_version="2.0",
                                                column_encoding={"id": "DELTA_BINARY_PACKED",
                                                                 "small": "DELTA_BINARY_PACKED",
                                                                 "name": "DELTA_BYTE_ARRAY"}),
    "byte_stream_split": lambda p: pq.write_table(rows(), p, use_dictionary=False,
                                                  use_byte_stream_split=["score", "ratio"]),
    "length_byte_array": lambda p: pq.write_table(rows(), p, use_dictionary=False,
                                                  column_encoding={"name": "DELTA_LENGTH_BYTE_ARRAY"}),
    # Decimals on fixed-length byte arrays, large strings, binary; the legacy converted types only.
    "decimals": lambda p: pq.write_table(decimals(), p, compression="zstd"),
    "decimals_v1": lambda p: pq.write_table(decimals(), p, version="1.0"),
    # Dictionary arrays, small pages and row groups, statistics off.
    "dictionary_small_pages": lambda p: pq.write_table(dictionary(), p, data_page_size=64, row_group_size=70,
                                                       write_statistics=False),
    # No Arrow schema in the metadata: only the Parquet schema tells the types.
    "no_arrow_schema": lambda p: pq.write_table(nested(), p, store_schema=False),
}


def main():
    case, path = sys.argv[1], sys.argv[2]
    CASES[case](path)


if __name__ == "__main__":
    main()
