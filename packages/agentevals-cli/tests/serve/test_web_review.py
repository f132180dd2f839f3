"""The review queue (``/review``, ``serve/web_review``) and its previous/next bar on the case page: against a real
``agentevals serve`` over a run store filled by a real ``agentevals run`` of the shipped samples (one failure,
one score near its threshold, one case with no eval case) and labels stored through the run store's own API;
the ordering rules on a store holding many cases, through the same app over real HTTP."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import requests
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.serve.web_review import NEAR_BAND, QueueSpec
from agentevals.store import RunStore, new_run_id
from support.asgi import serving_store
from support.live_server import EXAMPLES, Server, agentevals, listed_runs, start_server, stop_server
from support.serve_guard import root
from support.stored_runs import HELM_3_ID, HELM_ID, K8S_ID

SAMPLES = [str(EXAMPLES / "traces" / n) for n in ("helm.json", "k8s.json", "helm_3.json")]
GOOD, BAD, UNMATCHED = HELM_ID, K8S_ID, HELM_3_ID
"""helm.json passes (response_match_score 0.812: near a 0.75 threshold), k8s.json fails, helm_3.json matches no
eval case (NOT_EVALUATED)."""


def _sample_run(folder: Path) -> tuple[str, str]:
    """A store with one real run of the three samples at threshold 0.75: (store, run id)."""
    store = str(folder / "runs.sqlite")
    result = agentevals("run", *SAMPLES, "-e", str(EXAMPLES / "evalsets/eval_set_helm.json"), "-m",
                        "tool_trajectory_avg_score", "-m", "response_match_score", "-t", "0.75", "--store", store)
    assert result.returncode == 1, result.stdout + result.stderr  # k8s.json fails on purpose
    return store, listed_runs(store)[0]["run_id"]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> tuple[str, str]:
    """The samples' run, never labelled."""
    return _sample_run(tmp_path_factory.mktemp("review"))


def queue_rows(page: str) -> list[tuple[str, str, str, bool]]:
    """(case id, kind, reason, labelled) of each row of the queue table."""
    out = []
    for row in re.findall(r'<tr class="queue-(\w+)( labelled)?">(.*?)</tr>', page, re.S):
        kind, labelled, cells = row
        case_id = re.search(r"<code>([^<]+)</code>", cells).group(1)
        reason = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.findall(
            r'<td class="why">(.*?)</td>', cells, re.S)[0]))).strip()
        out.append((case_id, kind, reason, bool(labelled)))
    return out


def index_of(store: str, run_id: str, case_id: str) -> int:
    db = RunStore.open(store)
    try:
        index = db.case_index(run_id, case_id)
        assert index is not None
        return index
    finally:
        db.close()


def label(store: str, run_id: str, case_id: str, **fields: str) -> None:
    db = RunStore.open(store)
    try:
        db.add_label(run_id, case_id, labeler="ana", **fields)
    finally:
        db.close()


@pytest.fixture
def server(sample_run) -> Server:
    server = start_server("--store", sample_run[0])
    yield server
    stop_server(server.process)


def test_the_queue_lists_failures_then_near_threshold_then_a_sample_with_their_reasons(server, sample_run):
    store, run_id = sample_run
    page = requests.get(f"{root(server)}/review", timeout=30)  # no run named: the newest (serve's live run is empty)
    assert page.status_code == 200
    live = re.search(r"<h1>Review queue <span class=\"muted\">run <a[^>]*><code>([^<]+)</code>", page.text).group(1)
    assert live != run_id and "This run has no case yet." in page.text
    page = requests.get(f"{root(server)}/review", params={"run": run_id}, timeout=30)
    assert page.status_code == 200, page.text
    rows = queue_rows(page.text)
    assert [(c, k) for c, k, _, _ in rows] == [(BAD, "failure"), (GOOD, "near"), (UNMATCHED, "sample")]
    assert rows[0][2] == "failure FAILED: tool_trajectory_avg_score 0 < threshold 0.75"
    assert rows[1][2] == f"near threshold response_match_score 0.812, threshold 0.75 (within {NEAR_BAND:g})"
    assert rows[2][2] == "sample random sample (seed 0)"
    # Each row opens its case page with the queue, so the case page can step through it.
    assert f'href="/runs/{run_id}/cases/{index_of(store, run_id, BAD)}?queue=0-20-u"' in page.text
    assert 'accesskey="n" rel="next"' in page.text  # "start with the first case"


