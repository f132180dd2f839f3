"""tools/gen_import_contracts.py: the checked-in contracts are the JSON's, and the contracts it writes catch imports."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "gen_import_contracts.py"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def load_tool():
    spec = importlib.util.spec_from_file_location("gen_import_contracts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checked_in_contracts_are_up_to_date():
    assert load_tool().main(["--check"]) == 0


SPEC = {
    "parts": {
        "Top": {"is": ["packages/demo/src/demo/top/"], "says": "calls low"},
        "Low": {"is": ["packages/demo/src/demo/low/"], "says": "called by top"},
        "Base": {"is": ["packages/demo/src/demo/base.py"], "says": "everyone's", "leaf": True},
        "Later": {"is": ["packages/demo/src/demo/later/"], "says": "not written yet"},
    },
    "arrows": [{"from": "Top", "to": "Low"}],
    "never": [{"from": "Base", "to": "Top", "why": "base knows nothing"}],
}


def make_tree(root: Path, spec: dict, low_imports: str = "") -> None:
    src = root / "packages" / "demo" / "src" / "demo"
    for folder in ("", "top", "low"):
        (src / folder).mkdir(parents=True, exist_ok=True)
        (src / folder / "__init__.py").write_text('"""Demo."""\n')
    (src / "top" / "__init__.py").write_text("from demo import low, base\n")
    (src / "low" / "__init__.py").write_text(low_imports)
    (src / "base.py").write_text("")
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "architecture-parts.json").write_text(json.dumps(spec))


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root / "packages" / "demo" / "src"), "PATH": ""})


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed in this environment")
def test_an_import_against_an_arrow_fails_the_contracts(tmp_path, capsys):
    tool = load_tool()
    make_tree(tmp_path, SPEC)
    assert tool.main([], root=tmp_path) == 0
    assert "Later: packages/demo/src/demo/later/ does not exist (yet)" in capsys.readouterr().err
    assert lint(tmp_path).returncode == 0

    make_tree(tmp_path, SPEC, low_imports="import demo.top\n")  # Low imports the part above it: a cycle
    result = lint(tmp_path)
    assert result.returncode == 1
    assert "Low imports none of the parts above it (Top) BROKEN" in result.stdout
    assert "demo.low -> demo.top" in result.stdout

    # An exception lets it pass, with its reason in the file; once the import is gone the exception fails too.
    spec = {**SPEC, "exceptions": [{"import": "demo.low -> demo.top", "why": "TODO: goes with the rewrite"}]}
    make_tree(tmp_path, spec, low_imports="import demo.top\n")
    assert tool.main([], root=tmp_path) == 0
    assert "; TODO: goes with the rewrite" in (tmp_path / ".importlinter").read_text()
    assert lint(tmp_path).returncode == 0
    make_tree(tmp_path, spec)
    assert lint(tmp_path).returncode != 0


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed in this environment")
def test_a_never_entry_and_a_leaf_part_fail_on_their_import(tmp_path):
    tool = load_tool()
    make_tree(tmp_path, SPEC)
    (tmp_path / "packages/demo/src/demo/base.py").write_text("import demo.low\n")
    assert tool.main([], root=tmp_path) == 0
    result = lint(tmp_path)
    assert result.returncode == 1
    assert "Base imports no part but the leaf parts (every part may import it) BROKEN" in result.stdout
    (tmp_path / "packages/demo/src/demo/base.py").write_text("import demo.top\n")
    result = lint(tmp_path)
    assert "Base never imports Top: base knows nothing BROKEN" in result.stdout


def test_check_fails_when_the_json_changed(tmp_path, capsys):
    tool = load_tool()
    make_tree(tmp_path, SPEC)
    assert tool.main([], root=tmp_path) == 0
    assert tool.main(["--check"], root=tmp_path) == 0
    make_tree(tmp_path, {**SPEC, "arrows": []})
    assert tool.main(["--check"], root=tmp_path) == 1
    assert ".importlinter is stale" in capsys.readouterr().err


def test_arrows_that_make_a_cycle_are_refused(tmp_path):
    make_tree(tmp_path, {**SPEC, "arrows": [{"from": "Top", "to": "Low"}, {"from": "Low", "to": "Top"}]})
    with pytest.raises(SystemExit, match="the arrows make a cycle through"):
        load_tool().main([], root=tmp_path)
