"""Every code block of README.md, docs/**/*.md and packages/*/README.md runs here, as a reader would run it.

Conventions (also in docs/writing-docs.md). Each page gets a fresh copy of the repository's files in a
temporary directory; its blocks run there, top to bottom, so a block may use what an earlier block of
the same page created. Nothing is written into the repository.

By the fence's language:

- ``bash``, ``sh``, ``shell``: the block is a bash script (``set -eo pipefail``) run from the copy's root;
  it must exit 0.
- ``console``: ``$ command`` lines (a trailing ``\\`` continues a command); the lines up to the next
  ``$`` are its documented output, compared with what the command printed (stdout and stderr merged,
  trailing spaces ignored, ``...`` on a line of its own or inside a line matches any text). A command
  without output lines may print anything. Each command must exit 0.
- ``python``: run with this interpreter from the copy's root; it must exit 0. ``js``/``javascript``: run
  with ``node``; ``ts``/``typescript``: with the tsx agentevals would use (``$AGENTEVALS_TSX``) or Node's
  type stripping (skipped when neither is here).
- ``yaml``/``yml``, ``json``, ``jsonl`` (each line), ``toml``: must parse. A YAML block with a top-level ``evaluators:`` is an
  eval_config.yaml: ``agentevals config validate`` must accept it and it must validate against
  ``agentevals config schema``; its relative paths resolve from the copy's root unless a ``file``
  marker places it elsewhere. (A registry's ``index.yaml``, first line ``# index.yaml …``, is not a config.)
- no language, ``text``, ``markdown``: prose, not run. Any other language fails until this module learns it.

Markers: HTML comments on the lines right above the opening fence, one directive each.

- ``<!-- docs-test: skip (reason) -->``: not run (needs credentials, a remote service, runs forever,
  or is the test command itself). The reason is required.
- ``<!-- docs-test: exit N -->``: the block (every command of a console block) must exit N.
- ``<!-- docs-test: needs PROGRAM -->``: skipped, with the reason, where PROGRAM (``node``) is not on PATH.
- ``<!-- docs-test: cwd DIR -->``: run the block's commands in DIR (relative to the repository root), for
  pages that say "from `examples/agentv`: …".
- ``<!-- docs-test: file PATH -->``: the block is the content of PATH (relative to the repository root):
  it is written there for the blocks below it instead of being run (a YAML config is also validated
  there). When PATH is a shipped file, the block must be identical to it.

The commands readers type are shimmed, documented and checked rather than executed for real:
``hatch run CMD ARGS`` runs ``CMD ARGS`` in this environment (the one the test suite runs in, where both
packages are installed editable); hatch scripts such as ``hatch run test`` cannot run inside the test
suite and must be marked ``skip``. ``pip install REQ…`` installs nothing: it checks that each
requirement (with its extras) is installed here, so a documented install line that names the wrong
package or extra fails. ``$XDG_CACHE_HOME`` is a temporary directory of the session, credentials
(``OPENAI_*``, ``GITHUB_TOKEN``, ``AGENTEVALS_*``) are removed from the environment, TypeScript runs
with the tsx of ``tests/node`` when it is installed (``$AGENTEVALS_TSX``), and every block has a
deadline (``BLOCK_TIMEOUT`` seconds; its whole process group is killed after it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BLOCK_TIMEOUT = 180
"""Seconds one block may run (a first TypeScript run may install tsx)."""

PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "packages").glob("*/README.md")])
RUN_LANGUAGES = {"bash", "sh", "shell", "console", "python", "js", "javascript", "ts", "typescript"}
DATA_LANGUAGES = {"yaml", "yml", "json", "jsonl", "toml"}
PROSE_LANGUAGES = {"", "text", "markdown", "md"}
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<what>[a-z]+)\s*(?P<arg>.*?)\s*-->\s*$")
_CREDENTIALS = re.compile(r"^(OPENAI_|AGENTEVALS_|GITHUB_TOKEN$|ANTHROPIC_|GOOGLE_API_KEY$)")


@dataclass
class Block:
    """One fenced block of a page, with its markers."""

    page: Path
    line: int
    lang: str
    text: str
    skip: str | None = None
    exit_code: int = 0
    file: str | None = None
    cwd: str = "."
    needs: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def parse_blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` with the markers right above each (``ValueError`` for a bad marker)."""
    lines = page.read_text("utf-8").splitlines()
    blocks: list[Block] = []
    used: set[int] = set()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, indent = match["fence"], len(match["indent"])
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines) and not lines[index].strip().startswith(fence):
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            used.add(index)  # inside a block: an example of a marker is not one
            index += 1
        index += 1
        block = Block(page, start + 1, match["lang"].lower(), "\n".join(body) + "\n")
        above = start - 1
        while above >= 0 and (marker := _MARKER.match(lines[above])):
            _apply_marker(block, marker["what"], marker["arg"], above + 1)
            used.add(above)
            above -= 1
        blocks.append(block)
    stray = [n + 1 for n, line in enumerate(lines) if "docs-test:" in line and line.lstrip().startswith("<!--")
             and n not in used]
    if stray:
        raise ValueError(f"{page.relative_to(REPO)}:{stray[0]}: docs-test marker not on the line right above a fence")
    return blocks


