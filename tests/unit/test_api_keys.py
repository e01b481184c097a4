"""Minting API keys and reading API_KEYS: hashes only, bad entries ignored without echoing them."""

from __future__ import annotations

import logging

import pytest
from starlette.requests import Request

from shared.http import api_keys
from shared.http.auth import authenticate
from shared.http.problems import Problem
from shared.settings import get_settings


def request_with(headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": raw})


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch):
    def use(value: str, **env: str) -> None:
        monkeypatch.setenv("API_KEYS", value)
        for name, setting in env.items():
            monkeypatch.setenv(name, setting)
        monkeypatch.setenv("COSMOS_ENDPOINT", "https://127.0.0.1:8081")  # required, unused here
        get_settings.cache_clear()

    yield use
    get_settings.cache_clear()


def test_a_minted_key_authenticates_its_user_and_only_the_hash_is_kept(keys) -> None:
    alice_key, alice = api_keys.mint("alice")
    bob_key, bob = api_keys.mint("bob@example.com")
    assert alice_key not in alice and alice == f"alice:{api_keys.key_digest(alice_key)}"
    keys(f"{alice},{bob}")
    assert authenticate(request_with({"X-API-Key": alice_key})) == "alice"
    assert authenticate(request_with({"Authorization": f"Bearer {bob_key}"})) == "bob@example.com"
    with pytest.raises(Problem) as refused:
        authenticate(request_with({"X-API-Key": alice_key + "x"}))
    assert refused.value.status == 401


def test_keys_are_long_and_never_repeat() -> None:
    minted = {api_keys.mint("u")[0] for _ in range(50)}
    assert len(minted) == 50 and min(len(k) for k in minted) >= 43


@pytest.mark.parametrize("user_id", ["", "a/b", "../x", "a b", "x" * 65, "ünï"])
def test_user_ids_that_could_not_be_a_blob_folder_are_refused(user_id) -> None:
    with pytest.raises(ValueError):
        api_keys.mint(user_id)


def test_bad_api_keys_entries_are_ignored_without_echoing_them(keys, caplog) -> None:
    good_key, good = api_keys.mint("carol")
    keys(f"pasted-a-raw-key-by-mistake,dave:nothex,{good},../evil:{'0' * 64}")
    with caplog.at_level(logging.WARNING, logger="shared.http.auth"):
        assert authenticate(request_with({"X-API-Key": good_key})) == "carol"
    assert "entry 1" in caplog.text and "entry 2" in caplog.text and "entry 4" in caplog.text
    assert "pasted-a-raw-key" not in caplog.text and "nothex" not in caplog.text


def test_the_cli_prints_the_key_once_and_the_settings_entry(capsys) -> None:
    assert api_keys.main(["mint", "erin"]) == 0
    out = capsys.readouterr().out
    key = out.split("): ", 1)[1].splitlines()[0]
    assert f"erin:{api_keys.key_digest(key)}" in out
    assert api_keys.main(["mint", "bad/user"]) == 2


def test_the_platform_principal_counts_only_when_platform_auth_is_on(keys) -> None:
    key, entry = api_keys.mint("alice")
    spoofed = {"X-MS-CLIENT-PRINCIPAL-ID": "alice"}
    keys(entry)
    with pytest.raises(Problem):
        authenticate(request_with(spoofed))  # anyone can send the header to a bare app
    keys(entry, WEBSITE_AUTH_ENABLED="True")
    principal = "5f0c7a1e-0d7b-4a40-9c77-2f3b1c1d9e10"
    assert authenticate(request_with({"X-MS-CLIENT-PRINCIPAL-ID": principal})) == principal
    # The principal wins over a key sent alongside; a key alone still works.
    both = {"X-MS-CLIENT-PRINCIPAL-ID": principal, "X-API-Key": key}
    assert authenticate(request_with(both)) == principal
    assert authenticate(request_with({"X-API-Key": key})) == "alice"
