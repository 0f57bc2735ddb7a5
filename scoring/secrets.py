"""Credentials the service keeps for its own scoring, encrypted, per workspace.

A harness experiment is scored by the service with no SDK at hand to pass the
judge's key at scoring time; the key given when the experiment was created
(`credentials`, keyed by the judge's `base_url` or an HTTP evaluator's `url`)
is kept here, for the evaluators of that workspace only.

Values are encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under the server's
key: `EVALKIT_SECRET_KEY` (a Fernet key) or `<data-dir>/secret.key`, made at
first use with mode 0600. The store never holds a key in plain text; losing the
key file loses the stored secrets (they are then given again with the next
experiment), never the experiments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from evalkit.store import Store

from .tables import next_version

KEY_FILE = "secret.key"


def secret_box(data_dir: Path, environ: Mapping[str, str] = os.environ) -> Fernet:
    """The server's cipher: EVALKIT_SECRET_KEY, else the key file of the data directory (made once)."""
    given = environ.get("EVALKIT_SECRET_KEY")
    if given:
        try:
            return Fernet(given.encode())
        except ValueError as exc:
            raise ValueError("EVALKIT_SECRET_KEY is not a Fernet key (32 url-safe base64-encoded bytes); make one "
                             "with `python -c 'from cryptography.fernet import Fernet; "
                             "print(Fernet.generate_key().decode())'`") from exc
    path = data_dir / KEY_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(Fernet.generate_key())
    return Fernet(path.read_bytes().strip())


class WorkspaceSecrets:
    def __init__(self, store: Store, box: Fernet) -> None:
        self.store = store
        self.box = box

    def put(self, workspace: str, values: Mapping[str, str], by: str) -> None:
        if not values:
            return
        names = [n.rstrip("/") for n in values]
        sealed = [self.box.encrypt(v.encode()).decode() for v in values.values()]
        n = len(names)
        self.store.insert("workspace_secrets", [[workspace] * n, names, sealed, [False] * n, [by] * n,
                                                [next_version() for _ in names]],
                          ["workspace", "name", "ciphertext", "removed", "created_by", "version"])

    def all(self, workspace: str) -> dict[str, str]:
        """name → value; a value the current key cannot open (the key file was replaced) is left out."""
        rows = self.store.query("SELECT name, ciphertext FROM workspace_secrets FINAL WHERE workspace = {w:String} "
                                "AND NOT removed", {"w": workspace})
        out: dict[str, str] = {}
        for name, sealed in rows:
            try:
                out[name] = self.box.decrypt(sealed.encode()).decode()
            except InvalidToken:
                continue
        return out
