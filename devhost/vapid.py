"""`python -m devhost vapid`: the VAPID key pair Web Push signs with, for local development.

Written into local.settings.json when it has none (the Makefile runs this after making the
file; it is git-ignored, so the private key is never committed). `--print` prints a new pair as
shell assignments and writes nothing: the one-time step that puts a pair into Key Vault for
Azure (docs/deploy.md) reads it from there.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from shared.adapters.vapid import generate_keys

LOCAL_SUBJECT = "mailto:dev@example.com"


def ensure_keys(settings_file: Path) -> bool:
    """Add a pair (and a subject) to the file's Values unless it has one; True if it wrote."""
    settings = json.loads(settings_file.read_text())
    values = settings.setdefault("Values", {})
    if values.get("VAPID_PUBLIC_KEY") and values.get("VAPID_PRIVATE_KEY"):
        return False
    values["VAPID_PUBLIC_KEY"], values["VAPID_PRIVATE_KEY"] = generate_keys()
    values["VAPID_SUBJECT"] = values.get("VAPID_SUBJECT") or LOCAL_SUBJECT
    settings_file.write_text(json.dumps(settings, indent=2) + "\n")
    os.chmod(settings_file, 0o600)  # it holds a private key now
    return True


def main(settings_file: Path, print_only: bool) -> int:
    if print_only:
        public, private = generate_keys()
        print(f"VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}")
        return 0
    if not settings_file.exists():
        print(f"devhost: {settings_file} is missing (make install creates it)", file=sys.stderr)
        return 1
    if ensure_keys(settings_file):
        print(f"devhost: a new VAPID key pair is in {settings_file.name} (Web Push)")
    return 0