def test_labelled_cases_leave_the_queue_unless_their_label_disagrees(serve, tmp_path):
    store, run_id = _sample_run(tmp_path)  # a run of its own: the labels below stay out of the other tests
    server = serve("--store", store)
    label(store, run_id, UNMATCHED, verdict="pass", note="fine")  # labelled: hidden by default
    label(store, run_id, BAD, verdict="pass", note="k8s answer is right")  # disagrees with FAILED: stays
    label(store, run_id, GOOD, verdict="fail", metric="response_match_score")  # disagrees: no longer "near"
    page = requests.get(f"{root(server)}/review", params={"run": run_id[:-2]}, timeout=30)
    rows = queue_rows(page.text)
    assert [(c, k, lab) for c, k, _, lab in rows] == [(BAD, "failure", True), (GOOD, "disagreement", True)]
    assert rows[0][2].endswith("; disagrees: whole case: evaluator FAILED · human pass (ana): k8s answer is right")
    assert rows[1][2] == "disagreement response_match_score: evaluator PASSED · human fail (ana)"
    assert "1 labelled case(s) hidden" in page.text
    everything = queue_rows(requests.get(f"{root(server)}/review", params={"run": run_id, "show": "all"},
                                         timeout=30).text)
    assert [(c, lab) for c, _, _, lab in everything] == [(BAD, True), (GOOD, True), (UNMATCHED, True)]


def test_the_case_page_steps_through_the_queue_with_access_keys(server, sample_run):
    store, run_id = sample_run
    bad, good, unmatched = (index_of(store, run_id, c) for c in (BAD, GOOD, UNMATCHED))
    case = f"{root(server)}/runs/{run_id}/cases"
    first = requests.get(f"{case}/{bad}", params={"queue": "0-20-a"}, timeout=30).text
    nav = re.search(r'<nav class="queue-nav".*?</nav>', first, re.S).group(0)
    assert "review queue: 1 of 3" in nav and 'rel="prev"' not in nav
    assert f'href="/runs/{run_id}/cases/{good}?queue=0-20-a" rel="next" accesskey="n"' in nav
    last = re.search(r'<nav class="queue-nav".*?</nav>', requests.get(
        f"{case}/{unmatched}", params={"queue": "0-20-a"}, timeout=30).text, re.S).group(0)
    assert "review queue: 3 of 3" in last and 'rel="next"' not in last
    assert f'href="/runs/{run_id}/cases/{good}?queue=0-20-a" rel="prev" accesskey="p"' in last
    assert "show=all" in last  # back to the same queue
    # Without ?queue= (or with a value that is no queue) the case page is as before: no bar.
    for params in ({}, {"queue": "<script>"}):
        plain = requests.get(f"{case}/{bad}", params=params, timeout=30)
        assert plain.status_code == 200 and "queue-nav" not in plain.text


def test_review_of_an_unknown_run_is_a_404_page_and_no_store_says_so(server, serve):
    missing = requests.get(f"{root(server)}/review", params={"run": "no-such-run"}, timeout=30)
    assert missing.status_code == 404 and "no run 'no-such-run'" in html.unescape(missing.text)
    bare = serve("--no-store")
    page = requests.get(f"{root(bare)}/review", timeout=30)
    assert page.status_code == 200 and "No run store" in page.text


def _case(n: int, status: Status, score: float | None, threshold: float = 0.5) -> CaseResult:
    metric = MetricResult(name="m", type="builtin", status=status, score=score, threshold=threshold)
    return CaseResult(case_id=f"case-{n:03d}", trace_ids=[f"t{n}"], sources=["f.json"], metrics=[metric])


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> tuple[str, str]:
    """A stored run of 120 cases: an ERROR, two FAILED, passes at 0.55 and 0.58 (near a 0.5 threshold), the
    rest passing at 0.9 (far from it)."""
    store = str(tmp_path_factory.mktemp("many") / "runs.sqlite")
    cases = [_case(n, Status.PASSED, 0.9) for n in range(120)]
    cases[7] = _case(7, Status.FAILED, 0.2)
    cases[90] = _case(90, Status.ERROR, None)
    cases[30] = _case(30, Status.FAILED, 0.45)
    cases[40], cases[12] = _case(40, Status.PASSED, 0.55), _case(12, Status.PASSED, 0.58)
    db = RunStore.open(store)
    run_id = new_run_id()
    db.begin_run(run_id, command="agentevals run many", cwd=None, config_digest=None, eval_set_digest=None,
                 versions={}, options={}, started_at="2026-01-01T00:00:00Z")
    for index, case in enumerate(cases):
        db.record_case(run_id, index, case, {})
    db.finish_run(RunResult(run_id=run_id, cases=cases), status="completed", exit_code=1, totals={})
    db.close()
    return store, run_id


def test_the_order_on_a_larger_run_and_a_seeded_sample(many):
    store, run_id = many
    with serving_store(store) as url:
        def ids(**params: str) -> list[str]:
            page = requests.get(f"{url}/review", params={"run": run_id, **params}, timeout=30)
            assert page.status_code == 200, page.text
            return [c for c, _, _, _ in queue_rows(page.text)]

        first = ids(seed="7", sample="5")
        # Failures in run order (FAILED and ERROR alike), then nearest to the threshold first, then 5 drawn.
        assert first[:5] == ["case-007", "case-030", "case-090", "case-040", "case-012"]
        assert len(first) == 10 and len(set(first)) == 10
        assert ids(seed="7", sample="5") == first  # the same seed, the same sample
        other = ids(seed="8", sample="5")
        assert other[:5] == first[:5] and other[5:] != first[5:]
        assert len(ids(seed="7", sample="500")) == 120  # every case, each once
        assert ids(seed="x", sample="y") == ids(seed="0", sample="20")  # bad numbers: the defaults


