"""The `evalkit` command line.

Each command group lives in its own module with a `register(subparsers)`
function; add a module to COMMAND_MODULES to add a group.
Exit codes: 0 success, 1 the request failed (the message says why), 2 usage
error, 3 the service could not be reached. Under `--json` a failure is a JSON
object `{"error": {...}}` on stdout with the same exit code (evalkit/cli/http.py).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from evalkit.cli.http import CliError, error_json

COMMAND_MODULES = [
    "evalkit.cli.serve",
    "evalkit.cli.admin",
    "evalkit.cli.members",
    "evalkit.cli.sessions",
    "evalkit.cli.login",
    "evalkit.cli.datasets",
    "evalkit.cli.run",
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
        code = int(args.func(args))
        sys.stdout.flush()  # inside the try: a reader gone before the last buffered line is a BrokenPipeError
        return code
    except CliError as exc:
        if getattr(args, "json", False):
            print(error_json(exc))
        else:
            print(f"evalkit: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `evalkit … | head`: the reader has all it wanted. Point stdout at /dev/null so that the
        # interpreter's final flush does not raise again, and end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
