"""The ATIF JSON Schema shipped beside the models, and the command that regenerates it.

`python -m evalkit.trajectory.schema` rewrites `atif.schema.json`; `--check` exits 1
when the committed file differs from what the models generate (CI runs the test
that does the same).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from evalkit.trajectory.atif import Trajectory

SCHEMA_PATH = Path(__file__).with_name("atif.schema.json")
SCHEMA_ID = "https://evalkit.dev/schemas/atif.schema.json"


def generate_schema() -> dict[str, Any]:
    schema = Trajectory.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "ATIF trajectory (v1.0-v1.8)",
        **{key: value for key, value in schema.items() if key != "title"},
    }


def render_schema() -> str:
    return json.dumps(generate_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@cache
def load_schema() -> dict[str, Any]:
    """The committed schema file, the one validation uses."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed schema is out of date")
    args = parser.parse_args(argv)
    rendered = render_schema()
    if args.check:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != rendered:
            print(f"{SCHEMA_PATH} is out of date; run python -m evalkit.trajectory.schema", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.write_text(rendered, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