def _apply_marker(block: Block, what: str, arg: str, line: int) -> None:
    where = f"{block.page.relative_to(REPO)}:{line}"
    if what == "skip":
        reason = arg.strip().removeprefix("(").removesuffix(")").strip()
        if not reason:
            raise ValueError(f"{where}: docs-test: skip needs a reason in parentheses")
        block.skip = reason
    elif what == "exit" and arg.strip().isdigit():
        block.exit_code = int(arg)
    elif what == "needs" and re.fullmatch(r"[\w.+-]+", arg.strip()):
        block.needs.append(arg.strip())
    elif what in ("file", "cwd") and arg.strip() and not Path(arg.strip()).is_absolute() and ".." not in Path(arg).parts:
        setattr(block, what, arg.strip())
    else:
        raise ValueError(f"{where}: unknown docs-test marker {what!r} {arg!r} (skip (reason), exit N, file PATH, cwd DIR, needs PROGRAM)")


ALL_BLOCKS = [block for page in PAGES for block in parse_blocks(page)]


# ---------------------------------------------------------------------------------------------------
# The sandbox a page runs in


def _tracked_files() -> list[str]:
    """What a fresh clone has (plus files not committed yet, so a docs change can be tried before)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                             capture_output=True, check=True, timeout=60).stdout
        return [name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):  # not a git checkout (an sdist): copy the tree
        return [str(p.relative_to(REPO)) for p in REPO.rglob("*")
                if p.is_file() and not {".git", "node_modules", ".venv", "__pycache__"} & set(p.parts)]


HATCH_SHIM = """#!{python}
# docs-test shim: `hatch run CMD ARGS` runs CMD ARGS in this environment (see tests/docs/test_docs.py).
import os, sys
args = sys.argv[1:]
scripts = set(os.environ.get("DOCS_TEST_HATCH_SCRIPTS", "").split())
if len(args) >= 2 and args[0] == "run":
    command = args[1]
    if ":" in command or command in scripts:
        sys.exit(f"docs-test: `hatch run {{command}}` is a hatch script; it cannot run inside the test suite "
                 "(mark the block <!-- docs-test: skip (reason) -->)")
    os.execvp(command, args[1:])
sys.exit(f"docs-test: only `hatch run CMD` is supported here, got: hatch {{' '.join(args)}}")
"""

PIP_SHIM = """#!{python}
# docs-test shim: `pip install REQ...` checks that each requirement is installed here (see tests/docs/test_docs.py).
import re, sys
from importlib import metadata
args = sys.argv[1:]
if not args or args[0] != "install":
    sys.exit(f"docs-test: only `pip install REQ...` is supported here, got: pip {{' '.join(args)}}")
missing = []
for arg in args[1:]:
    if arg.startswith("-"):
        if arg in ("-e", "--editable", "-r", "--requirement"):
            sys.exit(f"docs-test: pip {{arg}} is not supported in docs blocks")
        continue
    match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\\[([^\\]]*)\\])?\\s*([<>=!~].*)?", arg.strip())
    if not match:
        sys.exit(f"docs-test: cannot read the requirement {{arg!r}}")
    name, extras = match[1], [e.strip() for e in (match[2] or "").split(",") if e.strip()]
    if name.lower() == "hatch":
        print("docs-test: hatch is provided by the docs harness (hatch run CMD runs CMD here)")
        continue
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        missing.append(name)
        continue
    for extra in extras:
        if extra not in (dist.metadata.get_all("Provides-Extra") or []):
            missing.append(f"{{name}}[{{extra}}] (no such extra)")
            continue
        for requirement in dist.requires or []:
            if f'extra == "{{extra}}"' not in requirement and f"extra == '{{extra}}'" not in requirement:
                continue
            needed = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)[0]
            try:
                metadata.distribution(needed)
            except metadata.PackageNotFoundError:
                missing.append(f"{{needed}} (from {{name}}[{{extra}}])")
    print(f"docs-test: {{arg}} is installed")
