"""``agentevals.core.redact``: environment secrets and token shapes become ``***``; nothing else changes."""

from __future__ import annotations

import json

import pytest
from agentevals.core.redact import may_need_redaction, redact, redact_obj, redact_url, secret_values
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-1234567890")
    monkeypatch.setenv("DB_PASSWORD", "p4ssw0rd-long")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("FEATURE_FLAG", "enabled-everywhere")  # not a secret-looking name
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to redact without mangling text


def test_values_of_secret_looking_variables_are_masked():
    text = "connect with tok-1234567890 and p4ssw0rd-long; key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert redact(text) == "connect with *** and ***; key ***"


def test_other_values_are_kept():
    assert redact("enabled-everywhere abc") == "enabled-everywhere abc"
    assert "enabled-everywhere" not in secret_values()


@pytest.mark.parametrize("token", [
    "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "ghp_" + "A" * 36,
    "github_pat_" + "a1" * 20,
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-123456789012-abcdefghij",
    "AIza" + "b" * 35,
    "glpat-" + "c" * 20,
    "hf_" + "d" * 34,
    "npm_" + "e" * 36,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
])
def test_known_token_shapes_are_masked(token: str):
    assert redact(f"error: {token} rejected") == "error: *** rejected"


def test_bearer_basic_url_passwords_and_private_keys():
    assert redact("Authorization: Bearer abc.def-ghi_123") == "Authorization: Bearer ***"
    assert redact("Authorization: Basic dXNlcjpwYXNzd29yZA==") == "Authorization: Basic ***"
    assert redact("postgres://app:s3cret@db:5432/x") == "postgres://app:***@db:5432/x"
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{key}\nend") == "key:\n***\nend"


def test_values_the_caller_knows_are_masked_too():
    """An API key read from a config (not the environment) is hidden wherever it appears, however short."""
    assert redact("401 for key k-9 at https://u:pw@h/x", "k-9", None, "") == "401 for key *** at https://u:***@h/x"


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://ci:s3cret@db.internal:5432/evals", "postgresql://ci:***@db.internal:5432/evals"),
    ("postgresql://ci:p@ss@db/evals", "postgresql://ci:***@db/evals"),  # an unescaped @ in the password
    ("postgresql://ci@db/evals", "postgresql://ci@db/evals"),
    ("runs.sqlite", "runs.sqlite"),
])
def test_redact_url_hides_only_the_password(url: str, shown: str):
    assert redact_url(url) == shown


def test_one_redactor_in_the_package():
    """llm.redact is redact.redact; no other module keeps its own secret patterns."""
    import agentevals.evaluators.llm

    assert agentevals.evaluators.llm.redact is redact


def test_redact_obj_walks_nested_structures_and_keys():
    data = {"error": "401 tok-1234567890", "list": ["p4ssw0rd-long", 3, None], "tok-1234567890": (1, "x")}
    assert redact_obj(data) == {"error": "401 ***", "list": ["***", 3, None], "***": (1, "x")}


def test_plain_report_text_is_unchanged():
    text = "helm.json · 3e289017 · 1 turn\n  tool_call_count_v1  INFORMATIONAL  1 calls"
    assert redact(text) == text


_FRAGMENTS = [
    "sk-", "sk-live-", "ghp_", "gho_", "github_pat_", "AKIA", "xoxb-", "AIza", "glpat-", "hf_", "npm_", "eyJ",
    "Bearer ", "Basic ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "https://", "user",
    ":", "@", "/", ".", " ", "\n", "a1B2c3D4e5F6g7H8", "0123456789ABCDEF", "_", "-", "=", "right", "é",
    "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "ghp_" + "A" * 36, "github_pat_" + "a1" * 20, "AKIAIOSFODNN7EXAMPLE",
    "xoxb-123456789012-abcdefghij", "AIza" + "b" * 35, "glpat-" + "c" * 20, "hf_" + "d" * 34, "npm_" + "e" * 36,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=8).map("".join))
