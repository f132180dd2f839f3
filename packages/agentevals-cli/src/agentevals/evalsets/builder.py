"""Eval sets built from stored runs: pick cases, turn them into ADK eval cases, and add, merge, diff, validate.

A stored case keeps its conversation in brief (``results._transcript``: per turn the user text, the tool
calls and responses, the response, the turn's span id). ``eval_case_from`` writes it as an ADK ``EvalCase``
whose turns are the expected values: ``user_content``, ``final_response``, ``intermediate_data.tool_uses`` and
(when the store kept them) ``intermediate_data.tool_responses``, each ``invocation_id`` the turn's span id (so
the same traces match it again, ``evalsets.matching`` rule 2), and the case's provenance under
``metadata.provenance`` (ADK keeps unknown keys of a case):

    {"run_id": "20261127-…", "case_id": "3e28…", "case_index": 0, "trace_ids": ["3e28…"],
     "sources": ["examples/traces/helm.json"], "status": "PASSED"}

A case with human labels (``agentevals labels``, the web UI) carries them under ``metadata.labels`` (``verdict``,
``score``, ``metric``, ``note``, ``labeler``, ``created_at``): ``run -e`` attaches them to the case a trace matches.

Everything written goes through the one redactor; keys are sorted and cases keep the run's order, so the
same run, selection and seed give the same bytes.

Example:
    ```python
    from agentevals.evalsets.builder import build_from_run, write_set
    from agentevals.store import RunStore

    store = RunStore.open("runs.sqlite")
    data, summary = build_from_run(store, "latest", which=["failed"], sample=20, seed=1, eval_set_id="golden")
    write_set("golden.evalset.json", data)
    ```
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..core._atomic import replaced
from ..core._names import snake_case
from ..core._registry import did_you_mean
from ..core.redact import redact_obj
from ..errors import ConfigError, InputFileError
from ..results import CaseResult, HumanLabel, Status, case_status, row_key
from .loader import case_keys, content_text, parse_eval_set

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["SELECTIONS", "BuildSummary", "SetDiff", "add_from_run", "base_id", "build_from_run", "diff_sets",
           "eval_case_from", "label_entries", "merge_sets", "put_case", "read_set", "run_timestamp", "sample_cases",
           "select_cases", "set_id_for", "set_labels", "validate_set", "write_set"]

SELECTIONS = ("failed", "passed", "all")
"""``--cases`` words; anything else is a case id as ``agentevals run`` prints it."""

_FAILING = (Status.FAILED, Status.ERROR)
_ID_CHARS = re.compile(r"[^A-Za-z0-9_]")
"""ADK's ids are ``^[a-zA-Z0-9_]+$``."""

Stored = tuple[int, CaseResult]


@dataclass
class BuildSummary:
    """What a build took: how many cases were chosen, written and left out, and why."""

    run_id: str
    selected: int = 0
    written: list[str] = field(default_factory=list)
    """The eval ids written, in order."""
    no_turns: list[str] = field(default_factory=list)
    """Case ids left out: the store kept no turns for them (nothing to expect)."""
    strata: dict[str, int] = field(default_factory=dict)
    """With ``--stratify-by``: cases taken per stratum (the metric's status in the case)."""


# Selection --------------------------------------------------------------------------------------------
def select_cases(cases: Sequence[Stored], which: Sequence[str]) -> list[Stored]:
    """The cases ``which`` names, in run order: ``failed`` (FAILED or ERROR), ``passed``, ``all``, or case ids.

    Raises ``ConfigError`` for an id the run does not have (with the closest id)."""
    words = [w for item in which for w in item.split(",") if w.strip()] or ["all"]
    keep: set[int] = set()
    by_id: dict[str, list[int]] = {}
    for idx, case in cases:
        by_id.setdefault(case.case_id, []).append(idx)
    for word in (w.strip() for w in words):
        low = word.lower()
        if low == "all":
            keep.update(idx for idx, _ in cases)
        elif low == "failed":
            keep.update(idx for idx, case in cases if case_status(case) in _FAILING)
        elif low == "passed":
            keep.update(idx for idx, case in cases if case_status(case) == Status.PASSED)
        elif word in by_id:
            keep.update(by_id[word])
        else:
            raise ConfigError(f"--cases: no case {word!r} in the run{did_you_mean(word, list(by_id) + list(SELECTIONS))} "
                              "(use failed, passed, all or case ids as 'agentevals runs show' prints them)")
    return [(idx, case) for idx, case in cases if idx in keep]


