"""Dependencies declared next to an evaluator: ``requirements.txt`` → cached venv, ``package.json`` → npm.

Python: a ``requirements.txt`` beside a ``.py`` evaluator gets a venv under
``<cache>/venvs/<hash>``, keyed by the file's content, the CLI's Python version and its
site-packages. The requirements are installed into the venv first (with ``uv`` when it is on PATH,
else ``venv`` + ``pip``); then a ``.pth`` file appends the CLI's own site-packages *after* the venv's,
so ``agentevals_evaluator_sdk`` (a dependency of agentevals-cli) imports in the venv while the
evaluator's pinned versions win. (``--system-site-packages`` is not used: a venv made from inside
another venv would see the base interpreter's packages, not the CLI's.) A venv is ready only after a
marker file is written; a half-built one (timeout, crash) is rebuilt from scratch.

Node: a ``package.json`` beside a ``.js``/``.ts`` evaluator → ``npm ci`` (with a lock file) or
``npm install`` into ``<cache>/node/<hash>`` (keyed by package.json and package-lock.json, ``file:``
dependencies made absolute), once; the evaluator's ``node_modules`` becomes a link to it, so Node's
resolution (CommonJS and ESM) finds the packages. A ``node_modules`` the author installed is used as is.
A ``.ts`` evaluator that Node cannot run by itself (Node < 22.6) and that brings no tsx gets the tsx
that npm installs once per machine under ``<cache>/node/tsx-<hash>`` (offline: that evaluator's ERROR).

Both run under a file lock (concurrent runs build once) and within the setup deadline
(``AGENTEVALS_SETUP_TIMEOUT``, 600 s), which the caller gives them instead of the evaluation's ``timeout``
(``commands.set_up``): a slow install on a busy machine must not turn the evaluation into an ERROR.
"""

from __future__ import annotations

import logging
import shutil
import site
import sys
from pathlib import Path

from .cache import cache_root, content_hash, locked
from .commands import ProgramFailure, run_command
from .deadline import Deadline

__all__ = ["TSX_VERSION", "check_requirements", "ensure_node_modules", "ensure_python_env", "ensure_tsx",
           "requirement_lines", "venv_python"]

TSX_VERSION = "^4.7.0"
"""The tsx npm installs for ``.ts`` evaluators that Node cannot run by itself (and the scaffold pins)."""

logger = logging.getLogger(__name__)

_READY = ".agentevals-ready"
_NPM_MARKER = ".agentevals-installed"


def venv_python(venv: Path) -> Path:
    """The interpreter of a venv."""
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _host_site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        user = site.getusersitepackages()
        if Path(user).is_dir():
            dirs.append(user)
    return dirs


async def _step(cmd: list[str], *, what: str, cwd: Path, deadline: Deadline) -> None:
    deadline.phase = what
    result = await run_command(cmd, deadline=deadline, cwd=cwd)
    if result.returncode != 0:
        output = result.stderr if result.stderr.strip() else result.stdout
        last = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
        cause = f": {last[-1].strip()[:300]}" if last else ""
        raise ProgramFailure(f"{what} failed (exit code {result.returncode}){cause}", stderr=output)


