"""The app's icons (web/static/icons, committed) are what web/icons.py draws, at the sizes the
manifest and index.html promise."""

from __future__ import annotations

import importlib.util
import json
import struct

import pytest

from devhost.emulators import REPO

WEB = REPO / "web"


@pytest.fixture(scope="module")
def icons():
    spec = importlib.util.spec_from_file_location("web_icons", WEB / "icons.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("name", ["icon-192.png", "apple-touch-icon.png"])
def test_the_committed_icons_are_what_the_script_draws(icons, offline, name) -> None:
    # The small ones: drawing them takes a fraction of a second and runs every line of the
    # drawing code the large ones use.
    size, maskable = icons.ICONS[name]
    assert (WEB / "static" / "icons" / name).read_bytes() == icons.draw(size, maskable)


def test_every_icon_the_manifest_names_is_there_at_its_size(icons, offline) -> None:
    manifest = json.loads((WEB / "static" / "manifest.webmanifest").read_text())
    purposes = set()
    for icon in manifest["icons"]:
        data = (WEB / "static" / icon["src"]).read_bytes()
        width, height = png_size(data)
        assert icon["sizes"] == f"{width}x{height}"
        assert icons.ICONS[icon["src"].removeprefix("icons/")][0] == width
        purposes.add(icon["purpose"])
    assert {"192x192", "512x512"} <= {i["sizes"] for i in manifest["icons"]}
    assert purposes == {"any", "maskable"}
