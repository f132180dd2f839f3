"""``execution.sandbox_env``: the minimal evaluator environment and the ``env:`` setting."""

from __future__ import annotations

import pytest
from agentevals.execution.sandbox_env import check_env_setting, evaluator_env

ENVIRON = {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "LC_ALL": "C", "TMPDIR": "/t",
           "OPENAI_API_KEY": "sk-x", "GITHUB_TOKEN": "ghp", "MY_SETTING": "1"}


def test_the_default_is_minimal():
    assert evaluator_env(None, environ=ENVIRON) == {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8",
                                                    "LC_ALL": "C", "TMPDIR": "/t"}


def test_listed_names_are_added_and_inherit_passes_everything():
    assert evaluator_env(["OPENAI_API_KEY", "ABSENT"], environ=ENVIRON)["OPENAI_API_KEY"] == "sk-x"
    assert "GITHUB_TOKEN" not in evaluator_env(["OPENAI_API_KEY"], environ=ENVIRON)
    assert evaluator_env("inherit", environ=ENVIRON) == ENVIRON


@pytest.mark.parametrize(("value", "message"), [
    ("all", "env must be 'inherit' or a list of variable names, got 'all'"),
    (3, "env must be 'inherit' or a list of variable names, got int"),
    (["OK", "NOT OK"], "env lists names of environment variables; not a name: 'NOT OK'"),
])
def test_bad_settings_are_one_line_errors(value, message):
    with pytest.raises(ValueError, match=f"^{message}$".replace("(", r"\(").replace(")", r"\)")):
        check_env_setting(value)