async def ensure_python_env(requirements: Path, *, deadline: Deadline) -> Path:
    """Return the Python of the cached venv for ``requirements``, creating it on first use."""
    site_dirs = _host_site_dirs()
    key = content_hash(requirements.read_bytes(), sys.version, sys.executable, *site_dirs)
    venv = cache_root() / "venvs" / key
    python = venv_python(venv)
    if (venv / _READY).is_file():
        return python
    async with locked(f"venv-{key}", deadline):
        if (venv / _READY).is_file():
            return python
        logger.warning(
            "Creating a Python environment for %s (first use of this requirements.txt; cached in %s)",
            requirements,
            venv,
        )
        if venv.exists():
            shutil.rmtree(venv)
        venv.parent.mkdir(parents=True, exist_ok=True)
        uv = shutil.which("uv")
        what = f"installing {requirements}"
        if uv:
            await _step([uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
                        what="creating the Python environment", cwd=requirements.parent, deadline=deadline)
            await _step([uv, "pip", "install", "--quiet", "--python", str(python), "-r", str(requirements)],
                        what=what, cwd=requirements.parent, deadline=deadline)
        else:
            await _step([sys.executable, "-m", "venv", str(venv)],
                        what="creating the Python environment", cwd=requirements.parent, deadline=deadline)
            await _step([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                         "-r", str(requirements)], what=what, cwd=requirements.parent, deadline=deadline)
        _link_host_packages(venv, site_dirs)
        (venv / _READY).write_text(str(requirements) + "\n", "utf-8")
        logger.warning("Python environment ready: %s", venv)
    return python


def _link_host_packages(venv: Path, site_dirs: list[str]) -> None:
    """Append the CLI's site-packages to the venv's path (after its own), so the SDK imports."""
    candidates = sorted(venv.glob("lib/python*/site-packages")) or [venv / "Lib" / "site-packages"]
    # One line, run by site.py at start-up (no comprehension: it would not see `site` there).
    line = f"import site; list(map(site.addsitedir, {site_dirs!r}))\n"
    (candidates[0] / "_agentevals_host.pth").write_text(line, "utf-8")


def _node_manifest(directory: Path) -> tuple[bytes, bytes]:
    """package.json with ``file:`` dependencies made absolute (they are installed from elsewhere), and the lock."""
    import json

    manifest = json.loads((directory / "package.json").read_text("utf-8"))
    for section in ("dependencies", "devDependencies", "optionalDependencies"):
        for name, spec in (manifest.get(section) or {}).items():
            if isinstance(spec, str) and spec.startswith("file:") and not Path(spec[5:]).is_absolute():
                manifest[section][name] = "file:" + str((directory / spec[5:]).resolve())
    lock = directory / "package-lock.json"
    return json.dumps(manifest, indent=2).encode(), lock.read_bytes() if lock.is_file() else b""


async def ensure_node_modules(directory: Path, *, deadline: Deadline) -> None:
    """Give ``directory`` the dependencies of its package.json, from a cached environment.

    The environment lives under ``<cache>/node/<hash>`` (hash of package.json and package-lock.json), is
    installed once under a file lock, and ``directory/node_modules`` becomes a link to it. A real
    ``node_modules`` directory the author installed is left alone.
    """
    link = directory / "node_modules"
    if link.is_dir() and not link.is_symlink() and not (link / _NPM_MARKER).is_file():
        return  # the author manages their own node_modules
    manifest, lock = _node_manifest(directory)
    env = cache_root() / "node" / content_hash(manifest, lock)
    marker = env / "node_modules" / _NPM_MARKER
    if not marker.is_file():
        async with locked(f"npm-{env.name}", deadline):
            if not marker.is_file():
                npm = shutil.which("npm")
                if not npm:
                    raise ProgramFailure(f"npm not found on PATH (needed to install {directory / 'package.json'})")
                shutil.rmtree(env, ignore_errors=True)  # a half-built one from a timeout or crash
                env.mkdir(parents=True)
                (env / "package.json").write_bytes(manifest)
                if lock:
                    (env / "package-lock.json").write_bytes(lock)
                logger.warning("Installing npm packages for %s into %s (first use of this package.json)",
                               directory, env)
                await _step([npm, "ci" if lock else "install", "--no-audit", "--no-fund", "--loglevel=error"],
                            what=f"npm {'ci' if lock else 'install'} for {directory / 'package.json'}", cwd=env,
                            deadline=deadline)
                (env / "node_modules").mkdir(exist_ok=True)
                marker.write_text(content_hash(manifest, lock) + "\n", "utf-8")
    target = env / "node_modules"
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():  # an in-place install made by an older agentevals
        shutil.rmtree(link)
    link.symlink_to(target, target_is_directory=True)


_TSX_FAILURES: dict[Path, ProgramFailure] = {}
"""tsx installs that failed in this process (offline), by environment: not retried for every case."""


async def ensure_tsx(*, deadline: Deadline, why: str = "") -> Path:
    """The ``tsx`` executable npm installed into the cache (installing it on first use, under a lock).

    Raises ``ProgramFailure`` saying why tsx was needed and why the install failed (npm missing, offline).
    """
    import json

    manifest = json.dumps({"private": True, "description": "tsx for agentevals' .ts evaluators",
                           "dependencies": {"tsx": TSX_VERSION}}, indent=2).encode()
    env = cache_root() / "node" / f"tsx-{content_hash(manifest)}"
    tsx = env / "node_modules" / ".bin" / ("tsx.cmd" if sys.platform == "win32" else "tsx")
    marker = env / "node_modules" / _NPM_MARKER
    if marker.is_file() and tsx.is_file():
        return tsx
    if env in _TSX_FAILURES:
        raise _TSX_FAILURES[env]
    prefix = f"{why.rstrip('.')}; " if why else ""
    npm = shutil.which("npm")
    if not npm:
        raise ProgramFailure(f"{prefix}npm not found on PATH to install tsx {TSX_VERSION}")
    async with locked(f"npm-{env.name}", deadline):
        if marker.is_file() and tsx.is_file():
            return tsx
        if env in _TSX_FAILURES:  # failed while this evaluation waited for the lock (cases run side by side)
            raise _TSX_FAILURES[env]
        shutil.rmtree(env, ignore_errors=True)  # a half-built one from a timeout or crash
        env.mkdir(parents=True)
        (env / "package.json").write_bytes(manifest)
        logger.warning("Installing tsx %s with npm into %s (once per machine: Node cannot run .ts by itself)",
                       TSX_VERSION, env)
        try:
            await _step([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                        what=f"npm install tsx {TSX_VERSION}", cwd=env, deadline=deadline)
        except ProgramFailure as exc:
            failure = ProgramFailure(f"{prefix}{exc}", stderr=exc.stderr)
            _TSX_FAILURES[env] = failure
            raise failure from None
        marker.write_text(TSX_VERSION + "\n", "utf-8")
    return tsx


_VCS_PREFIXES = ("git+", "hg+", "svn+", "bzr+")
_ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def _requirement_problem(line: str) -> str | None:
    tokens = line.split()
    if tokens[0].startswith("-"):
        return "installer options are not allowed"
    if any(tok.startswith("-") and not tok.startswith("--hash=") for tok in tokens[1:]):
        return "only --hash options may follow a requirement"
    if "://" in line or line.lower().startswith(_VCS_PREFIXES) or "@" in line:
        return "URL, VCS and direct references are not allowed"
    if tokens[0].startswith((".", "/", "~")) or tokens[0].lower().endswith(_ARCHIVES):
        return "local paths and archives are not allowed"
    if "${" in line:
        return "environment variable references are not allowed"
    return None


def requirement_lines(requirements: Path) -> list[tuple[int, str]]:
    """``(line number, requirement)`` of a requirements.txt, comments and blank lines left out.

    pip's rule: ``#`` at the start of a line or after a space or tab starts a comment (``pkg @ url#frag``
    keeps its fragment). The one reader of the format: the venv check below and Ray's ``pip`` list."""
    lines = []
    for number, raw in enumerate(requirements.read_text("utf-8").splitlines(), start=1):
        line = raw.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append((number, line))
    return lines


def check_requirements(requirements: Path) -> None:
    """Allow only plain index requirements in a *downloaded* evaluator's requirements.txt.

    Refuses installer options (another index, nested files, editable installs), URL/VCS/path
    requirements and ``${VAR}`` references, so a fetched file cannot redirect the installer.
    Raises ``ProgramFailure`` naming the line.
    """
    for number, raw in enumerate(requirements.read_text("utf-8").splitlines(), start=1):
        if raw.rstrip().endswith("\\"):
            raise ProgramFailure(f"{requirements.name} line {number}: line continuations are not allowed")
    for number, line in requirement_lines(requirements):
        problem = _requirement_problem(line)
        if problem:
            raise ProgramFailure(f"downloaded {requirements.name} line {number}: {problem} ({line!r})")
