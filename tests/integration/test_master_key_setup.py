"""`python -m devhost master-key`, as `make install` runs it: the devhost's master key (for its
admin endpoint) written into local.settings.json once, never over one that is there, the file
readable by its owner only; printed on stdout for a recipe to read, nothing else there."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

from testkit.support import REPO, devhost_setup, local_values


def master_key(app_dir: Path) -> subprocess.CompletedProcess[str]:
    return devhost_setup("master-key", app_dir)


values = local_values


def test_a_key_is_written_into_local_settings_once_and_printed(tmp_path: Path) -> None:
    shutil.copy(REPO / "local.settings.sample.json", tmp_path / "local.settings.json")
    sample = values(tmp_path)
    assert sample["DEVHOST_MASTER_KEY"] == ""  # nothing committed

    first = master_key(tmp_path)
    assert first.returncode == 0, first.stderr
    written = values(tmp_path)
    key = written["DEVHOST_MASTER_KEY"]
    assert len(key) >= 40 and first.stdout == key + "\n"
    assert key not in first.stderr
    assert {k: v for k, v in written.items() if k != "DEVHOST_MASTER_KEY"} == {
        k: v for k, v in sample.items() if k != "DEVHOST_MASTER_KEY"
    }
    mode = stat.S_IMODE((tmp_path / "local.settings.json").stat().st_mode)
    assert mode == 0o600

    again = master_key(tmp_path)
    assert again.returncode == 0 and again.stdout == key + "\n" and again.stderr == ""
    assert values(tmp_path) == written  # a key that is there stays


def test_without_local_settings_it_says_what_to_run(tmp_path: Path) -> None:
    missing = master_key(tmp_path)
    assert missing.returncode == 1 and "make install" in missing.stderr
