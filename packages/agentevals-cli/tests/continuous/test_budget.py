"""Judge budgets: token usage read from a real (loopback) OpenAI-compatible server, priced from the table or
``judge_prices``, and ``max_calls_per_hour`` / ``budget_usd_per_day`` sampling evaluations down.

The judge is ``support/openai_server.py``'s ``ChatServer``: real HTTP on 127.0.0.1 through the real ``openai``
client, answering chat completions (API as of openai 1.x, ``usage.prompt_tokens`` / ``completion_tokens``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from agentevals.api import prepare_run
from agentevals.engine.admission import skip_kind
from agentevals.engine.budget import DAY, HOUR, JudgeLedger
from agentevals.engine.run import run_evaluation
from agentevals.errors import ConfigError
from agentevals.evaluators.pricing import Prices
from agentevals.results import Status

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # → `support` is importable

from support.openai_server import ChatServer, Reply, chat_completion  # noqa: E402

pytest.importorskip("openai", reason="the openai extra is not installed")

TRACES = sorted(p for p in (TESTS / "data" / "traces" / "genai").glob("*.otlp.json") if "v2_legacy" not in p.name)
"""Shipped traces with one agent turn each (evaluated one case per trace: ``group_by="trace"``)."""


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch):
    """A loopback chat server whose every reply is a passing freeform verdict using 1000 in / 100 out tokens."""
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-test-judge-key")
    with ChatServer() as server:
        server.chat = verdict(prompt_tokens=1000, completion_tokens=100)
        yield server


def verdict(*, prompt_tokens: int, completion_tokens: int):
    def answer(body: dict[str, Any]) -> Reply:
        reply = chat_completion(json.dumps({"score": 0.9, "hits": ["ok"], "misses": [], "reasoning": "Fine."}),
                                model=body["model"])
        reply["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}
        return Reply(json=reply)
    return answer


def write_config(tmp_path: Path, server: ChatServer, *, model: str = "judge-model", prices: Any = None,
                 **budget: Any) -> Path:
    entry = {"name": "quality", "type": "llm_judge", "model": model, "base_url": server.base_url,
             "api_key_env": "TEST_JUDGE_KEY", **budget}
    config: dict[str, Any] = {"evaluators": [entry]}
    if prices is not None:
        config["judge_prices"] = prices
    path = tmp_path / "eval_config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run(config: Path, traces: list[Path], *, concurrency: int = 4, ledger: JudgeLedger | None = None):
    evaluators, options, _ = prepare_run(config=config, group_by="trace")
    options.concurrency = concurrency
    options.judge_ledger = ledger
    return asyncio.run(run_evaluation([str(p) for p in traces], evaluators, options=options))


def rows(result) -> list:
    return [m for case in result.cases for m in case.metrics]


# --- pricing -------------------------------------------------------------------------------------------------


def test_price_table_lookup_snapshots_prefixes_and_overrides():
    prices = Prices()
    assert prices.cost("gpt-4o-mini", 1_000_000, 0) == pytest.approx(0.15)
    assert prices.find("gpt-4o-mini-2024-07-18") == prices.find("gpt-4o-mini")  # a dated snapshot: its family
    assert prices.find("openai/gpt-4o") == prices.find("gpt-4o")  # a provider prefix is dropped
    assert prices.find("gpt-4o") != prices.find("gpt-4o-mini")  # the longest family wins
    assert prices.cost("my-local-judge", 10, 10) is None
    custom = Prices({"gpt-4o-mini": {"input": 1, "output": 2}, "My-Local-Judge": {"input": 0, "output": 0}})
    assert custom.cost("gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert custom.cost("my-local-judge", 10, 10) == 0.0


@pytest.mark.parametrize("entry", [{"input": 1}, {"input": 1, "output": -2}, {"input": "x", "output": 1},
                                   {"input": 1, "output": 1, "cached": 0.5}])
def test_a_bad_price_entry_is_one_config_error_line(tmp_path, entry):
    path = tmp_path / "eval_config.yaml"
    path.write_text(yaml.safe_dump({"judge_prices": {"gpt-4o": entry},
                                    "evaluators": [{"name": "tool_trajectory_avg_score", "type": "builtin"}]}))
    with pytest.raises(ConfigError) as caught:
        prepare_run(config=path)
    message = str(caught.value)
    assert "judge_prices" in message and "gpt-4o" in message and "\n" not in message


# --- usage ---------------------------------------------------------------------------------------------------


def test_each_evaluation_records_its_judge_usage_priced_by_judge_prices(tmp_path, judge):
    config = write_config(tmp_path, judge, prices={"judge-model": {"input": 1000, "output": 10000}})
    result = run(config, TRACES[:3])
    found = rows(result)
    assert [m.status for m in found] == [Status.PASSED] * 3
    assert all(m.details["judge_usage"] == {
        "calls": 1, "input_tokens": 1000, "output_tokens": 100, "cost_usd": 2.0,
        "models": {"judge-model": {"calls": 1, "input_tokens": 1000, "output_tokens": 100, "cost_usd": 2.0}}}
        for m in found)
    assert len(judge.requests_to("POST", "/chat/completions")) == 3


def test_the_built_in_table_prices_a_known_model_and_the_override_replaces_it(tmp_path, judge):
    table = rows(run(write_config(tmp_path, judge, model="gpt-4o-mini"), TRACES[:1]))[0].details["judge_usage"]
    assert table["cost_usd"] == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6)
    config = write_config(tmp_path, judge, model="gpt-4o-mini", prices={"gpt-4o-mini": {"input": 1, "output": 2}})
    override = rows(run(config, TRACES[:1]))[0].details["judge_usage"]
    assert override["cost_usd"] == pytest.approx((1000 * 1 + 100 * 2) / 1e6)


def test_an_unpriced_model_is_counted_and_named(tmp_path, judge):
    usage = rows(run(write_config(tmp_path, judge, model="my-local-judge"), TRACES[:1]))[0].details["judge_usage"]
    assert (usage["calls"], usage["cost_usd"], usage["unpriced"]) == (1, 0.0, ["my-local-judge"])
    assert usage["models"]["my-local-judge"]["cost_usd"] is None


# --- budgets -------------------------------------------------------------------------------------------------


def test_max_calls_per_hour_stops_calls_after_n(tmp_path, judge):
    config = write_config(tmp_path, judge, max_calls_per_hour=2)
    found = rows(run(config, TRACES[:6], concurrency=4))
    assert len(found) == 6
    assert len(judge.requests_to("POST", "/chat/completions")) == 2
    assert sorted(m.status.value for m in found) == ["NOT_EVALUATED"] * 4 + ["PASSED"] * 2
    skipped = [m for m in found if skip_kind(m)]
    assert {skip_kind(m) for m in skipped} == {"over_budget"}
    assert all("max_calls_per_hour: 2" in m.reason for m in skipped)


def test_budget_usd_per_day_samples_down_instead_of_overspending(tmp_path, judge):
    # $2 a call: the first runs at an unknown cost, the second is committed at $2 + $2 = $4 <= $5, a third
    # would make $6: it is skipped, and the spend stays under the budget.
    config = write_config(tmp_path, judge, prices={"judge-model": {"input": 1000, "output": 10000}},
                          budget_usd_per_day=5.0)
    found = rows(run(config, TRACES[:5], concurrency=1))
    spent = sum(m.details["judge_usage"]["cost_usd"] for m in found if m.details.get("judge_usage"))
    assert len(judge.requests_to("POST", "/chat/completions")) == 2
    assert spent == pytest.approx(4.0) and spent <= 5.0
    assert [skip_kind(m) for m in found].count("over_budget") == 3
    assert all("budget_usd_per_day" in m.reason for m in found if skip_kind(m))


def test_a_shared_ledger_carries_the_budget_across_runs(tmp_path, judge):
    """What serve does: one ledger for every batch."""
    ledger = JudgeLedger()
    config = write_config(tmp_path, judge, max_calls_per_hour=3)
    first = rows(run(config, TRACES[:2], ledger=ledger))
    second = rows(run(config, TRACES[2:4], ledger=ledger))
    assert [m.status for m in first] == [Status.PASSED] * 2
    assert sorted(m.status.value for m in second) == ["NOT_EVALUATED", "PASSED"]
    book = ledger.book("quality")
    assert (book.evaluations, book.calls, book.input_tokens, book.over_budget) == (3, 3, 3000, 1)
    assert book.as_json()["calls_last_hour"] == 3 and book.max_calls_per_hour == 3


def test_skipped_rows_are_not_cached_and_run_once_the_budget_allows(tmp_path, judge):
    """An over-budget row is this run's choice: the next run with room evaluates it."""
    config = write_config(tmp_path, judge, max_calls_per_hour=1)
    first = rows(run(config, TRACES[:2], concurrency=1))
    assert [skip_kind(m) for m in first].count("over_budget") == 1
    again = rows(run(config, TRACES[:2], concurrency=1))  # a fresh ledger: a new budget
    assert [skip_kind(m) for m in again].count("over_budget") == 1
    assert len(judge.requests_to("POST", "/chat/completions")) == 2