def test_the_literal_prefilters_never_skip_a_secret(text: str):
    # The redactor runs the token and URL patterns only on strings holding one of their literals (speed):
    # the result must be what the patterns alone give.
    from agentevals.core import redact as module

    full = module._TOKEN_SHAPES.sub(module.MASK, text)
    full = module._URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{module.MASK}@", full)
    assert module._redact(text, None) == full


_HINT_LITERALS = ["-----BEGIN ", "sk-", *(f"gh{c}_" for c in "pousr"), "github_pat_", "AKIA", "ASIA", "AGPA", "AIDA",
                  "AROA", "ANPA", "ANVA", "AIPA", *(f"xox{c}-" for c in "abposr"), "AIza", "glpat-", "hf_", "npm_", "eyJ",
                  "Bearer ", "Basic "]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(["-", "----", "BEGIN ", "s", "k", "g", "h", "p", "o", "_", "github", "pat", "A", "KIA",
                                 "SIA", "GPA", "IDA", "ROA", "NPA", "NVA", "IPA", "Iza", "xox", "b", "glpat", "f", "npm",
                                 "ey", "J", "B", "earer", "asic", " ", "é"]), max_size=10).map("".join))
def test_the_token_hint_finds_exactly_the_token_literals(text: str):
    # The hint looks behind from each literal's rarest character (speed): it must find a string exactly when
    # one of the literals is in it.
    from agentevals.core import redact as module

    assert bool(module._TOKEN_HINT.search(text)) == any(literal in text for literal in _HINT_LITERALS)


_JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.lists(st.sampled_from(
        [*_FRAGMENTS, "tok-1234567890", "p4ssw0rd-long", '"', "\\", "\t"]), max_size=6).map("".join)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from([*_FRAGMENTS, "tok-1234567890"]), inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES)
def test_a_document_said_to_need_no_redaction_has_nothing_to_redact(value):
    # The run store checks a whole JSON document at once and walks it only when this says so.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if not may_need_redaction(text):
        assert redact_obj(value) == value


def test_a_secret_json_escapes_makes_every_document_walked(monkeypatch):
    monkeypatch.setenv("QUOTED_API_KEY", 'quote"d-secret-value')
    value = {"error": 'failed with quote"d-secret-value'}
    assert json.dumps(value) not in ("", None) and 'quote"d-secret-value' not in json.dumps(value)
    assert may_need_redaction(json.dumps(value))
    assert redact_obj(value) == {"error": "failed with ***"}
    monkeypatch.delenv("QUOTED_API_KEY")
    assert not may_need_redaction(json.dumps(value))


@pytest.mark.parametrize("argv,shown", [
    (["serve", "--api-token", "plain-words"], ["serve", "--api-token", "***"]),
    (["serve", "--api-token=plain-words", "-p", "0"], ["serve", "--api-token=***", "-p", "0"]),
    (["x", "--password", "p", "--client-secret=s", "--github-token", "t"],
     ["x", "--password", "***", "--client-secret=***", "--github-token", "***"]),
    (["serve", "--allowed-host", "evals", "--allow-code-evaluators", "--host", "0.0.0.0"],
     ["serve", "--allowed-host", "evals", "--allow-code-evaluators", "--host", "0.0.0.0"]),
    (["serve", "--store", "postgresql://u:pw@h/db"], ["serve", "--store", "postgresql://u:pw@h/db"]),
    (["serve", "--api-token"], ["serve", "--api-token"]),
    (["serve", "--alert-webhook", "https://hooks.example/T0/B0/abc"], ["serve", "--alert-webhook", "***"]),
])
def test_redact_argv_hides_secret_flag_values_whatever_they_look_like(argv, shown):
    from agentevals.core.redact import redact_argv

    assert redact_argv(argv) == shown


def test_a_run_records_its_command_line_without_the_token(monkeypatch):
    import sys

    from agentevals.store._recording import run_meta

    monkeypatch.setattr(sys, "argv", ["agentevals", "serve", "--api-token", "abc def", "--api-token=xyz"])
    command = run_meta(options={})["command"]
    assert command == "agentevals serve --api-token *** --api-token=***"
