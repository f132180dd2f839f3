"""Labels files: JSONL or CSV with the columns ``run, case, metric, verdict, score, note, labeler`` (and
``created_at``), read into the run store all or nothing, written back from it (``agentevals labels``).

Example:
    ```python
    store = RunStore.open("runs.sqlite")
    count = import_labels(store, Path("labels.csv"))        # ConfigError "labels.csv:4: …": nothing stored
    write_labels_file(store.labels(), Path("out.jsonl"))
    ```
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Optional

from ..core._atomic import replaced
from ..core._csv import guard_cell, unguard_cell
from ..core._files import read_input
from ..core._registry import did_you_mean
from ..errors import ConfigError, RunNotFoundError, StoreError
from ._labels import LABEL_COLUMNS, LabelRecord

if TYPE_CHECKING:
    from ._store import RunStore

__all__ = ["LABEL_FORMATS", "import_labels", "label_format", "read_labels_file", "write_labels_file"]

LABEL_FORMATS = ("jsonl", "csv")
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
_REQUIRED = ("run", "case")


def label_format(path: Optional[Path], fmt: Optional[str]) -> str:
    """``fmt``, else the format of ``path``'s extension (``.jsonl``/``.ndjson``, ``.csv``); ``ConfigError`` when
    neither says."""
    if fmt:
        if fmt not in LABEL_FORMATS:
            raise ConfigError(f"unknown labels format {fmt!r}: use jsonl or csv")
        return fmt
    if path is not None and path.suffix.lower() in _EXTENSIONS:
        return _EXTENSIONS[path.suffix.lower()]
    where = f"{path}: " if path is not None else ""
    raise ConfigError(f"{where}cannot tell the labels format from the file name: name it .jsonl or .csv, or "
                      "pass --format jsonl|csv")


def read_labels_file(path: Path, *, fmt: Optional[str] = None, required: Sequence[str] = _REQUIRED,
                     extra: Sequence[str] = ()) -> list[tuple[int, dict[str, Optional[str]]]]:
    """The rows of a labels file as ``(line, {column: text or None})``, ``line`` where the row starts.

    ``extra``: columns accepted besides ``LABEL_COLUMNS`` (``agentevals calibrate`` reads ``paraphrase``).

    Raises ``InputFileError`` when the file cannot be read, ``ConfigError`` ``FILE:LINE: …`` for a row that
    is not a row (bad JSON, an unknown column, a value that is not text or a number, a missing column).
    """
    kind = label_format(path, fmt)
    try:
        text = read_input(path, expected="a labels file").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}): save the labels file as UTF-8") from None
    columns = (*LABEL_COLUMNS, *extra)
    rows = list(_jsonl_rows(path, text, columns) if kind == "jsonl" else _csv_rows(path, text, columns))
    for line, row in rows:
        missing = [c for c in required if not row.get(c)]
        if missing:
            raise ConfigError(f"{path}:{line}: empty or missing column {missing[0]!r} (columns: "
                              f"{', '.join(columns)})")
    return rows


def _check_columns(path: Path, line: int, names: Sequence[str], columns: Sequence[str]) -> None:
    for name in names:
        if name not in columns:
            raise ConfigError(f"{path}:{line}: unknown column {name!r}{did_you_mean(name, columns)} "
                              f"(columns: {', '.join(columns)})")


def _jsonl_rows(path: Path, text: str, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, Optional[str]]]]:
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"{path}:{line}: not a JSON object: {str(exc).splitlines()[0]}") from None
        if not isinstance(obj, dict):
            raise ConfigError(f"{path}:{line}: not a JSON object (one label per line: "
                              '{"run": …, "case": …, "verdict": "pass"})')
        _check_columns(path, line, list(obj), columns)
        row: dict[str, Optional[str]] = {}
        for key, value in obj.items():
            if value is None or isinstance(value, str):
                row[key] = value
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                row[key] = repr(value)
            else:
                raise ConfigError(f"{path}:{line}: column {key!r} is {type(value).__name__}, expected text or a number")
        yield line, row


def _csv_rows(path: Path, text: str, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, Optional[str]]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [h.strip() for h in header]
        _check_columns(path, 1, header, columns)
        if len(set(header)) != len(header):
            raise ConfigError(f"{path}:1: a column appears twice in the header")
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1  # a quoted note may span lines: report where the row starts
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                raise ConfigError(f"{path}:{line}: {len(cells)} cells, the header has {len(header)} columns "
                                  "(quote a value that holds a comma)")
            yield line, {name: (unguard_cell(cells[i]) if i < len(cells) and cells[i] != "" else None)
                         for i, name in enumerate(header)}
    except csv.Error as exc:
        raise ConfigError(f"{path}:{reader.line_num}: not CSV: {exc}") from None


def import_labels(store: RunStore, path: Path, *, fmt: Optional[str] = None,
                  run: Optional[str] = None) -> list[LabelRecord]:
    """Check every row of the labels file against the store, then store them all in one transaction; a bad row
    (``ConfigError`` ``FILE:LINE: …``: unknown run, case or metric, bad verdict or score) stores nothing.

    The ``run`` column holds a run id or a unique prefix of one (not ``latest``: a file means the same runs
    whenever it is read); ``case`` a case id as ``runs show`` prints it; ``metric`` is empty for the whole case. A
    row for the same case, metric and labeler as a stored label replaces it. ``run`` (``--run``): the run of the
    rows that leave the column empty or have none (an id, a unique prefix or ``latest``, resolved once).
    """
    default = store.resolve(run) if run is not None else None
    rows = read_labels_file(path, fmt=fmt, required=("case",) if default else _REQUIRED)
    runs: dict[str, str] = {}
    records: list[LabelRecord] = []
    for line, row in rows:
        try:
            ref = str(row.get("run") or "").strip()
            if not ref and default is not None:
                run_id = default
            else:
                if ref not in runs:
                    if ref in ("latest", "last"):
                        raise ConfigError(f"run {ref!r}: name the run by its id (a labels file means the same runs "
                                          "whenever it is imported; or pass --run latest and leave the column empty)")
                    runs[ref] = store.resolve(ref)
                run_id = runs[ref]
            records.append(store.label_record(
                run_id, str(row["case"]).strip(), verdict=row.get("verdict"), score=row.get("score"),
                metric=row.get("metric"), note=row.get("note"), labeler=row.get("labeler"),
                created_at=row.get("created_at")))
        except (ConfigError, RunNotFoundError, StoreError) as exc:
            raise ConfigError(f"{path}:{line}: {exc}; nothing imported") from None
    store.add_labels(records)
    return records


def write_labels_file(records: Sequence[LabelRecord], path: Optional[Path], *, fmt: Optional[str] = None,
                      stream: Optional[IO[str]] = None) -> str:
    """Write ``records`` as a labels file (``path``, atomically; or ``stream`` when ``path`` is None); returns
    the format written. CSV is RFC 4180 (notes with commas, quotes and newlines quoted), UTF-8, a text cell
    that a spreadsheet would run as a formula guarded by a leading ``'`` (``core._csv``; import removes it)."""
    kind = label_format(path, fmt or ("jsonl" if path is None else None))
    if path is None:
        assert stream is not None
        _write(records, kind, stream)
        return kind
    with replaced(path, newline="") as f:
        _write(records, kind, f)
    return kind


def _write(records: Sequence[LabelRecord], kind: str, out: IO[str]) -> None:
    if kind == "jsonl":
        for r in records:
            out.write(json.dumps(r.as_row(), ensure_ascii=False) + "\n")
        return
    writer = csv.DictWriter(out, fieldnames=LABEL_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for r in records:
        # Text cells are guarded against formula injection; the score is a number, written as one.
        row: dict[str, Any] = {k: "" if v is None else repr(v) if isinstance(v, float) else guard_cell(str(v))
                               for k, v in r.as_row().items()}
        writer.writerow(row)