def test_ledger_windows_roll():
    now = [0.0]
    ledger = JudgeLedger(clock=lambda: now[0])
    assert ledger.over("q", 2, None, reserve="a") is None
    assert ledger.over("q", 2, None, reserve="b") is None
    assert "max_calls_per_hour: 2" in (ledger.over("q", 2, None, reserve="c") or "")
    now[0] = HOUR + 1
    assert ledger.over("q", 2, None, reserve="c") is None  # the first two left the hour
    ledger.end("q", "c", {"calls": 1, "input_tokens": 10, "output_tokens": 1, "cost_usd": 3.0})
    assert "budget_usd_per_day" in (ledger.over("q", None, 3.0) or "")
    now[0] = HOUR + DAY + 2
    assert ledger.over("q", None, 3.0, reserve="d") is None  # yesterday's spend has rolled out
    assert ledger.book("q").over_budget == 2


def test_ledger_admits_exactly_the_limit_from_many_threads():
    ledger = JudgeLedger()
    admitted: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(16)

    def worker(n: int) -> None:
        start.wait()
        for i in range(50):
            if ledger.over("q", 100, None, reserve=f"{n}-{i}") is None:
                with lock:
                    admitted.append(f"{n}-{i}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(admitted) == 100
    assert ledger.book("q").over_budget == 16 * 50 - 100


def test_a_running_evaluation_is_counted_at_the_mean_cost():
    ledger = JudgeLedger(clock=time.time)
    assert ledger.over("q", None, 5.0, reserve="a") is None
    ledger.end("q", "a", {"calls": 1, "cost_usd": 2.0})
    assert ledger.over("q", None, 5.0, reserve="b") is None  # 2 spent + 2 for b = 4 <= 5
    assert ledger.over("q", None, 5.0, reserve="c") is not None  # 2 spent + 2 running + 2 = 6 > 5
    ledger.end("q", "b", {"calls": 1, "cost_usd": 1.0})
    assert ledger.over("q", None, 5.0, reserve="c") is None  # 3 spent + 1.5 (mean) = 4.5 <= 5


def test_the_run_notes_its_judge_usage(tmp_path, judge):
    config = write_config(tmp_path, judge, prices={"judge-model": {"input": 1000, "output": 10000}})
    result = run(config, TRACES[:2])
    assert "judge usage: quality 2 calls, 2,000 in / 200 out tokens, $4.0000" in result.notes
    unpriced = run(write_config(tmp_path, judge, model="my-local-judge"), TRACES[:1])
    assert ("judge usage: quality 1 call, 1,000 in / 100 out tokens, $0.0000 (no price for my-local-judge: add it "
            "to judge_prices)") in unpriced.notes


def test_the_budget_admission_travels_to_other_processes(tmp_path, judge):
    """``--executor ray`` pickles the run's options (admissions included): each copy starts an empty ledger."""
    import pickle
    from dataclasses import replace

    from agentevals.engine.admission import admissions_for
    from agentevals.engine.budget import BudgetAdmission

    evaluators, options, _ = prepare_run(config=write_config(tmp_path, judge, max_calls_per_hour=1))
    evs = [e.evaluator for e in evaluators]
    [admission] = admissions_for(evs, options)
    assert isinstance(admission, BudgetAdmission) and admission.begin("c1", evs[0]) is None
    copy = pickle.loads(pickle.dumps(replace(options, admissions=[admission])))
    assert copy.admissions[0].begin("c2", evs[0]) is None  # its own ledger, the same limits
    assert copy.admissions[0].begin("c3", evs[0]) is not None
