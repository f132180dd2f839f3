"""Golden data from the browser: "Label" and "Add to eval set" on a session page and on a run's case page.

    POST /runs/{run}/cases/{index}/label       a human label of the stored case (``RunStore.add_label``)
    POST /runs/{run}/cases/{index}/evalset     the case, its expected values as edited, into a set of --eval-sets
    POST /sessions/{id}/label                  the same for a live session: its case in serve's live run
    POST /sessions/{id}/evalset

Each answers 303 back to its page (which then shows the labels beside the machine verdicts, or what was saved),
or the page again with a one-line error (HTTP 400) and nothing stored. Sets are written with the builder's code
(``evalsets.builder``: atomic, redacted, provenance in ``metadata.provenance``) into files directly inside
``--eval-sets DIR`` (no ``..``, no path, no symlink), the case's human labels under ``metadata.labels``; a label
given later goes into every set case whose provenance names the labelled case. After a write, serve reloads the
sets: the next live session matches the new case with no restart. The CSRF field and the guard are the server's
(``_csrf``, ``_guard``)::

    add_golden_pages(app, ctx, page)      # from web_ui.add_web_ui; ``page`` renders a template
    values = case_forms(ctx, request, store, values)   # the forms' values on a case page (web_runs)
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from urllib.parse import quote, unquote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..errors import ConfigError, StoreError, first_line
from .web_review import QueueSpec

if TYPE_CHECKING:
    from ..results import CaseResult
    from ..store import RunStore

__all__ = ["add_golden_pages", "case_forms", "parse_trajectory", "set_file"]

log = logging.getLogger(__name__)

Page = Callable[..., HTMLResponse]

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_EVAL_ID = re.compile(r"[A-Za-z0-9_]{1,128}")
"""ADK's eval ids: ``^[a-zA-Z0-9_]+$``."""
_CALL_KEYS = {"name", "args"}
_MAX_TURNS = 200
"""Turns offered for editing (a longer conversation is saved as it was recorded beyond them)."""
_LABELER_COOKIE = "agentevals_labeler"
_WRITING = threading.Lock()
"""One writer of the eval set files at a time (two tabs saving to one set must not lose a case)."""


class Invalid(ValueError):
    """A form field the server refuses: the page again with this one line, HTTP 400."""


@dataclass
class Target:
    """The stored case a form acts on, and the page it sits on."""

    run_id: str
    index: int
    case: CaseResult
    back: str
    """The page's path (under the root path), where a 303 returns."""


def add_golden_pages(app: FastAPI, ctx: Any, page: Page) -> None:
    """Add the four form routes; ``ctx`` is the API's ``ApiContext`` (``runs``, ``live_run``, ``settings``)."""

    async def act(request: Request, what: str, locate: Callable[[RunStore], Target],
                  again: Callable[[dict[str, Any]], Any]) -> Response:
        form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
        store = ctx.runs
        if store is None:
            return page("message.html", request, 400, title="Not saved",
                        message="No run store: this server records no runs (serve --no-store), so there is no case "
                                "to label or add to an eval set.")
        try:
            target = await asyncio.to_thread(locate, store)
            done = await asyncio.to_thread(_label if what == "label" else _add_to_set, ctx, store, target, form)
        except (Invalid, ConfigError) as exc:
            return await again({"error": str(exc), "form": form, "which": what})
        except StoreError as exc:  # an unknown run, case or session
            return page("message.html", request, 404, title="Not saved", message=str(exc))
        except Exception as exc:  # the database itself (locked, gone), a disk error: one line, never a traceback
            cause = first_line(exc)
            log.warning("web UI: %s not saved: %s: %s", what, type(exc).__name__, cause)
            return page("message.html", request, 503, title="Not saved",
                        message=f"Nothing was saved: {type(exc).__name__}: {cause}")
        spec = QueueSpec.parse(form.get("queue", ""))
        if spec is not None:  # the case was opened from the review queue: its page keeps the prev/next bar
            done = {**done, "queue": str(spec)}
        root = str(request.scope.get("root_path", "")).rstrip("/")
        response = RedirectResponse(f"{root}{target.back}?{urlencode(done)}#{what}", status_code=303)
        labeler = form.get("labeler", "").strip()
        if what == "label" and labeler:  # the next label form is prefilled with it (no script to remember it)
            response.set_cookie(_LABELER_COOKIE, quote(labeler[:200], safe=""), httponly=True, samesite="strict",
                                max_age=365 * 86400)
        return response

    async def case_again(request: Request, run: str, index: str, state: dict[str, Any]) -> HTMLResponse:
        from .web_runs import case_values

        spec = QueueSpec.parse(state["form"].get("queue", ""))
        queue = str(spec) if spec is not None else ""
        values = await asyncio.to_thread(
            lambda: case_forms(ctx, request, ctx.runs, case_values(ctx.runs, run, index, queue), state=state))
        return page("run_case.html", request, 400, **values)

    async def session_again(request: Request, session_id: str, state: dict[str, Any]) -> HTMLResponse:
        from .web_ui import session_values

        record = ctx.store.get(session_id)
        if record is None:  # forgotten by the in-memory session store meanwhile
            return page("message.html", request, 400, title="Not saved", message=state["error"])
        values = await asyncio.to_thread(session_values, ctx, record, request, state)
        return page("session.html", request, 400, **values)

    def case_route(what: str) -> Callable[..., Any]:
        async def route(request: Request, run: str, index: str) -> Response:
            return await act(request, what, lambda store: _case_target(store, run, index),
                             lambda state: case_again(request, run, index, state))
        return route

    def session_route(what: str) -> Callable[..., Any]:
        async def route(request: Request, session_id: str) -> Response:
            return await act(request, what, lambda store: _session_target(ctx, store, session_id),
                             lambda state: session_again(request, session_id, state))
        return route

    for what in ("label", "evalset"):
        app.add_api_route(f"/runs/{{run}}/cases/{{index}}/{what}", case_route(what), methods=["POST"],
                          include_in_schema=False)
        app.add_api_route(f"/sessions/{{session_id:path}}/{what}", session_route(what), methods=["POST"],
                          include_in_schema=False)


