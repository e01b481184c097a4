"""API keys: minted at random and kept only as sha256 hashes in the API_KEYS setting.

`python -m shared.http.api_keys mint alice` prints a new key once and the settings entry to add.
"""

from __future__ import annotations

import argparse
import hashlib
import secrets
import sys

from shared.domain.ids import USER_ID


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def mint(user_id: str) -> tuple[str, str]:
    """A fresh key (shown once) and its `user:sha256` entry for API_KEYS."""
    if not USER_ID.fullmatch(user_id):
        raise ValueError("user ids are 1-64 letters, digits, '_', '.', '@' or '-'")
    key = secrets.token_urlsafe(32)  # 256 bits: hashing with a plain sha256 is then enough
    return key, f"{user_id}:{key_digest(key)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shared.http.api_keys")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("mint", help="mint a key for a user").add_argument("user_id")
    args = parser.parse_args(argv)
    try:
        key, entry = mint(args.user_id)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"API key for {args.user_id} (shown once, give it to the user): {key}")
    print(f"Add to API_KEYS (comma-separated): {entry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
