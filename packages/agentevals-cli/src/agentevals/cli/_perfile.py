"""``run`` over several files where some are unchanged since a stored run: their cases are taken as stored and
the files are not read (``store._perfile``). Only when each file's cases depend on that file alone; anything
else (a rule that looks across cases, another executor, log records that reach every file's traces) and the
run reads every file, stored results reused case by case as before.

A file whose traces have session ids, when conversations may group, is taken only when the files to be read
share none of its session ids (and, under ``auto``, leave the grouping as it was). Those files' session ids
are found by reading them first, when they weigh no more than the files taken that way (so a rerun never
reads more than a cold run); otherwise such files are read too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..store._perfile import FileTracker, Taken
    from ._pipeline import RunRequest

__all__ = ["PerFile", "independent_files"]


def independent_files(req: RunRequest) -> bool:
    """Whether each input file's cases depend on that file alone (and the run's settings): not when a rule
    looks across cases (sampling, judge budgets, repetitions, a one-case eval set that pairs with the run's
    only case, stopping at the first error), another executor reads the files, or a file is given twice."""
    options = req.options
    if (options.executor != "local" or options.dump_inputs is not None or options.repeat_key or options.pass_at_k
            or options.fail_on_evaluation_error or options.judge_probe is not None or options.independent_cases):
        return False
    if req.eval_set is not None and len(getattr(req.eval_set, "eval_cases", None) or [None]) == 1:
        return False  # a one-case eval set (or one not loaded yet): its pairing depends on the other cases
    if len({os.path.abspath(p) for p in req.inputs}) != len(req.inputs):
        return False
    from ..engine.admission import admissions_for
    from ..engine.filters import FilterAdmission

    evaluators = [getattr(e, "evaluator", e) for e in req.evaluators]
    return all(isinstance(check, FilterAdmission) for check in admissions_for(evaluators, options))


@dataclass
class PerFile:
    """The files of this run with their keys; what it takes from a stored run (``taken``), if anything."""

    keys: list[str]
    tracker: FileTracker
    group_by: str = "auto"
    taken: Optional[Taken] = None

    @classmethod
    def plan(cls, req: RunRequest, store: Any, reuse: Any, context: Any, keys: list[str]) -> PerFile:
        """Track this run's files (the run records them) and take the unchanged ones from a stored run."""
        from ..store._perfile import FileTracker, apart, find_files
        from ..store._replay import TAKEN_NOTE

        group_by = req.options.group_by
        found = cls(keys, FileTracker([str(p) for p in req.inputs]), group_by)
        context.sessions = {}
        try:
            taken = find_files(store, keys, grouped=group_by != "trace")
        except Exception:  # a store that cannot be searched: every file is read
            return found
        if taken is None or _logs_among(req.inputs, taken.files):
            return found
        if taken.sessions and group_by != "trace":
            apart(taken, _session_ids_read(req, taken), group_by)
            if not taken.files:
                return found
        found.taken = taken
        context.sessions.update((str(req.inputs[pos]), counts) for pos, counts in taken.sessions.items())
        reuse.reused += taken.results
        files, count = len(taken.files), taken.count
        req.options.notes.append(f"{count} case{'s' if count != 1 else ''} of {files} file{'s' if files != 1 else ''} "
                                 f"unchanged since run {taken.run_id} taken as stored; {TAKEN_NOTE}")
        return found

    def inputs(self, given: list[str]) -> list[Any]:
        """The run's inputs: each taken file as its stored cases (``trace_sources.stored.StoredFile``)."""
        if self.taken is None:
            return list(given)
        from ..trace_sources.stored import StoredFile

        taken = self.taken
        return [StoredFile(str(path), taken.cases(*taken.files[pos]), taken.files[pos][1],
                           shares=any(n > 1 for n in taken.sessions.get(pos, {}).values()))
                if pos in taken.files else path for pos, path in enumerate(given)]

    def record(self, store: Any, run_id: str, run: Any, context: Any) -> None:
        """Store which cases each file made, unless the run read OTLP log records (they reach every file's
        traces) or left traces out."""
        if context.log_events or context.skipped:
            return
        from ..store._perfile import groups_conversations, record_files, session_totals

        sessions = context.sessions or {}
        record_files(store, run_id, self.tracker.rows(self.keys, run, sessions, grouped=groups_conversations(
            self.group_by, session_totals(sessions.values()))))


def _session_ids_read(req: RunRequest, taken: Taken) -> Mapping[str, int]:
    """Each session id's traces in the files the run reads (those not taken), found by reading them; when they
    weigh more than the taken files with session ids, every such file is read instead (``Taken.drop``)."""
    from ..store._perfile import session_totals
    from ..trace_sources import ReadContext, resolve

    read = [path for pos, path in enumerate(req.inputs) if pos not in taken.files]
    if _size(read) > _size([req.inputs[pos] for pos in taken.sessions]):
        for pos in list(taken.sessions):
            taken.drop(pos)
        return {}
    sessions: dict[str, dict[str, int]] = {}
    for _ in resolve(read, context=ReadContext(trace_format=req.trace_format, keep_spans=False, sessions=sessions)):
        pass  # an unreadable file is the run's to report
    return session_totals(sessions.values())


def _size(paths: list[str]) -> int:
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except OSError:
            pass
    return total


def _logs_among(inputs: list[str], taken: dict[int, tuple[int, int]]) -> bool:
    """Whether a file to be read holds OTLP log records, which may belong to traces of the files taken."""
    from ..trace_sources.files import mentions_logs

    return any(mentions_logs(path) for pos, path in enumerate(inputs) if pos not in taken)
