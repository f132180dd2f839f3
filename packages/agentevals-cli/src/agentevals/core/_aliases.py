"""Old module paths (before the 0.12 layout) answered as aliases of the modules that replaced them.

    import agentevals.redact                      # the module object agentevals.core.redact
    from agentevals.gates import check_gates      # from agentevals.results.gates

No file stays at an old path, so git follows each move; a finder at the end of ``sys.meta_path`` answers
for the old names by importing the new module and putting it in ``sys.modules`` under the old name too
(what a shim module doing ``sys.modules[__name__] = new`` would do): ``monkeypatch.setattr`` by old path
and private names keep working. Deprecated: import the new paths (a test fails when the repository
itself imports an old one).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc costs ~20 ms to import; the import system needs only the methods
    from importlib.abc import Loader as _Loader
    from importlib.abc import MetaPathFinder as _Finder
else:
    _Loader = _Finder = object

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    # old path                        new path
    "agentevals._files": "agentevals.core._files",
    "agentevals._registry": "agentevals.core._registry",
    "agentevals._startup": "agentevals.core._startup",
    "agentevals._validation": "agentevals.core._validation",
    "agentevals._yaml": "agentevals.core._yaml",
    "agentevals.limits": "agentevals.core.limits",
    "agentevals.redact": "agentevals.core.redact",
    "agentevals._transcript": "agentevals.results._transcript",
    "agentevals.compare": "agentevals.results.compare",
    "agentevals.gates": "agentevals.results.gates",
    "agentevals.repetitions": "agentevals.results.repetitions",
    "agentevals.scoring": "agentevals.results.scoring",
    "agentevals.llm": "agentevals.evaluators.llm",
    "agentevals.python_evaluators": "agentevals.evaluators.python",
    "agentevals.otel_events": "agentevals.report.otel_events",
    "agentevals._otlp_export": "agentevals.live._otlp_export",
    "agentevals.live_session": "agentevals.live.session",
    "agentevals.execution.adapter": "agentevals.evaluators.backend",
    "agentevals.runner": "agentevals.engine",
    "agentevals.options": "agentevals.engine.options",
    "agentevals.consumers": "agentevals.engine.consumers",
}
"""Old module name → the module that replaced it (deprecated aliases)."""


class _AliasLoader(_Loader):
    def create_module(self, spec: ModuleSpec) -> None:
        return None  # a placeholder module; exec_module swaps in the real one

    def exec_module(self, module: ModuleType) -> None:
        # The import system returns whatever sys.modules holds under the name once exec_module is done.
        sys.modules[module.__name__] = importlib.import_module(MOVED[module.__name__])


class _AliasFinder(_Finder):
    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None,
                  ) -> ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return ModuleSpec(fullname, _AliasLoader())


def install() -> None:
    """Answer the old module paths (idempotent; ``import agentevals`` calls it)."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
