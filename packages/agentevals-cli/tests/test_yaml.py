"""``agentevals.core._yaml``: alias expansion and depth are bounded in every YAML we read."""

from __future__ import annotations

import pytest
import yaml
from agentevals.core._yaml import safe_load

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))


def test_aliases_within_the_limit_load():
    assert safe_load("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


def test_an_alias_bomb_is_refused_before_it_is_built():
    with pytest.raises(yaml.YAMLError, match="expands to more than 100000 nodes"):
        safe_load(BOMB)


def test_the_limit_is_configurable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTEVALS_MAX_YAML_NODES", "5")
    with pytest.raises(yaml.YAMLError, match="more than 5 nodes"):
        safe_load("[1, 2, 3, 4, 5, 6]")


def test_recursive_and_deep_documents_are_one_line_errors():
    with pytest.raises(yaml.YAMLError, match="an alias refers to a node that contains it"):
        safe_load("a: &a [*a]")
    with pytest.raises(yaml.YAMLError, match=r"^the document is nested too deeply to read$"):
        safe_load("a: " + "[" * 50_000 + "]" * 50_000)


def test_a_bomb_in_an_evaluator_index_is_refused():
    from agentevals.sources.base import SourceError, parse_index

    with pytest.raises(SourceError, match=r"index\.yaml: not valid YAML: the document expands to more than"):
        parse_index("evaluators:\n  - name: x\n    tags:\n" + "".join("      " + line + "\n" for line in BOMB.splitlines()),
                    source="github", where="index.yaml")
