"""Input digests kept by stat in the run store (``store._digests``): an unchanged file is not read again, any
change of its stat is hashed again, and a file changed within the racy window of its hashing is never trusted.
Real parts only: real files, a real store (SQLite and PostgreSQL).

A row answering is observed through the row itself: its stored digest is replaced by a marker that no hash
gives, so a digest equal to the marker was read from the row, and the true sha256 was computed from the bytes.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from agentevals.store import RunStore
from agentevals.store._digests import KEEP_NS, RACY_NS
from agentevals.store.keys import file_digest
from support.traces import settled

MARKER = "row-answered"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mark(store: RunStore, path: Path) -> None:
    """Replace the row's digest by ``MARKER``: what it answers from now on is visible."""
    with store.db.transaction():
        store.db.execute("UPDATE file_digests SET sha256 = ? WHERE path = ?", (MARKER, os.path.abspath(path)))


def test_an_unchanged_file_is_answered_by_its_row_and_any_stat_change_hashes_again(tmp_path, store_url):
    store = RunStore.open(store_url)
    traces = tmp_path / "traces.json"
    traces.write_bytes(b'{"data": [1, 2, 3]}')
    settled(traces)
    assert store.file_digests([traces]) == [sha(traces)]  # hashed and recorded
    mark(store, traces)
    assert store.file_digests([traces]) == [MARKER]  # the row answers: the file was not read

    # The same size, other bytes, mtime moved on: a miss, whatever the row says.
    before = os.stat(traces)
    traces.write_bytes(b'{"data": [1, 2, 4]}')
    os.utime(traces, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert os.stat(traces).st_size == before.st_size
    assert store.file_digests([traces]) == [sha(traces)] != [MARKER]

    # Touched, bytes unchanged: hashed again, and the same digest as before the touch.
    settled(traces)
    digest = store.file_digests([traces])[0]
    mark(store, traces)
    os.utime(traces)
    assert store.file_digests([traces]) == [digest] == [sha(traces)]
    store.close()


def test_a_file_hashed_within_the_racy_window_is_hashed_again(tmp_path, store_url):
    """A file written just before it was hashed may be rewritten within the same timestamp tick, keeping its
    stat: its row is not trusted, however well the stat matches."""
    store = RunStore.open(store_url)
    traces = tmp_path / "traces.json"
    traces.write_bytes(b'{"data": []}')
    assert store.file_digests([traces]) == [sha(traces)]
    (hashed,), = store.db.execute("SELECT hashed_ns FROM file_digests WHERE path = ?", (os.path.abspath(traces),))
    st = os.stat(traces)
    assert max(st.st_mtime_ns, st.st_ctime_ns) >= int(hashed) - RACY_NS  # racy: written just before it was hashed
    mark(store, traces)
    assert store.file_digests([traces]) == [sha(traces)]  # the stat matches the row, and it is not trusted
    store.close()


def test_many_files_in_order_and_a_folder_is_hashed_every_time(tmp_path, store_url):
    store = RunStore.open(store_url)
    files = []
    for i in range(3):
        files.append(tmp_path / f"{i}.json")
        files[-1].write_text(f'{{"data": [{i}]}}')
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "x.json").write_text("{}")
    found = store.file_digests([*files, files[0], folder])
    assert found == [*(sha(f) for f in (*files, files[0])), file_digest(folder)]
    assert store.db.execute("SELECT COUNT(*) FROM file_digests")[0][0] == 3  # a folder's stat is no key
    store.close()


def test_rows_past_the_keeping_time_go_when_new_ones_are_written(tmp_path, store_url):
    store = RunStore.open(store_url)
    with store.db.transaction():
        store.db.execute("INSERT INTO file_digests (path, size, mtime_ns, ctime_ns, inode, sha256, hashed_ns) "
                         "VALUES ('/gone/ci-job/traces.json', 1, 1, 1, '1:1', 'x', ?)", (time.time_ns() - KEEP_NS - 1,))
        store.db.execute("INSERT INTO file_digests (path, size, mtime_ns, ctime_ns, inode, sha256, hashed_ns) "
                         "VALUES ('/kept/traces.json', 1, 1, 1, '1:1', 'x', ?)", (time.time_ns() - KEEP_NS // 2,))
    traces = tmp_path / "traces.json"
    traces.write_text("{}")
    store.file_digests([traces])
    kept = sorted(row[0] for row in store.db.execute("SELECT path FROM file_digests"))
    assert kept == sorted(["/kept/traces.json", os.path.abspath(traces)])
    store.close()
