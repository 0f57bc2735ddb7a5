"""`npm_install_and_run`: record a capture from a Node (JavaScript) framework.

The JavaScript frameworks' `record.py` scripts cannot use a Python virtualenv: each holds its Node program
(`SCRIPT`) and its npm pins (`PINS`), and this module does the rest, the same for all of them:

    with Recording(capture_dir, REPLIES, framework=..., instrumentation=..., packages=list(PINS), ...) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})

It checks that `node` and `npm` exist, writes `package.json` (an ES module project), the script
(`capture.mjs`) and any `files` it runs beside it (a capture's MCP server) into a temporary directory,
`npm install`s the pins there, records the versions npm really installed (`rec.meta["versions"]`, read back
from `node_modules`) and `node --version` (`rec.meta["node"]`), then runs `node capture.mjs` with the Recording's
environment (`rec.env()`: the fake LLM's base URLs, the recorder's OTLP endpoints) plus `env`.

Standard library only, like the rest of `recording/`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .session import Recording


def npm_install_and_run(rec: Recording, pins: Mapping[str, str], script: str, *,
                        env: Mapping[str, str] | None = None, files: Mapping[str, Path] | None = None) -> None:
    """Install `pins` (npm name -> exact version) in a fresh project, then run `script` there under `rec`.

    `files` (name in the project -> source file) are copied beside the script: a module Node runs from the project
    resolves its imports from the project's `node_modules`, which a file left in the capture folder could not."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise SystemExit("node and npm are needed to record this capture")
    with tempfile.TemporaryDirectory(prefix=f"cap-{rec.capture_dir.name}-") as tmp:
        project = Path(tmp)
        (project / "package.json").write_text(json.dumps({"name": "capture", "private": True, "type": "module"}))
        (project / "capture.mjs").write_text(script)
        for name, source in (files or {}).items():
            shutil.copyfile(source, project / name)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                        *(f"{name}@{version}" for name, version in pins.items())], cwd=project, check=True)
        rec.meta["versions"] = installed_versions(project, pins)
        rec.meta["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True,
                                          check=True).stdout.strip()
        rec.env()
        subprocess.run(["node", "capture.mjs"], cwd=project, check=True, env={**os.environ, **(env or {})})


def installed_versions(project: Path, packages: Mapping[str, str]) -> dict[str, str | None]:
    """The version of each package in `project/node_modules` (None: not installed there)."""
    versions: dict[str, str | None] = {}
    for package in packages:
        manifest = project / "node_modules" / package / "package.json"
        versions[package] = json.loads(manifest.read_text())["version"] if manifest.exists() else None
    return versions