def test_queue_spec_round_trips_and_refuses_what_is_not_one():
    spec = QueueSpec(seed=42, sample=7, unlabelled=False)
    assert str(spec) == "42-7-a" and QueueSpec.parse(str(spec)) == spec
    assert QueueSpec.parse("1-99999-u") is None and QueueSpec.parse("") is None and QueueSpec.parse("1-2-x") is None


def test_labelling_a_case_opened_from_the_queue_keeps_the_queue(serve, tmp_path):
    """The label form of a case page opened with ``?queue=`` carries the queue; after saving, the 303 returns to
    the case with ``queue=`` and the page still shows its prev/next bar. A bad form (score out of range) shows
    the page again with the bar too; a forged ``queue`` value is dropped."""
    store, run_id = _sample_run(tmp_path)  # a run of its own: the label below stays out of the other tests
    (tmp_path / "sets").mkdir()
    server = serve("--store", store, "--eval-sets", str(tmp_path / "sets"))
    good = index_of(store, run_id, GOOD)
    browser = requests.Session()
    page = browser.get(f"{root(server)}/runs/{run_id}/cases/{good}", params={"queue": "0-20-a"}, timeout=30)
    assert page.status_code == 200 and "queue-nav" in page.text
    assert page.text.count('<input type="hidden" name="queue" value="0-20-a">') == 2  # label and eval-set forms
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text).group(1)
    action = f"{root(server)}/runs/{run_id}/cases/{good}/label"
    saved = browser.post(action, data={"csrf_token": token, "verdict": "pass", "labeler": "ana", "queue": "0-20-a"},
                         allow_redirects=False, timeout=30)
    assert saved.status_code == 303, saved.text[:500]
    assert saved.headers["location"] == f"/runs/{run_id}/cases/{good}?labelled=1&queue=0-20-a#label"
    landed = browser.get(f"{root(server)}{saved.headers['location']}", timeout=30)
    nav = re.search(r'<nav class="queue-nav".*?</nav>', landed.text, re.S)
    assert nav and "review queue: 2 of 3" in nav.group(0) and "Label saved." in landed.text
    again = browser.post(action, data={"csrf_token": token, "score": "7", "queue": "0-20-a"}, timeout=30)
    assert again.status_code == 400 and "queue-nav" in again.text
    forged = browser.post(action, data={"csrf_token": token, "verdict": "fail", "queue": "x?y#z"},
                          allow_redirects=False, timeout=30)
    assert forged.status_code == 303 and "queue" not in forged.headers["location"]


def test_review_without_a_run_store_or_with_a_broken_one_says_so_in_one_line(tmp_path):
    """``/review`` reads the run store as the ``/runs`` pages do (``web_runs.store_page``), in its own words when
    there is none (200, as ``serve --no-store`` has nothing to review); an unknown run is a 404 and a store that
    cannot be read a 503 with one line, never a traceback."""
    import sqlite3

    # imported here, not at the top: this test stays apart from the module's shared helpers
    from agentevals.serve.http_api import ApiContext, api_app
    from agentevals.serve.sessions import SessionAssembler
    from agentevals.serve.store import MemorySessionStore
    from support.asgi import serving

    def app(runs: RunStore | None) -> object:
        return api_app(ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(), runs=runs))

    with serving(app(None)) as url:
        page = requests.get(f"{url}/review", timeout=30)
    assert page.status_code == 200 and "nothing to review" in page.text and "no runs to show" not in page.text
    location = str(tmp_path / "runs.sqlite")
    runs = RunStore.open(location)
    try:
        run_id = new_run_id()
        runs.begin_run(run_id, command="agentevals run one", cwd=None, config_digest=None, eval_set_digest=None,
                       versions={}, options={}, started_at="2026-01-01T00:00:00Z")
        runs.record_case(run_id, 0, _case(0, Status.FAILED, 0.2), {})
        with serving(app(runs)) as url:  # the queue of a readable store, for contrast
            assert requests.get(f"{url}/review", params={"run": run_id}, timeout=30).status_code == 200
        with serving(app(runs)) as url:
            assert requests.get(f"{url}/review", params={"run": "no-such-run"}, timeout=30).status_code == 404
            other = sqlite3.connect(location)  # someone else's hands on the database
            other.execute("DROP TABLE metric_results")
            other.commit()
            other.close()
            broken = requests.get(f"{url}/review", params={"run": run_id}, timeout=30)
        assert broken.status_code == 503
        assert "The run store could not be read: OperationalError: no such table: metric_results" in broken.text
        assert "Traceback" not in broken.text
    finally:
        runs.close()
