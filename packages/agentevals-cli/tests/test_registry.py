"""The one plugin rule (``agentevals.core._registry``): each kind of plugin loaded through a real installed entry
point (a ``*.dist-info`` with ``entry_points.txt`` on PYTHONPATH) and used end to end by ``agentevals`` in a
subprocess; broken, mis-based and misnamed plugins refused in one line; aliases and "did you mean"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from agentevals.core._registry import Registry
from agentevals.errors import ConfigError
from agentevals.evaluators import EVALUATOR_TYPES, BaseEvaluator

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ → `support` is importable
from support.plugins import install_distribution

ADK = Path(__file__).resolve().parent / "data" / "adk"
HELM, ES_HELM = ADK / "helm.json", str(ADK / "eval_set_helm.json")


def install(site: Path, module: str, entry_points: dict[str, dict[str, str]], *, dist: str = "acme-plugin",
            version: str = "1.0") -> Path:
    """Write a tiny installed distribution into ``site``: module ``acme_plugin`` plus its dist-info."""
    return install_distribution(site, "acme_plugin", module, entry_points, dist=dist, version=version)


def agentevals(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTEVALS_")}
    env.update(PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_DATA_HOME=str(tmp_path / "data"))
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True,
                          timeout=180, cwd=tmp_path, env=env)


def metrics(stdout: str) -> list[tuple[str, str, str, float | None]]:
    (case,) = json.loads(stdout)["cases"]
    return [(m["name"], m["type"], m["status"], m["score"]) for m in case["metrics"]]


def config(tmp_path: Path, entries: str) -> str:
    path = tmp_path / "eval_config.yaml"
    path.write_text("evaluators:\n" + textwrap.indent(textwrap.dedent(entries), "  "))
    return str(path)


# -- each kind, through a real entry point, end to end ----------------------------------------------------


def test_an_evaluator_type_plugin_is_a_yaml_type_and_its_aliases_too(tmp_path):
    site = install(tmp_path / "site", """\
        from agentevals.evaluators import BaseEvaluator
        from agentevals.results import MetricResult, Status

        class AcmeEvaluator(BaseEvaluator):
            name = "acme"
            aliases = ("acme-check",)

            async def evaluate(self, ctx):
                return MetricResult(name=self.config.name, type=self.name, status=Status.PASSED, score=0.42)
        """, {"agentevals.evaluator_types": {"acme": "acme_plugin:AcmeEvaluator"}})
    cfg = config(tmp_path, """\
        - name: by_name
          type: acme
        - name: by_alias
          type: acme-check
        """)
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-c", cfg, "-o", "json", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert metrics(proc.stdout) == [("by_name", "acme", "PASSED", 0.42), ("by_alias", "acme", "PASSED", 0.42)]


def test_a_runtime_plugin_runs_files_of_its_extension(tmp_path):
    site = install(tmp_path / "site", """\
        import sys
        from agentevals.custom_evaluators import Runtime

        class AcmeRuntime(Runtime):
            name = "acme"

            @property
            def extensions(self):
                return (".acme",)

            def build_command(self, path):
                return [sys.executable, str(path)]
        """, {"agentevals.runtimes": {"acme": "acme_plugin:AcmeRuntime"}})
    (tmp_path / "check.acme").write_text("import sys\nsys.stdin.read()\nprint('{\"score\": 0.61}')\n")
    cfg = config(tmp_path, """\
        - name: acme_file
          type: code
          path: ./check.acme
        """)
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-c", cfg, "-o", "json", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert metrics(proc.stdout) == [("acme_file", "code", "PASSED", 0.61)]


def test_an_executor_plugin_is_the_yaml_executor(tmp_path):
    site = install(tmp_path / "site", """\
        from agentevals.custom_evaluators import EvalResult, EvaluatorBackend

        class AcmeExecutor(EvaluatorBackend):
            name = "acme"

            def __init__(self, path, timeout=30):
                self.path = path

            async def run(self, eval_input, metric_name):
                return EvalResult(score=0.33, details={"file": self.path.name})
        """, {"agentevals.executors": {"acme": "acme_plugin:AcmeExecutor"}})
    (tmp_path / "check.py").write_text("raise SystemExit('never run locally')\n")
    cfg = config(tmp_path, """\
        - name: elsewhere
          type: code
          path: ./check.py
          executor: acme
          threshold: 0.3
        """)
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-c", cfg, "-o", "json", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert metrics(proc.stdout) == [("elsewhere", "code", "PASSED", 0.33)]


def test_an_evaluator_source_plugin_serves_remote_entries_and_the_list(tmp_path):
    site = install(tmp_path / "site", """\
        from agentevals.evaluator.sources import EvaluatorInfo, EvaluatorSource

        class AcmeSource(EvaluatorSource):
            name = "acme"

            async def list_evaluators(self):
                return [EvaluatorInfo(name="quality", description="from acme", source="acme", ref="q/quality.py")]

            async def fetch_evaluator(self, ref, dest):
                dest.write_text("import sys\\nsys.stdin.read()\\nprint('{\\"score\\": 0.55}')\\n")
                return dest
        """, {"agentevals.sources": {"acme": "acme_plugin:AcmeSource"}})
    cfg = config(tmp_path, """\
        - name: fetched
          type: remote
          source: acme
          ref: q/quality.py
        """)
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-c", cfg, "-o", "json", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert metrics(proc.stdout) == [("fetched", "remote", "PASSED", 0.55)]
    listed = agentevals(site, tmp_path, "evaluator", "list", "--source", "acme")
    assert listed.returncode == 0, listed.stderr
    assert "quality" in listed.stdout and "from acme" in listed.stdout


def test_a_report_format_plugin_is_an_output_format(tmp_path):
    site = install(tmp_path / "site", """\
        from agentevals.report import ReportFormat

        class AcmeReport(ReportFormat):
            name = "acme"

            def render(self, run, *, color=False, context=None):
                rows = [f"{m.name}={m.status.value}" for case in run.cases for m in case.metrics]
                return "ACME " + " ".join(rows) + "\\n"
        """, {"agentevals.report_formats": {"acme": "acme_plugin:AcmeReport"}})
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-o", "acme", "-o", "json=out.json",
                      "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ACME tool_trajectory_avg_score=PASSED\n"
    assert (tmp_path / "out.json").is_file()
    help_text = agentevals(site, tmp_path, "run", "--help").stdout
    assert "acme" in help_text.split("-o, --output")[1].split("-c, --config")[0]


def test_a_trace_format_plugin_is_a_format_choice(tmp_path):
    site = install(tmp_path / "site", """\
        from agentevals.traces.formats import TraceFileFormat
        from agentevals.traces.readers.jaeger import read_jaeger

        class AcmeFormat(TraceFileFormat):
            name = "acme"

            def read(self, document, source):
                return read_jaeger(document["acme"], source)
        """, {"agentevals.trace_formats": {"acme": "acme_plugin:AcmeFormat"}})
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"acme": json.loads(HELM.read_text())}))
    proc = agentevals(site, tmp_path, "run", str(wrapped), "-f", "acme", "-e", ES_HELM, "-o", "json", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert metrics(proc.stdout) == [("tool_trajectory_avg_score", "builtin", "PASSED", 1.0)]
    assert "acme" in agentevals(site, tmp_path, "run", "--help").stdout.split("-f, --format")[1].split("\n")[0]
    cfg = config(tmp_path, "- name: tool_trajectory_avg_score\n  type: builtin\n")
    Path(cfg).write_text("trace_format: acme\noutput: json\n" + Path(cfg).read_text())
    from_config = agentevals(site, tmp_path, "run", str(wrapped), "-e", ES_HELM, "-c", cfg, "--no-store")
    assert from_config.returncode == 0, from_config.stderr
    assert metrics(from_config.stdout) == [("tool_trajectory_avg_score", "builtin", "PASSED", 1.0)]


# -- broken plugins: one line, exit 2, no traceback --------------------------------------------------------


def test_a_plugin_that_cannot_be_imported_is_one_line_naming_entry_point_and_distribution(tmp_path):
    site = install(tmp_path / "site", "import acme_missing_dependency\n",
                   {"agentevals.report_formats": {"acme": "acme_plugin:AcmeReport"}}, dist="acme-evals", version="1.2")
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-o", "acme", "--no-store")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "Error: -o acme: entry point 'acme' (group agentevals.report_formats) from distribution 'acme-evals 1.2' "
        "could not be imported: ModuleNotFoundError: No module named 'acme_missing_dependency' (FORMAT or FORMAT=PATH)"
    ]


def test_a_broken_evaluator_type_is_named_at_load_not_called_unknown(tmp_path):
    site = install(tmp_path / "site", "raise RuntimeError('acme needs ACME_HOME')\n",
                   {"agentevals.evaluator_types": {"acme": "acme_plugin:AcmeEvaluator"}})
    cfg = config(tmp_path, "- name: a\n  type: acme\n")
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-c", cfg, "--no-store")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "unknown evaluator type" not in proc.stderr
    assert ("entry point 'acme' (group agentevals.evaluator_types) from distribution 'acme-plugin 1.0' could not be "
            "imported: RuntimeError: acme needs ACME_HOME") in proc.stderr


@pytest.mark.parametrize(("module", "problem"), [
    ("class AcmeEvaluator:\n    name = 'acme'\n",
     "class acme_plugin.AcmeEvaluator is not a subclass of agentevals.evaluators.base.BaseEvaluator"),
    ("from agentevals.evaluators import BaseEvaluator\n"
     "class AcmeEvaluator(BaseEvaluator):\n    name = 'other'\n    async def evaluate(self, ctx): ...\n",
     "class acme_plugin.AcmeEvaluator is named 'other', not 'acme'"),
])
def test_a_plugin_that_breaks_the_rule_is_refused_in_one_line(tmp_path, module, problem):
    site = install(tmp_path / "site", module, {"agentevals.evaluator_types": {"acme": "acme_plugin:AcmeEvaluator"}})
    cfg = config(tmp_path, "- name: a\n  type: acme\n")
    proc = agentevals(site, tmp_path, "run", str(HELM), "-e", ES_HELM, "-c", cfg, "--no-store")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "acme" in line]
    assert "entry point 'acme' (group agentevals.evaluator_types) from distribution 'acme-plugin 1.0': " + problem in line


# -- the Registry itself, in-process, with a real entry point on sys.path ----------------------------------


class Thing:
    name = "thing"
    aliases = ("thingy",)


def test_a_failed_import_stays_registered_and_says_the_same_next_time(tmp_path, monkeypatch):
    site = install(tmp_path / "site", "import acme_missing_dependency\n",
                   {"agentevals.test_things": {"broken": "acme_plugin:Broken"}})
    monkeypatch.syspath_prepend(str(site))
    things: Registry[type[Thing]] = Registry("thing", "agentevals.test_things", base=Thing)
    messages = []
    for _ in range(2):
        with pytest.raises(ConfigError) as err:
            things.get("broken")
        messages.append(str(err.value))
    assert messages[0] == messages[1] == (
        "entry point 'broken' (group agentevals.test_things) from distribution 'acme-plugin 1.0' could not be "
        "imported: ModuleNotFoundError: No module named 'acme_missing_dependency'")
    assert things.names() == ["broken"]


def test_a_broken_plugin_does_not_hide_an_unknown_name_or_an_alias(tmp_path, monkeypatch):
    site = install(tmp_path / "site", "import acme_missing_dependency\n",
                   {"agentevals.test_things": {"broken": "acme_plugin:Broken"}})
    monkeypatch.syspath_prepend(str(site))
    things: Registry[type[Thing]] = Registry("thing", "agentevals.test_things", {"thing": f"{__name__}:Thing"},
                                             base=Thing)
    with pytest.raises(ConfigError, match=r"^unknown thing 'thingg' \(did you mean 'thing'\?\); known: broken, thing$"):
        things.get("thingg")
    assert things.get("thingy") is Thing


def test_aliases_come_from_the_classes_and_resolve_to_the_canonical_name():
    things: Registry[type[Thing]] = Registry("thing", "agentevals.test_none", {"thing": f"{__name__}:Thing"},
                                             base=Thing)
    assert things.get("thingy") is Thing
    assert things.key("thingy") == "thing"
    assert things.names() == ["thing"] and things.names(aliases=True) == ["thing", "thingy"]
    with pytest.raises(ConfigError, match=r"unknown thing 'thingg' \(did you mean 'thing'\?\); known: thing"):
        things.get("thingg")


def test_instantiate_hands_out_one_instance_per_name():
    things: Registry[Thing] = Registry("thing", "agentevals.test_none", {"thing": f"{__name__}:Thing"},
                                       base=Thing, instantiate=True)
    first = things.get("thing")
    assert isinstance(first, Thing) and things.get("thingy") is first


def test_builtin_evaluator_types_are_one_line_per_class_and_every_old_spelling_still_works():
    classes = {name: EVALUATOR_TYPES.get(name) for name in EVALUATOR_TYPES.names()}
    assert len(classes) == len(set(classes.values())) == 25  # javascript: AgentV 5's javascript assertion
    assert all(cls.name == name and issubclass(cls, BaseEvaluator) for name, cls in classes.items())
    old = ["code_judge", "code-judge", "code_grader", "code-grader", "script", "llm_judge", "llm-judge", "llm_grader",
           "llm-grader", "llm-rubric", "agent-rubric", "rubric", "rubrics", "composite", "assert-set",
           "tool_trajectory", "tool-trajectory", "field_accuracy", "field-accuracy", "execution_metrics",
           "execution-metrics", "skill_trigger", "skill-trigger", "skill-used", "not-skill-used", "contains",
           "contains_any", "contains-any", "contains_all", "contains-all", "icontains", "icontains_any",
           "icontains-any", "icontains_all", "icontains-all", "starts_with", "starts-with", "ends_with", "ends-with",
           "regex", "is_json", "is-json", "equals", "builtin", "python", "code", "remote", "openai_eval", "javascript"]
    assert sorted(old) == EVALUATOR_TYPES.names(aliases=True)
    assert EVALUATOR_TYPES.get("llm-grader") is classes["llm_judge"]
    assert EVALUATOR_TYPES.get("assert-set") is classes["composite"]
    assert EVALUATOR_TYPES.get("skill-used") is classes["skill_trigger"]


def test_an_unknown_evaluator_type_suggests_the_closest_spelling():
    with pytest.raises(ConfigError, match=r"unknown evaluator type 'contians_any' \(did you mean 'contains_any'\?\)"):
        EVALUATOR_TYPES.get("contians_any")


def test_every_builtin_of_every_kind_follows_the_rule():
    from agentevals.evaluators.builtin import METRICS
    from agentevals.execution.backends import EXECUTORS
    from agentevals.execution.runtimes import RUNTIMES
    from agentevals.report import REPORT_FORMATS
    from agentevals.sources import SOURCES
    from agentevals.traces.formats import TRACE_FORMATS

    for registry in (EVALUATOR_TYPES, METRICS, RUNTIMES, EXECUTORS, SOURCES, REPORT_FORMATS, TRACE_FORMATS):
        builtins = [name for name, spec in registry._lazy.items() if isinstance(spec, str)] + list(registry._loaded)
        for name in builtins:
            plugin = registry.get(name)  # loading validates: base class, name
            assert plugin.name == name, (registry.kind, name)
            assert registry.base is not None
            assert issubclass(plugin if isinstance(plugin, type) else type(plugin), registry.base)


def test_an_assertion_plugin_is_an_eval_assert_name(tmp_path):
    site = install(tmp_path / "site", """\
        from agentevals.evaluators.agentv._checks import Check
        from agentevals.judges._builtin import Assertion

        class AcmeAssertion(Assertion):
            name = "says-acme"
            value_kind = "none"

            def check(self, output, value, config):
                return Check("acme" in output, hit="says acme", miss="does not say acme")
        """, {"agentevals.assertions": {"says-acme": "acme_plugin:AcmeAssertion"}})
    proc = agentevals(site, tmp_path, "eval", "assert", "says_acme", "--agent-output", "hello acme")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"] == 1.0
    assert json.loads(proc.stdout)["hits"] == ["says acme"]
