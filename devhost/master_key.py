"""The host's master key, which the admin endpoint (`/admin/functions/<name>`) asks for in
`x-functions-key` (or `?code=`), as Azure does. `func start` asks for none, so anything on the
machine could run any function by hand; the devhost does not.

The key is the app setting DEVHOST_MASTER_KEY: `python -m devhost master-key` puts a new one
into local.settings.json when it has none (`make install` runs it; the file is git-ignored, so
the key is never committed) and prints it, for a recipe to read:
`MASTER_KEY=$(.venv/bin/python -m devhost master-key)`.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import sys
from pathlib import Path

SETTING = "DEVHOST_MASTER_KEY"
HEADER = "x-functions-key"


def new_key() -> str:
    # As the host's own keys: 32 random bytes, URL-safe base64.
    return secrets.token_urlsafe(32)


def configured() -> str | None:
    """The key the host was given (environment first, then local.settings.json's Values,
    which the host loads into the environment without overriding it)."""
    return os.environ.get(SETTING) or None


def matches(given: str | None, key: str | None) -> bool:
    """Whether `given` is the key, compared in constant time; never with no key set."""
    if not key or not given:
        return False
    return hmac.compare_digest(given.encode(), key.encode())


def ensure_key(settings_file: Path) -> tuple[str, bool]:
    """The file's key, added to its Values if it has none; and whether it wrote."""
    settings = json.loads(settings_file.read_text())
    values = settings.setdefault("Values", {})
    if values.get(SETTING):
        return values[SETTING], False
    values[SETTING] = new_key()
    settings_file.write_text(json.dumps(settings, indent=2) + "\n")
    os.chmod(settings_file, 0o600)  # it holds a secret
    return values[SETTING], True


def main(settings_file: Path) -> int:
    if not settings_file.exists():
        print(f"devhost: {settings_file} is missing (make install creates it)", file=sys.stderr)
        return 1
    key, wrote = ensure_key(settings_file)
    if wrote:
        print(
            f"devhost: a new master key is in {settings_file.name} (admin endpoint)",
            file=sys.stderr,
        )
    print(key)
    return 0