if missing:
    sys.exit("docs-test: not installed in this environment: " + ", ".join(missing))
"""


def _hatch_scripts() -> str:
    """Names of the scripts in hatch.toml (``hatch run test``…), which the hatch shim refuses."""
    names, in_scripts = [], False
    for line in (REPO / "hatch.toml").read_text("utf-8").splitlines():
        if line.startswith("["):
            in_scripts = line.strip().endswith(".scripts]")
        elif in_scripts and (match := re.match(r"([A-Za-z][\w-]*)\s*=", line)):
            names.append(match[1])
    return " ".join(names)


@pytest.fixture(scope="session")
def docs_session(tmp_path_factory):
    """Shims, a cache directory and the environment every block runs with."""
    base = tmp_path_factory.mktemp("docs-session")
    shims = base / "shims"
    shims.mkdir()
    for name, text in (("hatch", HATCH_SHIM), ("pip", PIP_SHIM)):
        shim = shims / name
        shim.write_text(text.format(python=sys.executable), "utf-8")
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not _CREDENTIALS.match(k) and not k.startswith("PYTEST")}
    env.update(
        PATH=os.pathsep.join([str(shims), str(Path(sys.executable).parent), env.get("PATH", "")]),
        XDG_CACHE_HOME=str(base / "cache"),
        DOCS_TEST_HATCH_SCRIPTS=_hatch_scripts(),
        COLUMNS="120",
        NO_COLOR="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    tsx = REPO / "tests" / "node" / "node_modules" / ".bin" / "tsx"
    if tsx.is_file():
        env["AGENTEVALS_TSX"] = str(tsx)
    return {"base": base, "env": env, "files": _tracked_files(), "pages": {}}


@dataclass
class PageRun:
    """A page's sandbox and how far its blocks have run."""

    root: Path
    done: int = 0
    failed: list[str] = field(default_factory=list)


def _page_run(session: dict, page: Path) -> PageRun:
    if page not in session["pages"]:
        root = session["base"] / "pages" / str(page.relative_to(REPO)).replace("/", "__")
        for name in session["files"]:
            source = REPO / name
            if source.is_file():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, root / name)
        session["pages"][page] = PageRun(root)
    return session["pages"][page]


# ---------------------------------------------------------------------------------------------------
# Running blocks


def _run(command: list[str], *, cwd: Path, env: dict, stdin: str | None = None) -> tuple[int, str]:
    """Run with a deadline; the whole process group is killed when it passes."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin is not None else
                            subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        out, _ = proc.communicate(stdin, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(f"timed out after {BLOCK_TIMEOUT}s; output so far:\n{out}") from None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # leftovers of the block (background jobs)
        except ProcessLookupError:
            pass
    return proc.returncode, out


def parse_console(text: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines and the output lines documented under each."""
    commands: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and index + 1 < len(lines):
                index += 1
                command = command[:-1] + "\n" + lines[index]
            commands.append((command, []))
        elif commands:
            commands[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"console block: text before the first `$ ` command: {line!r}")
        index += 1
    return commands


def output_matches(expected: list[str], actual: str) -> bool:
    """Line-wise match; ``...`` alone matches any lines, inside a line any text."""
    pattern = ""
    for line in expected:
        line = line.rstrip()
        if line == "...":
            pattern += r"(?:.*\n)*?"
        else:
            pattern += ".*?".join(re.escape(part) for part in line.split("...")) + r"[ \t]*\n"
    text = "\n".join(line.rstrip() for line in actual.rstrip("\n").splitlines()) + "\n"
    return re.fullmatch(pattern, text) is not None


def _check_exit(block: Block, code: int, out: str, what: str) -> None:
    assert code == block.exit_code, f"{what}: exit code {code}, expected {block.exit_code}; output:\n{out}"


