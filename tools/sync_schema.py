"""Regenerate the JSON Schemas: the wire protocol (byte-identical in both packages) and ``run -o json``.

    python tools/sync_schema.py           write the files
    python tools/sync_schema.py --check   exit 1 if any shipped file differs from what would be written

The SDK's pydantic models are the source; fields marked ``x-protocol-since`` are left out of the
schemas of older versions. ``tests/test_wire_schema.py`` checks the CLI's models produce the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK_SRC = ROOT / "packages/agentevals-evaluator-sdk/src"
TARGETS = (
    SDK_SRC / "agentevals_evaluator_sdk/schema",
    ROOT / "packages/agentevals-cli/src/agentevals/protocol/schema",
)


RESULT_SCHEMA = ROOT / "packages/agentevals-cli/src/agentevals/report/schema/run_result.v1.json"


def render_result_schema() -> str:
    """The ``agentevals run -o json`` document schema, from the CLI's result models."""
    sys.path.insert(0, str(ROOT / "packages/agentevals-cli/src"))
    from agentevals.report.json import result_json_schema

    return json.dumps(result_json_schema(), indent=2) + "\n"


def render_all() -> dict[str, str]:
    """File name → file text for every (document, version) pair."""
    sys.path.insert(0, str(SDK_SRC))
    from agentevals_evaluator_sdk import SUPPORTED_VERSIONS, EvalInput, EvalResult
    from agentevals_evaluator_sdk.protocol import schema_for_version

    files = {}
    for doc, model in (("eval_input", EvalInput), ("eval_result", EvalResult)):
        for version in SUPPORTED_VERSIONS:
            schema = schema_for_version(model.model_json_schema(), version)
            schema = {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": f"https://agentevals.dev/schema/{doc}.v{version}.json",
                "x-protocol-version": version,
                **schema,
            }
            files[f"{doc}.v{version}.json"] = json.dumps(schema, indent=2, sort_keys=False) + "\n"
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report differences")
    args = parser.parse_args()
    files = render_all()
    stale = []
    for target in TARGETS:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            path = target / name
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(path.relative_to(ROOT))
                if not args.check:
                    path.write_text(text, "utf-8")
    result_text = render_result_schema()
    if not RESULT_SCHEMA.exists() or RESULT_SCHEMA.read_text("utf-8") != result_text:
        stale.append(RESULT_SCHEMA.relative_to(ROOT))
        if not args.check:
            RESULT_SCHEMA.parent.mkdir(parents=True, exist_ok=True)
            RESULT_SCHEMA.write_text(result_text, "utf-8")
    if args.check and stale:
        print("stale schema files (run: python tools/sync_schema.py):", *map(str, stale), sep="\n  ")
        return 1
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