def _stratum(case: CaseResult, metric: str) -> str:
    for m in case.metrics:
        if m.name == metric:
            return row_key(m)
    return "absent"


def sample_cases(cases: Sequence[Stored], n: Optional[int], *, stratify_by: Optional[str] = None,
                 seed: int = 0) -> tuple[list[Stored], dict[str, int]]:
    """``n`` of ``cases`` drawn with ``random.Random(seed)`` (all of them when ``n`` is None or not smaller),
    in run order; with ``stratify_by``, drawn per stratum (that metric's status in each case: PASSED, FAILED,
    ERROR, NOT_EVALUATED, a skip kind, or ``absent``) in proportion to its size (largest remainders), each
    stratum getting at least one case when ``n`` allows. Returns the sample and the count per stratum."""
    if stratify_by is not None:
        known = sorted({m.name for _, c in cases for m in c.metrics})
        if stratify_by not in known:
            raise ConfigError(f"--stratify-by: no metric {stratify_by!r} in the chosen cases"
                              f"{did_you_mean(stratify_by, known)} (metrics: {', '.join(known) or 'none'})")
    strata: dict[str, list[Stored]] = {}
    for item in cases:
        strata.setdefault(_stratum(item[1], stratify_by) if stratify_by else "all", []).append(item)
    rng = random.Random(seed)
    if n is None or n >= len(cases):
        counts = {name: len(members) for name, members in sorted(strata.items())}
        return list(cases), counts if stratify_by else {}
    names = sorted(strata)
    quotas = {name: n * len(strata[name]) / len(cases) for name in names}
    take = {name: int(quotas[name]) for name in names}
    by_remainder = sorted(names, key=lambda s: (-(quotas[s] - take[s]), s))
    for name in by_remainder[: n - sum(take.values())]:
        take[name] += 1
    if n >= len(names):  # every stratum is seen: lend one from the largest share
        for name in names:
            if take[name] == 0:
                donor = max(names, key=lambda s: (take[s], s))
                take[donor] -= 1
                take[name] = 1
    chosen: list[Stored] = []
    for name in names:
        chosen.extend(rng.sample(strata[name], take[name]))
    chosen.sort(key=lambda item: item[0])
    return chosen, {name: take[name] for name in names} if stratify_by else {}


# Cases → ADK ------------------------------------------------------------------------------------------
def _content(text: str, role: str) -> dict[str, Any]:
    return {"parts": [{"text": text}], "role": role}