def _config_checks(block: Block, path: Path, run: PageRun, env: dict) -> None:
    code, out = _run([sys.executable, "-m", "agentevals", "config", "validate", str(path)], cwd=run.root, env=env)
    assert code == 0, f"agentevals config validate rejects this config:\n{out}"
    code, schema = _run([sys.executable, "-m", "agentevals", "config", "schema"], cwd=run.root, env=env)
    assert code == 0, schema
    document = yaml.safe_load(path.read_text("utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(json.loads(schema)).iter_errors(document), key=str)
    assert not errors, "agentevals config schema rejects this config: " + "; ".join(e.message for e in errors)


def _interpreter(suffix: str, env: dict) -> list[str]:
    """The command that runs a block's file: this Python, node, or for TypeScript tsx / type stripping."""
    if suffix == ".py":
        return [sys.executable]
    node = shutil.which("node", path=env["PATH"])
    if node is None:
        pytest.skip("node is not installed")
    if suffix == ".js":
        return [node]
    if env.get("AGENTEVALS_TSX"):
        return [env["AGENTEVALS_TSX"]]
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    major, minor = (int(part) for part in re.findall(r"\d+", version)[:2])
    if (major, minor) < (22, 6):
        pytest.skip("TypeScript blocks need tsx (npm ci in tests/node) or Node >= 22.6")
    return [node, "--experimental-strip-types", "--disable-warning=ExperimentalWarning"]


def _is_index(text: str) -> bool:
    """An evaluator registry's ``index.yaml`` (its first line says so) also has ``evaluators:``."""
    return bool(re.match(r"#.*\bindex\.yaml\b", text))


def execute(block: Block, run: PageRun, env: dict) -> None:
    """Run one block in its page's sandbox (assertions say what went wrong)."""
    if block.file:
        shipped = REPO / block.file
        if shipped.is_file():  # the docs show a shipped file: they must show it as it is
            assert block.text == shipped.read_text("utf-8"), f"the block differs from the shipped {block.file}"
        target = run.root / block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text, "utf-8")
    if block.lang in ("yaml", "yml"):
        document = yaml.safe_load(block.text)
        if isinstance(document, dict) and "evaluators" in document and not _is_index(block.text):
            path = run.root / (block.file or f"docs-block-{block.line}.yaml")
            if not block.file:
                path.write_text(block.text, "utf-8")
            _config_checks(block, path, run, env)
    elif block.lang == "json":
        json.loads(block.text)
    elif block.lang == "jsonl":
        for line in block.text.splitlines():
            if line.strip():
                json.loads(line)
    elif block.lang == "toml":
        tomllib = pytest.importorskip("tomllib", reason="toml blocks are checked on Python >= 3.11")
        tomllib.loads(block.text)
    elif block.file:
        return  # a file's content, used by later blocks
    elif block.lang in ("bash", "sh", "shell"):
        code, out = _run(["bash", "-eo", "pipefail", "-c", block.text], cwd=run.root / block.cwd, env=env)
        _check_exit(block, code, out, "block")
    elif block.lang in ("python", "js", "javascript", "ts", "typescript"):
        suffix = {"python": ".py", "js": ".js", "javascript": ".js"}.get(block.lang, ".ts")
        script = run.root / f".docs-block-{block.line}{suffix}"
        script.write_text(block.text, "utf-8")
        code, out = _run([*_interpreter(suffix, env), str(script)], cwd=run.root / block.cwd, env=env)
        _check_exit(block, code, out, "block")
    elif block.lang == "console":
        for command, expected in parse_console(block.text):
            code, out = _run(["bash", "-o", "pipefail", "-c", command], cwd=run.root / block.cwd, env=env)
            _check_exit(block, code, out, f"$ {command}")
            while expected and not expected[-1].strip():
                expected.pop()
            if expected:
                assert output_matches(expected, out), (
                    f"$ {command}\noutput differs from the docs.\n--- documented\n" + "\n".join(expected)
                    + "\n--- actual\n" + out)
    else:
        raise AssertionError(f"unknown block language {block.lang!r}: teach tests/docs/test_docs.py or mark it skip")


def _missing(block: Block, env: dict) -> list[str]:
    """The programs a ``needs`` marker names that are not on the blocks' PATH."""
    return [program for program in block.needs if shutil.which(program, path=env["PATH"]) is None]


@pytest.mark.timeout(BLOCK_TIMEOUT * 4)
@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.id for b in ALL_BLOCKS])
def test_docs_block(block: Block, docs_session) -> None:
    if block.lang in PROSE_LANGUAGES and not block.file:
        pytest.skip("prose block (no language / text)")
    if block.skip:
        pytest.skip(block.skip)
    missing = _missing(block, docs_session["env"])
    if missing:
        pytest.skip(f"needs {', '.join(missing)}, which is not installed here")
    blocks = [b for b in ALL_BLOCKS if b.page == block.page]
    run = _page_run(docs_session, block.page)
    position = blocks.index(block)
    # Earlier blocks of the page first (also when this one is selected alone with -k).
    for earlier in blocks[run.done:position]:
        if earlier.skip or _missing(earlier, docs_session["env"]) or (
                earlier.lang in PROSE_LANGUAGES and not earlier.file):
            continue
        try:
            execute(earlier, run, docs_session["env"])
        except AssertionError as exc:
            run.failed.append(earlier.id)
            pytest.fail(f"an earlier block of the page failed: {earlier.id}: {textwrap.shorten(str(exc), 300)}")
    run.done = position + 1
    execute(block, run, docs_session["env"])