# Where the case is -----------------------------------------------------------------------------------------
def _case_target(store: RunStore, ref: str, index: str) -> Target:
    from .web_runs import load_case

    run_id, position, case = load_case(store, ref, index)
    return Target(run_id, position, case, f"/runs/{quote(run_id, safe='')}/cases/{position}")


def _session_target(ctx: Any, store: RunStore, session_id: str) -> Target:
    """The session's case in serve's live run (one session is one case, its id the session id)."""
    index = store.case_index(ctx.live_run, session_id) if ctx.live_run else None
    return _session_target_at(ctx, store, session_id, index)


def _session_target_at(ctx: Any, store: RunStore, session_id: str, index: Optional[int]) -> Target:
    """The session's case at ``index`` in the live run (``RunStore.case_index``, looked up by the caller)."""
    run_id = ctx.live_run
    if index is None:
        raise StoreError(f"session {session_id} is not in the run store yet (evaluated sessions are; reload the "
                         "page once it is evaluated)")
    (position, case), = store.load_cases(run_id, index=index)
    return Target(run_id, position, case, f"/sessions/{quote(session_id, safe='/')}")


# Label -------------------------------------------------------------------------------------------------------
def _label(ctx: Any, store: RunStore, target: Target, form: dict[str, str]) -> dict[str, str]:
    metric = form.get("metric", "").strip() or None
    store.add_label(target.run_id, target.index, verdict=form.get("verdict"), score=form.get("score"),
                    metric=metric, note=form.get("note"), labeler=form.get("labeler"))  # ConfigError: one line
    note = ""
    directory = _sets_dir(ctx)
    if directory is not None:  # the labels travel with every set case made from this one
        labels = store.load_cases(target.run_id, index=target.index)[0][1].labels
        with _WRITING:
            touched = _sync_labels(directory, target.run_id, target.case.case_id, labels)
            if touched:
                note = _reload(ctx)
    return {"labelled": "1", **({"problem": note} if note else {})}


def _sync_labels(directory: Path, run_id: str, case_id: str, labels: Sequence[Any]) -> list[str]:
    from ..evalsets.builder import read_set, set_labels, write_set

    touched = []
    for name in set_files(directory):
        path = directory / name
        try:
            data = read_set(path)
        except ConfigError:
            continue  # not a set this server can read: left alone
        if set_labels(data, run_id, case_id, labels):
            write_set(path, data)
            touched.append(name)
    return touched


