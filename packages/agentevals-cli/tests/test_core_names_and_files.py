"""``core._names.snake_case`` (one camelCase rule for every reader) and ``core._atomic.replaced`` (files replaced
whole) on real files, a real FIFO and a real failure mid-write."""

from __future__ import annotations

import os
import stat
import threading

import pytest
from agentevals.core._atomic import replaced
from agentevals.core._names import snake_case


@pytest.mark.parametrize(("name", "snake"), [
    ("maxConcurrentTraces", "max_concurrent_traces"), ("evalSetId", "eval_set_id"), ("eval_set_id", "eval_set_id"),
    ("judgeBaseURL", "judge_base_url"), ("apiKey2", "api_key2"), ("tool2Name", "tool2_name"), ("Type", "type"),
    ("", ""), ("URL", "url"),
])
def test_snake_case(name, snake):
    assert snake_case(name) == snake


def test_the_trust_check_and_the_loader_read_a_key_alike():
    """A key the server refuses (base_url; judge_base_url with credential refs) is refused in every spelling the
    config loader reads as it."""
    from agentevals.serve._trust import code_in_entries

    for spelling in ("base_url", "baseUrl", "baseURL", "judge_base_url", "judgeBaseUrl", "judgeBaseURL"):
        found = code_in_entries([{"name": "x", "type": "builtin", spelling: "http://127.0.0.1:1"}],
                                credential_refs=True)
        assert found is not None and f"sets {spelling} (" in found
    assert code_in_entries([{"name": "x", "type": "builtin", "judgeModel": "m"}], credential_refs=True) is None


def test_a_file_is_replaced_whole(tmp_path):
    target = tmp_path / "out" / "report.json"  # the folder is created
    with replaced(target) as fh:
        fh.write("one\n")
    assert target.read_text() == "one\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # like any file the user asks for

    with pytest.raises(RuntimeError), replaced(target) as fh:
        fh.write("half of tw")
        raise RuntimeError("interrupted")
    assert target.read_text() == "one\n" and os.listdir(target.parent) == ["report.json"]  # no temporary left

    with replaced(target, newline="") as fh:
        fh.write("a\r\nb")
    assert target.read_bytes() == b"a\r\nb"


def test_a_fifo_is_written_in_place_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with replaced(fifo) as fh:
        fh.write("through the pipe")
    reader.join(timeout=30)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
