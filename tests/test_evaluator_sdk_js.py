"""The JavaScript evaluator SDK (packages/agentevals-evaluator-sdk-js): its own ``node --test`` suite, run
from pytest so that CI runs it, and the copy ``agentevals evaluator init`` vendors is the package's file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "packages" / "agentevals-evaluator-sdk-js"
TEMPLATES = REPO / "packages" / "agentevals-cli" / "src" / "agentevals" / "evaluator" / "templates"


def test_the_js_sdk_node_test_suite_passes():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (needed for the JS evaluator SDK's tests)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODE_")}
    proc = subprocess.run([node, "--test", "--test-timeout=60000", "test/"], cwd=PACKAGE, capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "# fail 0" in out
    assert "# pass 0" not in out  # it ran tests


def test_the_scaffold_vendors_the_packages_own_files():
    assert (TEMPLATES / "agentevals-evaluator-sdk.mjs").read_bytes() == (PACKAGE / "index.js").read_bytes(), (
        "cp packages/agentevals-evaluator-sdk-js/index.js "
        "packages/agentevals-cli/src/agentevals/evaluator/templates/agentevals-evaluator-sdk.mjs")
    assert (TEMPLATES / "agentevals-evaluator-sdk.d.mts").read_bytes() == (PACKAGE / "index.d.ts").read_bytes()


def test_the_js_sdk_package_is_dependency_free_and_declares_its_protocol():
    package = json.loads((PACKAGE / "package.json").read_text("utf-8"))
    assert package["version"] == "0.1.1"
    assert not package.get("dependencies")
    assert f"## {package['version']}" in (PACKAGE / "CHANGELOG.md").read_text("utf-8")
    sdk = (PACKAGE / "index.js").read_text("utf-8")
    from agentevals.protocol import PROTOCOL_VERSION

    assert f'export const PROTOCOL_VERSION = "{PROTOCOL_VERSION}";' in sdk
