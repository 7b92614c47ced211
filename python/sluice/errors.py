"""The exception sluice raises: an error class (docs/errors.md) and a message."""


class SluiceError(Exception):
    """A failed sluice operation.

    ``error_class`` is one of the stable names of docs/errors.md (``UNRESOLVED_COLUMN``,
    ``DELTA_TABLE_NOT_FOUND``, ``PYTHON_CALLBACK_FAILED`` ...); PySpark's ``getCondition()`` and
    ``getErrorClass()`` return it too.
    """

    def __init__(self, error_class: str, message: str):
        super().__init__(error_class, message)
        self.error_class = error_class
        self.message = message

    def getCondition(self) -> str:
        return self.error_class

    def getErrorClass(self) -> str:
        return self.error_class

    def getMessage(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return f"[{self.error_class}] {self.message}"


class StreamingQueryException(SluiceError):
    """The error a streaming query ended with, raised by ``awaitTermination()``."""