# Add to eval set ---------------------------------------------------------------------------------------------
def _add_to_set(ctx: Any, store: RunStore, target: Target, form: dict[str, str]) -> dict[str, str]:
    from ..evalsets.builder import (
        eval_case_from,
        put_case,
        read_set,
        run_timestamp,
        set_id_for,
        write_set,
    )

    directory = _sets_dir(ctx)
    if directory is None:
        raise Invalid("no eval sets directory: start serve with --eval-sets DIR to save eval sets")
    path = set_file(directory, form.get("set", ""), form.get("new_set", ""))
    eval_id = form.get("eval_id", "").strip()
    if not _EVAL_ID.fullmatch(eval_id):
        raise Invalid(f"eval id {eval_id!r}: use letters, digits and '_' only (ADK's eval ids)")
    case = target.case
    if not case._transcript:
        raise Invalid(f"case {case.case_id} has no stored turns (nothing to expect)")
    edits = [(form.get(f"response_{i}", ""), parse_trajectory(form.get(f"trajectory_{i}", ""), i + 1))
             for i in range(min(len(case._transcript), _MAX_TURNS))]
    record = store.get_run(target.run_id)
    new = eval_case_from(case, target.index, run_id=target.run_id, eval_id=eval_id,
                         created=run_timestamp(record.started_at), source_uris=[s.uri for s in store.sources(target.run_id)])
    for turn, (response, calls) in zip(new["conversation"], edits, strict=False):  # turns beyond _MAX_TURNS: as recorded
        if response.strip():
            turn["final_response"] = {"parts": [{"text": response.replace("\r\n", "\n")}], "role": "model"}
        else:  # cleared: no final response expected of this turn
            turn.pop("final_response", None)
        _expect_calls(turn.setdefault("intermediate_data", {}), calls)
    with _WRITING:
        if path.exists():
            data = read_set(path)
        else:
            set_id = set_id_for(path)
            data = {"eval_set_id": set_id, "name": set_id, "eval_cases": [],
                    "description": "Golden cases saved from the agentevals web UI."}
        clash = next((name for name in set_files(directory) if name != path.name
                      and _set_id(directory / name) == data["eval_set_id"]), None)
        if clash:  # serve could not load the directory again (two sets, one id)
            raise Invalid(f"eval set id {data['eval_set_id']!r} of {path.name} is already the id of {clash}: "
                          "name the new set differently")
        put_case(data, new)
        write_set(path, data)
        problem = _reload(ctx)
    return {"saved": f"{path.name}:{eval_id}", **({"problem": problem} if problem else {})}


def set_file(directory: Path, chosen: str, new_name: str) -> Path:
    """The set file a form names: one of ``set_files(directory)``, or a new safe file name directly inside
    ``directory`` (``.evalset.json`` added unless it ends in ``.json``); ``Invalid`` otherwise::

        set_file(Path("sets"), "", "golden")   # sets/golden.evalset.json
    """
    new_name, chosen = new_name.strip(), chosen.strip()
    if new_name:
        if not _SAFE_NAME.fullmatch(new_name) or ".." in new_name:
            raise Invalid(f"new eval set name {new_name[:80]!r}: use letters, digits, '_', '-' and '.' only "
                          "(a file name inside --eval-sets: no path, no '..')")
        name = new_name if new_name.endswith(".json") else f"{new_name}.evalset.json"
    elif chosen:
        if chosen not in set_files(directory):
            raise Invalid(f"eval set {chosen[:80]!r} is not a set file of --eval-sets (reload the page)")
        name = chosen
    else:
        raise Invalid("choose an eval set or name a new one")
    path = directory / name
    if path.is_symlink() or (path.exists() and not path.is_file()) or path.resolve().parent != directory.resolve():
        raise Invalid(f"eval set {name!r} is a link or not a plain file inside --eval-sets: refused")
    return path


def _set_id(path: Path) -> Optional[str]:
    from ..evalsets.builder import read_set

    try:
        return str(read_set(path)["eval_set_id"])
    except ConfigError:
        return None


def set_files(directory: Path) -> list[str]:
    """The ``*.json`` files directly inside ``directory`` that a form may write (plain files, no links)."""
    return sorted(p.name for p in directory.glob("*.json") if p.is_file() and not p.is_symlink())


