"""One row per ticket for a bigger engine (DuckDB, Spark, a BI tool): CSV
always, Parquet through the optional ``[fleet]`` extra (DuckDB, which has
wheels for Windows on ARM64; pyarrow has none there). Both are written as
the rows arrive: nothing is held in memory."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path
from typing import IO

from ..shell import pip_command
from .rows import Row

# Parquet column types (DuckDB names); everything else is VARCHAR.
_TYPES = {
    "ready": "BOOLEAN",
    "emulated": "BOOLEAN",
    "smoke_seconds": "DOUBLE",
    "htp_arch": "INTEGER",
}


# A spreadsheet runs a cell that starts like this as a formula; every string
# in a row comes from a ticket, i.e. from whoever sent it (OWASP "CSV
# injection"). Such a cell is written with a leading apostrophe, which
# spreadsheets show as text; a plain number ("-1.5") is left as it is.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _as_text(value: object) -> object:
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


class OutputError(OSError):
    """An output file cannot be written (exit code 2, the message says why)."""


def parquet_missing() -> str | None:
    """Why ``--parquet`` cannot work here (and how to make it work), or None."""
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return (
            "--parquet needs DuckDB (the [fleet] extra), which this installation lacks; "
            f"add it with: {pip_command(sys.executable, os.name == 'nt', 'install', 'duckdb')}"
        )
    return None


class CsvRows:
    """``--csv FILE``: a header, then one line per ticket. Made for people's
    spreadsheets too, so a cell that would run as a formula is written as text
    (``spreadsheet_safe``); the Parquet staging file keeps values exact."""

    def __init__(self, path: str | os.PathLike[str], *, spreadsheet_safe: bool = True) -> None:
        self.path = Path(path)
        self.spreadsheet_safe = spreadsheet_safe
        try:
            self.handle: IO[str] = open(self.path, "w", encoding="utf-8", newline="")  # noqa: SIM115
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self.writer = csv.DictWriter(self.handle, fieldnames=Row.columns())
        self.writer.writeheader()
        self.count = 0

    def __call__(self, row: Row) -> None:
        flat = row.flat()
        if self.spreadsheet_safe:
            flat = {name: _as_text(value) for name, value in flat.items()}
        self.writer.writerow(flat)
        self.count += 1

    def close(self) -> None:
        self.handle.close()

    def discard(self) -> None:
        """Nothing to write after all: no file is left behind."""
        self.handle.close()
        self.path.unlink(missing_ok=True)


class ParquetRows:
    """``--parquet FILE``: the rows go to a CSV beside it, which DuckDB then
    turns into Parquet with typed columns (streamed, not loaded)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.staging = self.path.with_name(f".{self.path.name}.rows.csv")
        self.rows = CsvRows(self.staging, spreadsheet_safe=False)

    def __call__(self, row: Row) -> None:
        self.rows(row)

    def close(self) -> None:
        import duckdb

        self.rows.close()
        columns = {name: _TYPES.get(name, "VARCHAR") for name in Row.columns()}
        try:
            with duckdb.connect(":memory:") as db:
                relation = db.read_csv(
                    str(self.staging), header=True, columns=columns, all_varchar=False
                )
                relation.write_parquet(str(self.path))
        except duckdb.Error as exc:
            raise OutputError(f"cannot write {self.path}: {exc}") from exc
        finally:
            self.staging.unlink(missing_ok=True)

    def discard(self) -> None:
        self.rows.close()
        self.staging.unlink(missing_ok=True)
