"""``agentevals.core._files``: bounded reads, pipes copied once within a deadline, the JSON depth guard."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

import pytest
from agentevals.core._files import JsonDepthGuard, read_input, regular_path
from agentevals.errors import InputFileError


def test_a_regular_file_is_read_as_is(tmp_path: Path):
    path = tmp_path / "a.json"
    path.write_bytes(b"{}")
    assert regular_path(path) == path
    assert read_input(path) == b"{}"


def test_size_limit_names_the_file_and_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTEVALS_MAX_INPUT_BYTES", "10")
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputFileError, match=r"^big: larger than 10 bytes \(the input size limit\); "
                                             r"set AGENTEVALS_MAX_INPUT_BYTES to allow more$"):
        read_input(path, "big")


def test_a_fifo_is_copied_once_without_losing_bytes(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    payload = b'{"data": []}' + b" " * 100_000

    def writer() -> None:
        time.sleep(0.2)  # the reader opened first: no writer yet must not be read as end of input
        with open(fifo, "wb") as f:
            f.write(payload)

    thread = threading.Thread(target=writer)
    thread.start()
    copy = regular_path(fifo)
    thread.join()
    assert copy != fifo and copy.read_bytes() == payload
    assert regular_path(fifo) == copy  # a second reader (the format sniff, then the parse) gets the same copy


def test_a_fifo_without_writer_ends_at_the_input_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTEVALS_INPUT_TIMEOUT", "0.3")
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match=r"never: no end of input after 0.3s"):
        regular_path(fifo)  # without the limit this waits for a writer forever


def test_a_device_stops_at_the_first_chunk():
    with pytest.raises(InputFileError, match=r"^/dev/zero: not JSON: it starts with b'\\x00"):
        regular_path("/dev/zero", json=True)
    with pytest.raises(InputFileError, match=r"^/dev/zero: binary data \(NUL bytes\), expected text$"):
        regular_path("/dev/zero")


def test_depth_guard_passes_normal_json_and_stops_deep_nesting():
    normal = b'{"data": [{"spans": [{"tags": [{"key": "a", "value": "[[[not nesting]]]"}]}]}]}' * 1000
    guard = JsonDepthGuard(io.BytesIO(normal), "ok.json", limit=20)  # 10 deep; the bound is conservative
    while guard.read(4096):
        pass
    deep = JsonDepthGuard(io.BytesIO(b"[" * 50 + b"]" * 50), "deep.json", limit=10)
    with pytest.raises(InputFileError, match=r"^deep.json: JSON nested deeper than 10 levels"):
        while deep.read(7):  # the depth carries across chunks
            pass
