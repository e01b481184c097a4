"""`python -m devhost vapid`, as `make install` runs it: a VAPID key pair written into
local.settings.json once (never over one that is there), the file readable by its owner only;
`--print` a new pair for the one-time step in Azure, writing nothing."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

from shared.adapters.vapid import load_keys
from testkit.support import REPO, devhost_setup, local_values


def vapid(app_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return devhost_setup("vapid", app_dir, *args)


values = local_values


def test_a_pair_is_written_into_local_settings_once(tmp_path: Path) -> None:
    shutil.copy(REPO / "local.settings.sample.json", tmp_path / "local.settings.json")
    sample = values(tmp_path)
    assert sample["VAPID_PUBLIC_KEY"] == sample["VAPID_PRIVATE_KEY"] == ""  # nothing committed

    first = vapid(tmp_path)
    assert first.returncode == 0, first.stderr
    written = values(tmp_path)
    keys = load_keys(written["VAPID_PUBLIC_KEY"], written["VAPID_PRIVATE_KEY"])
    assert keys.public_key == written["VAPID_PUBLIC_KEY"]
    assert written["VAPID_SUBJECT"].startswith("mailto:")
    # Everything else is as the sample has it.
    assert {k: v for k, v in written.items() if not k.startswith("VAPID_")} == {
        k: v for k, v in sample.items() if not k.startswith("VAPID_")
    }
    assert written["VAPID_PRIVATE_KEY"] not in first.stdout + first.stderr
    mode = stat.S_IMODE((tmp_path / "local.settings.json").stat().st_mode)
    assert mode == 0o600

    again = vapid(tmp_path)
    assert again.returncode == 0 and again.stdout == ""
    assert values(tmp_path) == written  # a pair that is there stays


def test_print_gives_a_new_pair_and_writes_nothing(tmp_path: Path) -> None:
    printed = vapid(tmp_path, "--print")
    assert printed.returncode == 0, printed.stderr
    pair = dict(line.split("=", 1) for line in printed.stdout.splitlines())
    load_keys(pair["VAPID_PUBLIC_KEY"], pair["VAPID_PRIVATE_KEY"])
    assert list(tmp_path.iterdir()) == []


def test_without_local_settings_it_says_what_to_run(tmp_path: Path) -> None:
    missing = vapid(tmp_path)
    assert missing.returncode == 1 and "make install" in missing.stderr
