"""sluice: exactly-once data movement between Kafka, PostgreSQL and Delta Lake, in the shape of
PySpark, on sluice's C++ engine in this process.

    import sluice
    spark = sluice.Session(warehouse="/data/warehouse", storage="/data/storage")
    df = spark.read.format("delta").load("/data/tables/orders")
    df.where("total > 10").select("id", "total * 2 AS t").to_arrow()

See docs/python.md.
"""
from ._sluice import __version__
from .dataframe import DataFrame, DataFrameWriter, Row
from .delta import DeltaMergeBuilder, DeltaTable
from . import functions
from .errors import SluiceError, StreamingQueryException
from .session import DataFrameReader, DataStreamReader, Session
from .streaming import DataStreamWriter, StreamingQuery, StreamingQueryManager

__all__ = [
    "DataFrame",
    "DataFrameReader",
    "DataFrameWriter",
    "DataStreamReader",
    "DataStreamWriter",
    "DeltaMergeBuilder",
    "DeltaTable",
    "Row",
    "Session",
    "SluiceError",
    "StreamingQuery",
    "StreamingQueryException",
    "StreamingQueryManager",
    "__version__",
    "functions",
]