def _expect_calls(data: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    """A turn's ``intermediate_data`` with the edited calls: the recorded tool responses stay for the tools
    still called (they are what those tools returned in the run the case was made from)."""
    if calls != data.get("tool_uses"):
        names = {call["name"] for call in calls}
        kept = [r for r in data.get("tool_responses") or () if r.get("name") in names]
        if kept:
            data["tool_responses"] = kept
        else:
            data.pop("tool_responses", None)
    data["tool_uses"] = calls


def parse_trajectory(text: str, turn: int) -> list[dict[str, Any]]:
    """A turn's expected tool calls, one JSON object per line ``{"name": …, "args": {…}}`` (blank lines are
    skipped); ``Invalid`` names the turn and line::

        parse_trajectory('{"name": "get_weather", "args": {"city": "Paris"}}', 1)
    """
    calls = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"turn {turn}, trajectory line {n}"
        try:
            call = json.loads(line)
        except json.JSONDecodeError as exc:
            raise Invalid(f"{where}: not JSON ({exc.msg} at column {exc.colno}): {line.strip()[:80]}") from None
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"].strip():
            raise Invalid(f'{where}: expected {{"name": "tool", "args": {{…}}}}, got {line.strip()[:80]}')
        extra = sorted(set(call) - _CALL_KEYS)
        if extra:
            raise Invalid(f"{where}: unknown key {extra[0]!r} (a call has name and args)")
        args = call.get("args", {})
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise Invalid(f"{where}: args must be an object, got {json.dumps(args)[:60]}")
        calls.append({"name": call["name"].strip(), "args": args})
    return calls


def _saved(value: str) -> dict[str, str]:
    """``?saved=FILE:EVAL_ID`` (the 303 after a save) → what the page says was saved."""
    file, _, eval_id = value.rpartition(":")
    return {"file": file, "eval_id": eval_id} if file and eval_id else {}


def _sets_dir(ctx: Any) -> Optional[Path]:
    directory = getattr(ctx.settings, "eval_sets_dir", None) if ctx.settings is not None else None
    return Path(directory) if directory else None


def _reload(ctx: Any) -> str:
    """Reload serve's eval sets; a problem (another file of the directory is bad) as one line, else ''."""
    try:
        ctx.settings.reload()
    except ConfigError as exc:
        return f"saved, but the eval sets were not reloaded: {exc}"
    return ""


# The forms' values -------------------------------------------------------------------------------------------
def case_forms(ctx: Any, request: Request, store: RunStore, values: dict[str, Any], *,
               state: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """``values`` of a case page (``web_runs.case_values``) with ``golden``: what the forms show."""
    target = Target(values["run_id"], values["index"], values["case"],
                    f"/runs/{quote(values['run_id'], safe='')}/cases/{values['index']}")
    golden = _forms(ctx, request, target, state)
    if values.get("queue_nav"):  # opened from the review queue: the forms carry it back (a hidden field)
        golden["queue"] = values["queue_nav"]["queue"]
    return {**values, "golden": golden}


def session_forms(ctx: Any, request: Request, record: Any, state: Optional[dict[str, Any]] = None, *,
                  index: Optional[int], problem: str = "") -> dict[str, Any]:
    """What the forms on a session page show (their reason when there are none). ``index`` and ``problem`` are
    the page's one lookup of the session's case in the live run (``web_ui._live_index``)::

        golden = session_forms(ctx, request, record, index=3)   # or problem="The run store could not be read: …"
    """
    store = ctx.runs
    if store is None:
        return {"why": "Labels and eval sets need the run store: this server keeps none (serve --no-store)."}
    if record is None or record.status != "evaluated":
        return {"why": "Label or add to an eval set once the session is evaluated."}
    if problem:
        return {"why": problem}
    try:
        target = _session_target_at(ctx, store, record.session_id, index)
    except StoreError as exc:
        return {"why": str(exc)}
    except Exception as exc:  # the database itself (locked, gone): the page renders, saying so in one line
        log.warning("web UI: run store: %s: %s", type(exc).__name__, first_line(exc))
        return {"why": f"The run store could not be read: {type(exc).__name__}: {first_line(exc)}"}
    return _forms(ctx, request, target, state)


def _forms(ctx: Any, request: Request, target: Target, state: Optional[dict[str, Any]]) -> dict[str, Any]:
    from ..evalsets.builder import base_id
    from ..results.labels import human_text, label_disagrees

    state = state or {}
    form = state.get("form") or {}
    case = target.case
    directory = _sets_dir(ctx)
    turns = []
    for i, turn in enumerate(case._transcript[:_MAX_TURNS]):
        calls = "\n".join(json.dumps({"name": c["name"], "args": c.get("args") or {}}, ensure_ascii=False)
                          for c in turn.get("tool_calls") or ())
        turns.append({"user": turn.get("user_full", turn.get("user")) or "",
                      "response": form.get(f"response_{i}", turn.get("response_full", turn.get("response")) or ""),
                      "trajectory": form.get(f"trajectory_{i}", calls)})
    query = request.query_params
    return {
        "why": "",
        "action": f"{str(request.scope.get('root_path', '')).rstrip('/')}{target.back}",
        "labels": [{"metric": lb.metric or "whole case", "verdict": lb.verdict or "",
                    "text": human_text(lb).removeprefix(lb.verdict or "").lstrip(),  # the verdict is the badge
                    "disagrees": label_disagrees(lb, case) is not None} for lb in case.labels],
        "metrics": list(dict.fromkeys(m.name for m in case.metrics)),
        "sets_dir": directory is not None,
        "sets": set_files(directory) if directory is not None and directory.is_dir() else [],
        "eval_id": form.get("eval_id", base_id(case)),
        "turns": turns,
        "form": form,
        "labeler": form.get("labeler", unquote(request.cookies.get(_LABELER_COOKIE, ""))[:200]),
        "error": state.get("error", ""),
        "which": state.get("which", ""),
        "saved": _saved(query.get("saved", "")),
        "labelled": bool(query.get("labelled")),
        "problem": query.get("problem", ""),
    }
