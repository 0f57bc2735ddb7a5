"""The `evalkit` command line.

Each command group lives in its own module with a `register(subparsers)`
function; add a module to COMMAND_MODULES to add a group.
Exit codes: 0 success, 1 the request failed (the message says why), 2 usage
error, 3 the service could not be reached.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from evalkit.cli.http import CliError

COMMAND_MODULES = [
    "evalkit.cli.serve",
    "evalkit.cli.admin",
    "evalkit.cli.sessions",
    "evalkit.cli.login",
    "evalkit.cli.datasets",
    "evalkit.cli.experiments",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalkit", description="Measure LLM agents: receive their "
                                     "OpenTelemetry spans, read sessions as ATIF trajectories, run experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"evalkit: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
