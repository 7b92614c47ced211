"""Prints the rows of a Delta table as delta-rs (the `deltalake` package) reads it, through its
query engine (DataFusion over delta-kernel, which applies deletion vectors): one JSON array per
row, columns in table order, lines sorted. Exit code 1 and the error on stderr when the table
cannot be read.

Usage: venv/bin/python delta_rs_rows.py TABLE_PATH
       venv/bin/python delta_rs_rows.py --log TABLE_PATH   (the table's version and its number of
                                                           data files, as JSON, reading no file)
"""
import json
import sys

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder


def main() -> None:
    if sys.argv[1] == "--log":
        table = DeltaTable(sys.argv[2])
        print(json.dumps({"version": table.version(), "files": len(table.file_uris())}))
        return
    table = pa.table(QueryBuilder().register("t", DeltaTable(sys.argv[1])).execute("SELECT * FROM t").read_all())
    rows = [json.dumps(list(row.values()), ensure_ascii=False, default=str) for row in table.to_pylist()]
    for line in sorted(rows):
        print(line)


if __name__ == "__main__":
    main()