def _tool_response(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored tool response as ADK's ``FunctionResponse`` (``name``, ``response``: an object): an output that is
    a JSON object is that object; other text is ``{"result": text}`` (as the ADK-backed metrics pass it), or
    ``{"error": text}`` when the tool reported an error (``google.genai``'s key for error details)."""
    text = stored.get("output_full", stored.get("output")) or ""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        failed = str(stored.get("status") or "").upper() == "ERROR"
        value = {"error" if failed else "result": text}
    return {"name": stored.get("name") or "", "response": value}


def run_timestamp(moment: Optional[str]) -> float:
    """An ISO 8601 time (the run's start) as ADK's ``creation_timestamp`` (seconds); 0.0 when unknown."""
    if not moment:
        return 0.0
    try:
        parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return round((parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).timestamp(), 3)


def eval_case_from(case: CaseResult, index: int, *, run_id: str, eval_id: str,
                   created: float = 0.0, source_uris: Sequence[str] = ()) -> dict[str, Any]:
    """One stored case as an ADK ``EvalCase`` (snake_case, as ADK writes it), its turns the expected values."""
    turns = []
    for i, turn in enumerate(case._transcript):
        user = turn.get("user_full", turn.get("user")) or ""
        response = turn.get("response_full", turn.get("response"))
        invocation: dict[str, Any] = {
            "invocation_id": turn.get("invocation_id") or f"{eval_id}_inv_{i + 1}",
            "user_content": _content(user, "user"),
            "intermediate_data": {"tool_uses": [{"name": c["name"], "args": c.get("args") or {}}
                                                for c in turn.get("tool_calls") or ()]},
            "creation_timestamp": created,
        }
        if turn.get("tool_responses"):
            invocation["intermediate_data"]["tool_responses"] = [_tool_response(r) for r in turn["tool_responses"]]
        if response is not None:
            invocation["final_response"] = _content(response, "model")
        turns.append(invocation)
    provenance: dict[str, Any] = {"run_id": run_id, "case_id": case.case_id, "case_index": index,
                                  "trace_ids": list(case.trace_ids), "sources": list(case.sources),
                                  "status": case_status(case).value}
    if source_uris:
        provenance["source_uris"] = list(source_uris)
    if case.eval_id:
        provenance["matched_eval_id"] = case.eval_id
    metadata: dict[str, Any] = {"provenance": provenance}
    if case.labels:  # the human labels travel with the case: ``run -e`` attaches them to the traces it matches
        metadata["labels"] = label_entries(case.labels)
    return {"eval_id": eval_id, "conversation": turns, "creation_timestamp": created, "metadata": metadata}


def base_id(case: CaseResult) -> str:
    """The eval id a stored case gets by default: its eval id, else ``case_`` and its case id, in ADK's id
    characters (``[A-Za-z0-9_]``)."""
    if case.eval_id:
        base = _ID_CHARS.sub("_", case.eval_id)
    else:
        base = "case_" + _ID_CHARS.sub("_", case.case_id)[:48]
    return base or "case"


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def set_id_for(path: str | Path) -> str:
    """The eval set id a file name gives (``golden.evalset.json`` → ``golden``), in ADK's alphabet."""
    name = Path(path).name
    for suffix in (".evalset.json", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return _ID_CHARS.sub("_", name) or "eval_set"


def _load_run(store: RunStore, ref: str) -> tuple[str, Any, list[Stored], list[str]]:
    run_id = store.resolve(ref)
    record = store.get_run(run_id)
    cases = store.load_cases(run_id)
    uris = [s.uri for s in store.sources(run_id)]
    return run_id, record, cases, uris


def _cases_to_adk(chosen: Sequence[Stored], *, run_id: str, created: float, uris: Sequence[str],
                  taken: set[str], summary: BuildSummary) -> list[dict[str, Any]]:
    out = []
    for idx, case in chosen:
        if not case._transcript:
            summary.no_turns.append(case.case_id)
            continue
        eval_id = _unique(base_id(case), taken)
        out.append(eval_case_from(case, idx, run_id=run_id, eval_id=eval_id, created=created, source_uris=uris))
        summary.written.append(eval_id)
    return out


def build_from_run(store: RunStore, ref: str, *, which: Sequence[str] = ("all",), sample: Optional[int] = None,
                   stratify_by: Optional[str] = None, seed: int = 0, eval_set_id: str = "eval_set",
                   ) -> tuple[dict[str, Any], BuildSummary]:
    """An ADK eval set (a JSON-ready dict) from the stored run ``ref`` (id, prefix or ``latest``).

    Raises ``ConfigError`` when no case is left to write (none chosen, or none with turns)."""
    run_id, record, cases, uris = _load_run(store, ref)
    chosen = select_cases(cases, which)
    summary = BuildSummary(run_id=run_id, selected=len(chosen))
    if not chosen:
        raise ConfigError(f"run {run_id}: no {'/'.join(which)} case to write ({len(cases)} cases in the run)")
    picked, summary.strata = sample_cases(chosen, sample, stratify_by=stratify_by, seed=seed)
    created = run_timestamp(record.started_at)
    eval_cases = _cases_to_adk(picked, run_id=run_id, created=created, uris=uris, taken=set(), summary=summary)
    if not eval_cases:
        raise ConfigError(f"run {run_id}: the chosen cases have no stored turns (recorded by an agentevals "
                          "older than 0.12, or traces without turns): nothing to write")
    what = ", ".join(which) + (f"; a sample of {sample} (seed {seed}"
                               + (f", stratified by {stratify_by}" if stratify_by else "") + ")" if sample else "")
    data = {"eval_set_id": eval_set_id, "name": eval_set_id,
            "description": f"Built from run {run_id} by agentevals evalset from-run ({what}).",
            "eval_cases": eval_cases, "creation_timestamp": created}
    return data, summary


def add_from_run(data: dict[str, Any], store: RunStore, ref: str,
                 case_ids: Sequence[str]) -> tuple[dict[str, Any], BuildSummary, list[str]]:
    """``data`` (an eval set read by ``read_set``) with the run's cases ``case_ids`` appended; a case already
    in the set (same run and case id in its provenance) is not added twice (its eval id is returned)."""
    run_id, record, cases, uris = _load_run(store, ref)
    if not case_ids:
        raise ConfigError("evalset add: name the cases to add (case ids as 'agentevals runs show' prints them, "
                          "or failed, passed, all)")
    chosen = select_cases(cases, case_ids)
    raw_cases = list(data.get("eval_cases") or [])
    present: dict[tuple[Any, Any], str] = {}
    for raw in raw_cases:
        prov = _provenance(raw)
        if prov.get("run_id"):
            present[(prov.get("run_id"), prov.get("case_id"))] = str(raw.get("eval_id"))
    already = [present[(run_id, c.case_id)] for _, c in chosen if (run_id, c.case_id) in present]
    fresh = [(i, c) for i, c in chosen if (run_id, c.case_id) not in present]
    summary = BuildSummary(run_id=run_id, selected=len(chosen))
    taken = {str(raw.get("eval_id")) for raw in raw_cases if isinstance(raw, dict)}
    raw_cases += _cases_to_adk(fresh, run_id=run_id, created=run_timestamp(record.started_at), uris=uris, taken=taken,
                               summary=summary)
    return {**data, "eval_cases": raw_cases}, summary, already


# Labels that travel with a set -------------------------------------------------------------------------
def label_entries(labels: Sequence[HumanLabel]) -> list[dict[str, Any]]:
    """Human labels as an eval case's ``metadata.labels`` (``run -e`` attaches them to the matching case)."""
    keys = ("verdict", "score", "metric", "note", "labeler", "created_at")
    return [{k: v for k, v in label.model_dump(mode="json").items() if k in keys and v not in (None, "")}
            for label in labels]


def _provenance(raw: Any) -> dict[str, Any]:
    """A raw set case's ``metadata.provenance``, ``{}`` when absent or not a mapping at any level (a set file may
    hold ``"metadata": "a note"``: every case of the file is scanned, so that must not crash)::

        _provenance({"metadata": {"provenance": {"run_id": "r1"}}}) == {"run_id": "r1"}
    """
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    prov = meta.get("provenance") if isinstance(meta, dict) else None
    return prov if isinstance(prov, dict) else {}


def set_labels(data: dict[str, Any], run_id: str, case_id: str, labels: Sequence[HumanLabel]) -> list[str]:
    """Put ``labels`` (all of them: they replace the old ones) into the cases of ``data`` whose provenance names
    run ``run_id`` and case ``case_id``; returns the eval ids changed (none: nothing to write)."""
    entries = label_entries(labels)
    changed = []
    for raw in data.get("eval_cases") or []:
        prov = _provenance(raw)
        if prov.get("run_id") != run_id or prov.get("case_id") != case_id:
            continue
        meta = raw.setdefault("metadata", {})
        if (meta.get("labels") or []) != entries:
            if entries:
                meta["labels"] = entries
            else:
                meta.pop("labels", None)
            changed.append(str(raw.get("eval_id")))
    return changed


def put_case(data: dict[str, Any], case: dict[str, Any]) -> Optional[str]:
    """Add ``case`` (``eval_case_from``) to ``data``, replacing the case that came from the same run and case
    (an edit of a case added before); returns the eval id replaced, or None. ``ConfigError`` when another case
    of the set already has its eval id."""
    prov = _provenance(case)
    cases = list(data.get("eval_cases") or [])
    same = next((i for i, raw in enumerate(cases) if _provenance(raw).get("run_id") == prov.get("run_id")
                 and _provenance(raw).get("case_id") == prov.get("case_id")), None)
    for i, raw in enumerate(cases):
        if isinstance(raw, dict) and raw.get("eval_id") == case["eval_id"] and i != same:
            raise ConfigError(f"eval id {case['eval_id']!r} is already in the set (another case): choose another")
    replaced = None
    if same is None:
        cases.append(case)
    else:
        replaced = str(cases[same].get("eval_id"))
        cases[same] = case
    data["eval_cases"] = cases
    return replaced


# Files ------------------------------------------------------------------------------------------------
def read_set(path: str | Path) -> dict[str, Any]:
    """An eval set file as JSON, checked by the reader ``run -e`` uses; ``ConfigError`` (exit 2) when it is not
    one. The legacy ``.test.json`` list is read as a one-case set."""
    from ..traces.readers._json import load_json_file

    try:
        data = load_json_file(Path(path))
        parsed = parse_eval_set(data, str(path))
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    if isinstance(data, list):  # legacy: write it as the set it reads as
        return {"eval_set_id": parsed.eval_set_id, "eval_cases": [_legacy_case(c) for c in parsed.eval_cases]}
    # As ADK writes it: snake_case (a camelCase file, from ADK's web API, reads the same).
    out = {snake_case(str(k)): v for k, v in data.items() if snake_case(str(k)) not in ("eval_cases", "eval_set_id")}
    out["eval_set_id"] = parsed.eval_set_id
    out["eval_cases"] = [case_keys(c) for c in data.get("eval_cases", data.get("evalCases")) or []]
    return out


def _legacy_case(case: Any) -> dict[str, Any]:
    return {"eval_id": _ID_CHARS.sub("_", case.eval_id), "conversation": [
        {"invocation_id": inv.invocation_id, "user_content": _content(inv.user_content, "user"),
         **({"final_response": _content(inv.final_response, "model")} if inv.final_response is not None else {}),
         "intermediate_data": {"tool_uses": [{"name": c.name, "args": c.args}
                                             for c in inv.intermediate_steps.tool_calls]}}
        for inv in case.conversation]}


def write_set(path: str | Path, data: dict[str, Any]) -> None:
    """Write an eval set: secrets redacted, keys sorted, two-space indent, replaced atomically."""
    path = Path(path)
    text = json.dumps(redact_obj(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        with replaced(path) as out:
            out.write(text)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the eval set: {exc.strerror or exc}") from None


# Merge and diff ---------------------------------------------------------------------------------------
def _normal(raw: Any) -> Any:
    """A case as compared: snake_case keys (ADK reads camelCase too), JSON-canonical."""
    return json.loads(json.dumps(case_keys(raw), sort_keys=True))


CONFLICTS = ("error", "keep-a", "keep-b")


def merge_sets(a: dict[str, Any], b: dict[str, Any], *, eval_set_id: str, on_conflict: str = "error",
               names: tuple[str, str] = ("A", "B")) -> tuple[dict[str, Any], list[str]]:
    """A's cases, then B's cases A does not have (by eval id). The same eval id with different content is a
    conflict: an error (``ConfigError`` naming the id), or A's (``keep-a``) or B's (``keep-b``) case wins.
    Returns the merged set and the eval ids that conflicted."""
    if on_conflict not in CONFLICTS:
        raise ConfigError(f"--on-conflict must be one of {', '.join(CONFLICTS)}, got {on_conflict!r}")
    merged: dict[str, Any] = {}
    order: list[str] = []
    for raw in a.get("eval_cases") or []:
        merged[str(raw["eval_id"])] = raw
        order.append(str(raw["eval_id"]))
    conflicts = []
    for raw in b.get("eval_cases") or []:
        key = str(raw["eval_id"])
        if key not in merged:
            merged[key] = raw
            order.append(key)
        elif _normal(merged[key]) != _normal(raw):
            conflicts.append(key)
            if on_conflict == "keep-b":
                merged[key] = raw
    if conflicts and on_conflict == "error":
        more = f" and {len(conflicts) - 1} more" if len(conflicts) > 1 else ""
        raise ConfigError(f"eval case {conflicts[0]!r}{more} differs between {names[0]} and {names[1]}: pass "
                          "--on-conflict keep-a or keep-b (see 'agentevals evalset diff')")
    out = {k: v for k, v in a.items() if k not in ("eval_cases", "eval_set_id")}
    out.update({"eval_set_id": eval_set_id, "eval_cases": [merged[k] for k in order]})
    if "name" in out:
        out["name"] = eval_set_id
    return out, conflicts


@dataclass
class SetDiff:
    """Case by case, what changed from OLD to NEW (by eval id)."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """eval id → the fields that differ, each ``{"field", "old", "new"}`` (None: absent)."""
    unchanged: int = 0

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def as_dict(self) -> dict[str, Any]:
        return {"added": self.added, "removed": self.removed,
                "changed": [{"eval_id": k, "fields": v} for k, v in self.changed.items()], "unchanged": self.unchanged}


def _turn_view(turn: Any) -> dict[str, Any]:
    if not isinstance(turn, dict):
        return {"turn": turn}
    data = turn.get("intermediate_data") or {}
    calls = [{"name": c.get("name"), "args": c.get("args") or {}} for c in data.get("tool_uses") or ()
             if isinstance(c, dict)]
    for event in data.get("invocation_events") or ():
        for part in ((event or {}).get("content") or {}).get("parts") or ():
            if isinstance(part, dict) and isinstance(part.get("function_call"), dict):
                call = part["function_call"]
                calls.append({"name": call.get("name"), "args": call.get("args") or {}})
    view = {"user_content": content_text(turn.get("user_content")),
            "final_response": content_text(turn.get("final_response")), "tool_uses": calls,
            "tool_responses": data.get("tool_responses") or []}
    view.update({k: v for k, v in turn.items() if k not in ("user_content", "final_response", "intermediate_data")})
    return view


def _case_fields(case: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in case.items():
        if key == "conversation" and isinstance(value, list):
            fields["conversation.turns"] = len(value)
            for i, turn in enumerate(value):
                for name, v in _turn_view(turn).items():
                    fields[f"conversation[{i}].{name}"] = v
        elif key != "eval_id":
            fields[key] = value
    return fields


def diff_sets(old: dict[str, Any], new: dict[str, Any]) -> SetDiff:
    """Which cases NEW added, removed and changed (each changed field with both values) against OLD."""
    before = {str(c["eval_id"]): _normal(c) for c in old.get("eval_cases") or []}
    after = {str(c["eval_id"]): _normal(c) for c in new.get("eval_cases") or []}
    diff = SetDiff(added=[k for k in after if k not in before], removed=[k for k in before if k not in after])
    for key, case in after.items():
        if key not in before:
            continue
        a, b = _case_fields(before[key]), _case_fields(case)
        changes = [{"field": f, "old": a.get(f), "new": b.get(f)} for f in dict.fromkeys([*a, *b])
                   if a.get(f) != b.get(f)]
        if changes:
            diff.changed[key] = changes
        else:
            diff.unchanged += 1
    return diff


# Validation -------------------------------------------------------------------------------------------
_INVOCATION_KEYS = {"invocation_id", "user_content", "final_response", "intermediate_data", "creation_timestamp",
                    "duration", "model_duration", "tool_duration", "rubrics", "app_details"}
_INTERMEDIATE_KEYS = {"tool_uses", "tool_responses", "intermediate_responses"}
_CALL_KEYS = {"id", "args", "name", "partial_args", "will_continue"}
_RESPONSE_KEYS = {"will_continue", "scheduling", "parts", "id", "name", "response"}
_CONTENT_KEYS = {"parts", "role"}


def _unknown(obj: dict[str, Any], allowed: set[str]) -> list[str]:
    return [k for k in obj if snake_case(str(k)) not in allowed]


def validate_set(data: Any, source: str) -> tuple[list[str], dict[str, int]]:
    """Check an eval set as ``run -e`` reads it and as ADK's own models would (ADK forbids unknown keys in a
    turn and its content objects; a case needs exactly one of ``conversation`` / ``conversation_scenario``).

    Returns the problems (one line each, naming where) and counts (cases, turns, tool calls)."""
    try:
        parsed = parse_eval_set(data, source)
    except InputFileError as exc:
        return [str(exc)], {}
    counts = {"cases": len(parsed.eval_cases), "turns": sum(len(c.conversation) for c in parsed.eval_cases),
              "tool_calls": sum(len(t.intermediate_steps.tool_calls) for c in parsed.eval_cases for t in c.conversation)}
    if isinstance(data, list):
        return [], counts  # ADK's legacy format: ADK converts it when it loads it
    problems = []
    if not isinstance(data.get("eval_set_id"), str):
        hint = " (ADK reads top-level keys in snake_case only)" if "evalSetId" in data else ""
        problems.append(f"{source}: no 'eval_set_id' string{hint}")
    for i, raw in enumerate(data.get("eval_cases") or []):
        where = f"{source}: eval_cases[{i}] ('{raw.get('eval_id')}')"
        case = {snake_case(str(k)): v for k, v in raw.items()}
        if case.get("conversation") is not None and case.get("conversation_scenario") is not None:
            problems.append(f"{where}: has both 'conversation' and 'conversation_scenario' (ADK takes exactly one)")
        for j, turn in enumerate(case.get("conversation") or []):
            at = f"{where}.conversation[{j}]"
            problems += [f"{at}: unknown key '{k}' (ADK refuses unknown keys in a turn)"
                         for k in _unknown(turn, _INVOCATION_KEYS)]
            for key in ("user_content", "final_response"):
                value = turn.get(key, turn.get(re.sub(r"_(.)", lambda m: m.group(1).upper(), key)))
                if isinstance(value, str):
                    problems.append(f"{at}.{key}: plain text; ADK expects a Content object "
                                    '({"role": …, "parts": [{"text": …}]})')
                elif isinstance(value, dict):
                    problems += [f"{at}.{key}: unknown key '{k}' in a Content object" for k in _unknown(value, _CONTENT_KEYS)]
            inter = turn.get("intermediate_data", turn.get("intermediateData"))
            if isinstance(inter, dict) and "invocation_events" not in {snake_case(str(k)) for k in inter}:
                problems += [f"{at}.intermediate_data: unknown key '{k}'" for k in _unknown(inter, _INTERMEDIATE_KEYS)]
                for n, call in enumerate(inter.get("tool_uses", inter.get("toolUses")) or []):
                    problems += [f"{at}.intermediate_data.tool_uses[{n}]: unknown key '{k}'"
                                 for k in _unknown(call, _CALL_KEYS)]
                for n, resp in enumerate(inter.get("tool_responses", inter.get("toolResponses")) or []):
                    problems += [f"{at}.intermediate_data.tool_responses[{n}]: unknown key '{k}'"
                                 for k in _unknown(resp, _RESPONSE_KEYS)]
                    if resp.get("response") is not None and not isinstance(resp.get("response"), dict):
                        problems.append(f"{at}.intermediate_data.tool_responses[{n}].response: ADK expects an object")
    return problems, counts