# ---------------------------------------------------------------------------------------------------
# The harness itself


def test_every_page_is_collected_and_markers_parse():
    assert REPO / "README.md" in PAGES and any(p.parent == REPO / "docs" for p in PAGES)
    languages = {b.lang for b in ALL_BLOCKS}
    assert languages <= RUN_LANGUAGES | DATA_LANGUAGES | PROSE_LANGUAGES, languages


def test_markers_and_console_parsing(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent("""\
        Text.
        <!-- docs-test: skip (needs a key) -->
        ```bash
        curl https://example.invalid
        ```
        <!-- docs-test: exit 1 -->
        <!-- docs-test: file out/x.py -->
        ```python
        print(1)
        ```
        ```console
        $ echo a \\
          b
        a b
        $ true
        ```
        """), "utf-8")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    skip, python, console = parse_blocks(page)
    assert (skip.line, skip.lang, skip.skip) == (3, "bash", "needs a key")
    assert (python.exit_code, python.file, python.text) == (1, "out/x.py", "print(1)\n")
    assert parse_console(console.text) == [("echo a \n  b", ["a b"]), ("true", [])]
    bad = tmp_path / "bad.md"
    bad.write_text("<!-- docs-test: skip -->\n```bash\ntrue\n```\n", "utf-8")
    with pytest.raises(ValueError, match="needs a reason"):
        parse_blocks(bad)
    bad.write_text("<!-- docs-test: skip (x) -->\n\n```bash\ntrue\n```\n", "utf-8")
    with pytest.raises(ValueError, match=r"bad\.md:1: docs-test marker not on the line right above a fence"):
        parse_blocks(bad)
    needs = tmp_path / "needs.md"
    needs.write_text("<!-- docs-test: needs bash -->\n<!-- docs-test: needs no-such-program-here -->\n```bash\ntrue\n```\n")
    (block,) = parse_blocks(needs)
    assert _missing(block, {"PATH": os.environ["PATH"]}) == ["no-such-program-here"]
    nested = tmp_path / "nested.md"
    nested.write_text("1. Step:\n\n    ```bash\n    echo in a list\n    ```\n", "utf-8")
    assert [(b.lang, b.text) for b in parse_blocks(nested)] == [("bash", "echo in a list\n")]


def test_output_matching():
    assert output_matches(["a ... c", "..."], "a b c\nmore\nlines\n")
    assert output_matches(["x"], "x  \n")
    assert not output_matches(["x"], "y\n")
    assert not output_matches(["a", "b"], "a\n")


def test_shims_check_installs_and_refuse_hatch_scripts(docs_session, tmp_path):
    env = docs_session["env"]
    assert _run(["bash", "-c", "pip install agentevals-evaluator-sdk 'agentevals-cli[openai]'"], cwd=tmp_path,
                env=env)[0] == 0
    code, out = _run(["bash", "-c", "pip install agentevals-nonexistent-package"], cwd=tmp_path, env=env)
    assert code == 1 and "not installed in this environment: agentevals-nonexistent-package" in out
    code, out = _run(["bash", "-c", "pip install 'agentevals-cli[nosuchextra]'"], cwd=tmp_path, env=env)
    assert code == 1 and "no such extra" in out
    code, out = _run(["bash", "-c", "hatch run test"], cwd=tmp_path, env=env)
    assert code == 1 and "is a hatch script" in out
    assert _run(["bash", "-c", "hatch run python -c 'print(6 * 7)'"], cwd=tmp_path, env=env) == (0, "42\n")


def test_javascript_and_data_blocks(docs_session, tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    page = tmp_path / "p.md"
    page.write_text(textwrap.dedent("""\
        ```js
        if (1 + 1 !== 2) process.exit(3);
        ```
        <!-- docs-test: exit 3 -->
        ```javascript
        process.exit(3);
        ```
        ```jsonl
        {"a": 1}
        {"b": 2}
        ```
        """), "utf-8")
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    run = PageRun(tmp_path)
    for block in parse_blocks(page):
        execute(block, run, docs_session["env"])
    broken = Block(page, 1, "jsonl", '{"a": 1}\n{oops}\n')
    with pytest.raises(json.JSONDecodeError):
        execute(broken, run, docs_session["env"])


def test_pages_run_in_a_copy(docs_session):
    run = _page_run(docs_session, REPO / "README.md")
    assert run.root != REPO and (run.root / "examples" / "traces" / "helm_3.json").is_file()
