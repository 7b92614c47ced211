"""Columns as PySpark writes them: ``col("x").isNotNull()``, ``upper("name")``, ``lit(3)``.

A Column is SQL text: operators and methods build bigger SQL, which the engine binds when a
DataFrame method takes the column (``where``, ``select``, ``withColumn``). Every SQL function of
sluice (docs/sql.md) is a function here by its name: ``functions.upper("name")`` is
``upper(`name`)``; a string argument names a column, as in PySpark, and ``lit`` makes a value.
"""
from __future__ import annotations

import datetime
import decimal
from typing import Any


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, decimal.Decimal)):
        return repr(value) if not isinstance(value, decimal.Decimal) else f"{value}BD"
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
    if isinstance(value, datetime.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, bytes):
        return "X'" + value.hex() + "'"
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_of(value: Any) -> str:
    """A Column's SQL, or a Python value as a SQL literal."""
    return value._sql if isinstance(value, Column) else _literal(value)


def expression_text(value: Any) -> Any:
    """An expression given as SQL text or as a Column, as SQL text (None stays None)."""
    return value._sql if isinstance(value, Column) else value


class Column:
    """An expression over a DataFrame's columns (PySpark's Column), held as SQL text."""

    def __init__(self, sql: str):
        self._sql = sql

    def __repr__(self) -> str:
        return f"Column<'{self._sql}'>"

    def __bool__(self):
        raise ValueError("a Column has no truth value: combine conditions with &, | and ~, not and/or/not")

    def _binary(self, operator: str, other: Any) -> "Column":
        return Column(f"({self._sql} {operator} {sql_of(other)})")

    def _reflected(self, operator: str, other: Any) -> "Column":
        return Column(f"({sql_of(other)} {operator} {self._sql})")

    __add__ = lambda self, o: self._binary("+", o)  # noqa: E731
    __sub__ = lambda self, o: self._binary("-", o)  # noqa: E731
    __mul__ = lambda self, o: self._binary("*", o)  # noqa: E731
    __truediv__ = lambda self, o: self._binary("/", o)  # noqa: E731
    __mod__ = lambda self, o: self._binary("%", o)  # noqa: E731
    __radd__ = lambda self, o: self._reflected("+", o)  # noqa: E731
    __rsub__ = lambda self, o: self._reflected("-", o)  # noqa: E731
    __rmul__ = lambda self, o: self._reflected("*", o)  # noqa: E731
    __rtruediv__ = lambda self, o: self._reflected("/", o)  # noqa: E731
    __eq__ = lambda self, o: self._binary("=", o)  # noqa: E731
    __ne__ = lambda self, o: self._binary("!=", o)  # noqa: E731
    __lt__ = lambda self, o: self._binary("<", o)  # noqa: E731
    __le__ = lambda self, o: self._binary("<=", o)  # noqa: E731
    __gt__ = lambda self, o: self._binary(">", o)  # noqa: E731
    __ge__ = lambda self, o: self._binary(">=", o)  # noqa: E731
    __and__ = lambda self, o: self._binary("AND", o)  # noqa: E731
    __or__ = lambda self, o: self._binary("OR", o)  # noqa: E731
    __hash__ = None

    def __neg__(self) -> "Column":
        return Column(f"(- {self._sql})")

    def __invert__(self) -> "Column":
        return Column(f"(NOT {self._sql})")

    def eqNullSafe(self, other: Any) -> "Column":
        return self._binary("<=>", other)

    def isNull(self) -> "Column":
        return Column(f"({self._sql} IS NULL)")

    def isNotNull(self) -> "Column":
        return Column(f"({self._sql} IS NOT NULL)")

    def isin(self, *values: Any) -> "Column":
        if len(values) == 1 and isinstance(values[0], (list, tuple, set)):
            values = tuple(values[0])
        return Column(f"({self._sql} IN ({', '.join(sql_of(v) for v in values)}))")

    def between(self, lower: Any, upper: Any) -> "Column":
        return Column(f"({self._sql} BETWEEN {sql_of(lower)} AND {sql_of(upper)})")

    def like(self, pattern: str) -> "Column":
        return Column(f"({self._sql} LIKE {_literal(pattern)})")

    def rlike(self, pattern: str) -> "Column":
        return Column(f"({self._sql} RLIKE {_literal(pattern)})")

    def startswith(self, prefix: Any) -> "Column":
        return Column(f"startswith({self._sql}, {sql_of(prefix)})")

    def endswith(self, suffix: Any) -> "Column":
        return Column(f"endswith({self._sql}, {sql_of(suffix)})")

    def contains(self, other: Any) -> "Column":
        return Column(f"contains({self._sql}, {sql_of(other)})")

    def cast(self, data_type: str) -> "Column":
        return Column(f"CAST({self._sql} AS {data_type})")

    astype = cast

    def alias(self, name: str) -> "Column":
        return Column(f"{self._sql} AS {_quote(name)}")

    name = alias

    def getField(self, name: str) -> "Column":
        return Column(f"{self._sql}.{_quote(name)}")

    def getItem(self, key: Any) -> "Column":
        return Column(f"{self._sql}[{sql_of(key)}]")

    def __getitem__(self, key: Any) -> "Column":
        return self.getItem(key)


def col(name: str) -> Column:
    """The column ``name``; dots reach into structs (``col("value.user")``) unless the name is
    back-quoted."""
    if "`" in name:
        return Column(name)
    return Column(".".join(_quote(part) for part in name.split(".")))


column = col


def lit(value: Any) -> Column:
    return Column(_literal(value))


def expr(sql: str) -> Column:
    """Any SQL expression sluice binds (docs/sql.md)."""
    return Column(sql)


def _argument(value: Any) -> str:
    # As in PySpark's functions, a string argument is a column name.
    return col(value)._sql if isinstance(value, str) else sql_of(value)


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)

    def function(*arguments: Any) -> Column:
        return Column(f"{name}({', '.join(_argument(a) for a in arguments)})")

    function.__name__ = name
    return function
