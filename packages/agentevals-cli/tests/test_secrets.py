"""Credential references (``agentevals.core.secrets``): the ``env`` resolver, one line per reference that cannot
be resolved, the shape check, and a resolver plugin written for agentevals-cli 0.11 loaded through a real
``agentevals.secret_resolvers`` entry point."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ → `support` is importable

from agentevals.core.secrets import (
    SECRET_RESOLVERS,
    Credentials,
    check_credential_refs,
    register_secret_resolver,
    resolve_credential_refs,
)
from agentevals.errors import ConfigError
from support.plugins import install_distribution, with_site


def resolve(refs):
    return asyncio.run(resolve_credential_refs(refs))


def test_env_references_resolve_and_the_failures_are_one_line_each(monkeypatch):
    monkeypatch.setenv("AE_TEST_JUDGE_KEY", "sk-resolved-1")
    monkeypatch.delenv("AE_TEST_UNSET", raising=False)
    credentials = resolve({"judge": {"kind": "env", "name": "AE_TEST_JUDGE_KEY"},
                           "gone": {"kind": "env", "name": "AE_TEST_UNSET"},
                           "vault": {"kind": "vault", "path": "kv/judge"},
                           "nameless": {"kind": "env"}})
    assert credentials.value("judge") == "sk-resolved-1"
    assert credentials.problem("judge") is None
    assert credentials.value("gone") is None
    assert credentials.problem("gone") == "could not be resolved: env: environment variable 'AE_TEST_UNSET' is not set"
    assert credentials.problem("vault") == ("could not be resolved: unknown secret resolver 'vault'; known: env")
    assert credentials.problem("nameless") == ("could not be resolved: env: an env reference needs 'name' "
                                               "(the environment variable)")
    assert credentials.problem("other") == ("is not in the run's credential_refs "
                                            "(names given: gone, judge, nameless, vault)")
    assert "sk-resolved-1" not in repr(credentials)
    assert repr(credentials) == "Credentials(resolved=['judge'], unresolved=['gone', 'nameless', 'vault'])"


@pytest.mark.parametrize(("refs", "message"), [
    (["judge"], 'credential_refs: expected an object of name → reference, e.g. {"judge": {"kind": "env", '
                '"name": "OPENAI_API_KEY"}}, got list'),
    ({"judge": "OPENAI_API_KEY"}, "credential_refs: 'judge': expected a reference object such as "
                                  '{"kind": "env", "name": "OPENAI_API_KEY"}, got str'),
    ({"judge": {"name": "OPENAI_API_KEY"}}, "credential_refs: 'judge': missing 'kind' (e.g. \"env\")"),
    ({"": {"kind": "env", "name": "X"}}, "credential_refs: a name must be a non-empty string, got ''"),
])
def test_a_malformed_map_is_one_config_error(refs, message):
    with pytest.raises(ConfigError) as caught:
        check_credential_refs(refs)
    assert str(caught.value) == message


def test_a_resolver_registered_from_python_may_be_sync_or_async(monkeypatch):
    class Sync:
        def __init__(self, ref):
            self.prefix = ref["prefix"]

        def resolve(self, ref):
            return self.prefix + "-sync"

    class Empty:
        def __init__(self, ref):
            pass

        async def resolve(self, ref):
            return ""

    monkeypatch.setattr(SECRET_RESOLVERS, "_loaded", dict(SECRET_RESOLVERS._loaded))
    register_secret_resolver("sync", Sync)
    register_secret_resolver("empty", Empty)
    credentials = resolve({"a": {"kind": "sync", "prefix": "p"}, "b": {"kind": "empty"}})
    assert credentials.value("a") == "p-sync"
    assert credentials.problem("b") == ("could not be resolved: empty: the resolver returned an empty string, "
                                          "not a secret string")


def test_a_secret_never_lands_in_recorded_run_options(monkeypatch):
    """``RunOptions.credentials`` is out of its ``repr`` and of the options ``run`` records in the run store."""
    from dataclasses import asdict

    from agentevals.engine.options import RunOptions

    monkeypatch.setenv("AE_TEST_JUDGE_KEY", "sk-never-recorded")
    refs = {"judge": {"kind": "env", "name": "AE_TEST_JUDGE_KEY"}}
    options = RunOptions(credential_refs=refs, credentials=resolve(refs))
    assert "sk-never-recorded" not in repr(options)
    recorded = asdict(options)
    assert recorded["credential_refs"] == refs
    assert "sk-never-recorded" not in repr(recorded)


def test_a_0_11_resolver_plugin_works_through_its_entry_point(tmp_path):
    """A plugin written for agentevals-cli 0.11 (``agentevals.secret_resolvers``: entry-point name = ``kind``,
    value = ``factory(spec) -> resolver`` with ``async resolve(ref) -> str``), installed as a distribution,
    resolves its references; one that raises is one line for its reference, the others still resolve."""
    site = install_distribution(tmp_path / "site", "acme_plugin", """\
        class VaultResolver:
            def __init__(self, root):
                self.root = root

            async def resolve(self, ref):
                if ref.get("path") == "missing":
                    raise ValueError(f"no secret at {ref['path']!r}")
                return f"{self.root}:{ref['path']}"

        def create_vault_resolver(spec):
            return VaultResolver(spec.get("mount", "kv"))

        def create_broken_resolver(spec):
            raise RuntimeError("cannot reach the vault")
        """, {"agentevals.secret_resolvers": {"vault": "acme_plugin:create_vault_resolver",
                                              "broken": "acme_plugin:create_broken_resolver"}})
    script = """if True:
        import asyncio, json
        from agentevals.core.secrets import SECRET_RESOLVERS, resolve_credential_refs
        refs = {"judge": {"kind": "vault", "mount": "secret", "path": "judge"},
                "missing": {"kind": "vault", "path": "missing"},
                "broken": {"kind": "broken"},
                "env": {"kind": "env", "name": "AE_TEST_PLUGIN_ENV"}}
        credentials = asyncio.run(resolve_credential_refs(refs))
        print(json.dumps({"kinds": SECRET_RESOLVERS.names(),
                          "values": {n: credentials.value(n) for n in refs},
                          "problems": {n: credentials.problem(n) for n in refs}}))
    """
    env = with_site(site, {**os.environ, "AE_TEST_PLUGIN_ENV": "from-env"})
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["kinds"] == ["broken", "env", "vault"]
    assert answer["values"] == {"judge": "secret:judge", "missing": None, "broken": None, "env": "from-env"}
    assert answer["problems"] == {
        "judge": None, "env": None,
        "missing": "could not be resolved: vault: no secret at 'missing'",
        "broken": "could not be resolved: broken: RuntimeError: cannot reach the vault",
    }


def test_credentials_survive_a_deep_copy_and_a_pickle():
    """``dataclasses.asdict``/``replace`` copy ``RunOptions`` and Ray pickles it to the cluster."""
    import copy
    import pickle

    credentials = Credentials({"a": "x"}, {"b": "why"})
    assert copy.deepcopy(credentials) is credentials
    again = pickle.loads(pickle.dumps(credentials))
    assert again.value("a") == "x" and again.problem("b") == "could not be resolved: why"

