"""BENCHMARKS.md, written from the recorded figures: one table an area, each row naming the run it
comes from. `python -m bench` ends with it; `python -m bench.report` writes it again from what is
recorded: bench/results-baseline.json (committed: the figures BENCHMARKS.md shows), each row
replaced by the same row of a newer run in bench/results/ (`latest.json`, `worker-latest.json`,
`peer-latest.json`), and the result saved back to it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from bench.figures import BARS, holds

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
BASELINE = HERE / "results-baseline.json"
BENCHMARKS = HERE.parent / "BENCHMARKS.md"
HISTORY = "bench/HISTORY.md"

# Every area in the order the file shows them: key, title, and where HISTORY.md tells more.
AREAS = {
    "capture": ("Text capture: the time over the model", "how-each-is-measured"),
    "first_byte": ("First byte", "how-each-is-measured"),
    "worker": ("Worker drain", "against-a-bare-ag-ui-framework-issue-32"),
    "voice": ("Voice notes", "the-events-feeds-reads-issue-19"),
    "recall": ("Recall with 10,000 captures", "the-recall-routes-with-10000-captures"),
    "classification": ("Classifier quality", "classification-quality-issue-20"),
    "ask": ("Ask: answers from the captures (issue 42)", "how-each-is-measured"),
    "mcp": ("MCP: a tool call against its HTTP route (issue 43)", "how-each-is-measured"),
    "digest": ("Daily digest", "the-daily-digest-issue-31"),
    "cold_start": ("Cold start and the package", "what-a-deployment-ships-and-cold-start"),
    "app": ("The capture app (web/)", "the-capture-app-web"),
    "peer": (
        "Side by side with the peer: ours / Agent Framework's AG-UI endpoint = the ratio",
        "against-a-bare-ag-ui-framework-issue-32",
    ),
    "costs": (
        "Costs (counted operations, priced by hand)",
        "operations-per-capture-counted-and-what-they-cost",
    ),
}


class Run(BaseModel):
    """Where a set of figures comes from."""

    date: str  # ISO 8601, UTC
    commit: str
    command: str
    machine: str
    note: str = ""  # the runs it is the median of, the machine's load


# One row as a reader makes it: measure, value, bar, holds? ("yes", "**no**" or "").
Figure = tuple[str, str, str, str]


class Row(BaseModel):
    measure: str
    value: str
    bar: str = ""
    holds: str = ""
    run: str  # a key of `Recorded.runs`


class Recorded(BaseModel):
    """The figures as BENCHMARKS.md shows them: runs by key, rows by area."""

    runs: dict[str, Run]
    areas: dict[str, list[Row]]

    def merged(self, newer: Recorded) -> Recorded:
        """These figures with each of `newer`'s rows in place of the row of the same area and
        measure (or added) unless that row is from a later run, and runs no row names left
        out. (A results file older than the seed's figures changes nothing.)"""
        runs = {**self.runs, **newer.runs}
        areas = {k: list(v) for k, v in self.areas.items()}
        for area, rows in newer.areas.items():
            offered = {r.measure: r for r in rows}
            kept: list[Row] = []
            for row in areas.get(area, []):
                new = offered.pop(row.measure, None)
                later = new is not None and runs[new.run].date >= runs[row.run].date
                kept.append(new if new is not None and later else row)
            areas[area] = kept + list(offered.values())
        named = {r.run for rows in areas.values() for r in rows}
        return Recorded(runs={k: v for k, v in runs.items() if k in named}, areas=areas)


def commit() -> str:
    """The checked-out commit, short, with `+` when the tree has changes; "" outside git."""
    git = ["git", "-C", str(HERE.parent)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True)
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True
        )
    except OSError:
        return ""
    return head.stdout.decode().strip() + ("+" if dirty.stdout.strip() else "")


def machine_text(machine: dict) -> str:
    cpus = f"{machine['cpus']} CPUs ({machine['cpu']})"
    return f"{cpus}, {machine['platform']}, Python {machine['python']}"


_VERDICT = {"yes": "yes", "NO": "**no**"}  # figures.holds' words as the table has them


def _holds(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _p(d: dict, keys: tuple[str, ...] = ("p50", "p95", "p99")) -> str:
    return " / ".join(str(d[k]) for k in keys) + " ms"


def from_bench(report: dict) -> Recorded:
    """The rows a whole `python -m bench` run measures (bench/results/latest.json)."""
    s = report["summary"]
    t, m, c = s["text_offline"], s["text_model_300ms"], s["concurrent_50"]
    cs, v, q, a = s["cold_start"], s["voice_5s"], s["classification"], s["app"]
    ms = cs["import_ms"]
    fine = c["filed"] == 50 and c["duplicated"] == 0
    areas: dict[str, list[Figure]] = {
        "capture": [
            ("outcome - 300 ms model, p50 / p95 / p99", _p(m["server_overhead_ms"]), "", ""),
            ("outcome, offline model, p50 / p95 / p99", _p(t["outcome_ms"]), "", ""),
            ("model calls per capture", str(m["model_calls_per_capture"]), "1", ""),
            ("50 at once: filed / duplicated", f"{c['filed']} / {c['duplicated']}", "50 / 0", ""),
            (
                "50 at once: outcome p50 / p95 / max",
                _p(c["outcome_ms"], ("p50", "p95", "max")),
                "",
                "",
            ),
        ],
        "first_byte": [
            (f"first SSE byte, {name}, p50 / p95 / p99", _p(d["first_byte_ms"]), "≤ 20 ms", "")
            for name, d in (("offline model", t), ("300 ms model", m))
        ],
        "worker": _worker_rows(s["worker"]),
        "voice": [
            ("5 s voice note, upload to outcome (median)", f"{v['median_s']} s", "< 4 s", ""),
            (
                "transcription of 5 s alone (median)",
                f"{s['transcription_5s']['median_s']} s",
                "",
                "",
            ),
        ],
        "classification": [
            *(
                (
                    f"{text} (frozen set)",
                    str(q["bars"][name]),
                    f"{'≥' if kind == 'min' else '≤'} {bar}",
                    _VERDICT.get(holds(name, q["bars"][name]), ""),
                )
                for name, text, bar, kind in BARS
                if bar is not None and q["bars"].get(name) is not None
            ),
            (
                "prompt tokens a classification (estimate): median / max",
                f"{s['prompt_tokens']['median']} / {s['prompt_tokens']['max']}",
                "< 800",
                "",
            ),
        ],
        "cold_start": [
            (
                "`import function_app` / every SDK it uses",
                f"{ms['function_app']} / {ms['framework_and_sdks']} ms = {cs['ratio_all_sdks']}",
                "< 0.5",
                "",
            ),
            ("the Functions framework alone", f"{cs['import_ms']['framework']} ms", "", ""),
        ],
        "app": [
            (
                "JavaScript shipped, gzipped (app.js + sw.js)",
                f"{s['app_js']['gzip_bytes'] / 1024:.1f} KiB",
                "< 100 KiB",
                "",
            ),
            *(
                (
                    f"opened → ready / first outcome, {name}",
                    f"{a[p + 'ready_ms']} / {a[p + 'outcome_ms']} ms",
                    "",
                    "",
                )
                for name, p in (
                    ("cold", "cold_"),
                    ("warm", "warm_"),
                    ("cold, CPU 4x slower", "cpu_4x_cold_"),
                    ("warm, CPU 4x slower", "cpu_4x_warm_"),
                )
            ),
        ],
    }
    verdicts = {
        "model calls per capture": m["model_calls_per_capture"] == 1,
        "50 at once: filed / duplicated": fine,
        "first SSE byte, offline model, p50 / p95 / p99": t["first_byte_ms"]["p99"] <= 20,
        "first SSE byte, 300 ms model, p50 / p95 / p99": m["first_byte_ms"]["p99"] <= 20,
        "5 s voice note, upload to outcome (median)": v["median_s"] < 4,
        "prompt tokens a classification (estimate): median / max": s["prompt_tokens"]["max"] < 800,
        "`import function_app` / every SDK it uses": cs["ratio_all_sdks"] < 0.5,
        "JavaScript shipped, gzipped (app.js + sw.js)": s["app_js"]["gzip_bytes"] < 100 * 1024,
    }
    areas = {
        area: [
            (n, v, b, h or (_holds(verdicts[n]) if n in verdicts else "")) for n, v, b, h in rows
        ]
        for area, rows in areas.items()
    }
    return _recorded("bench", report, areas)


def _worker_rows(w: dict) -> list[Figure]:
    cpu = f"{w['devhost_cpu_ms_per_capture']} / {w.get('emulators_cpu_ms_per_capture', '-')} ms"
    steady = w["per_s_steady"]
    return [
        (
            "500 queued, 300 ms model: captures/s steady",
            str(steady),
            "≥ 100",
            _holds(steady >= 100),
        ),
        ("captures/s from host start", str(w["per_s_from_ready"]), "", ""),
        ("CPU a capture: devhost / emulators", cpu, "", ""),
        ("host peak RSS", f"{w['peak_rss_mib']} MiB", "", ""),
    ]


def from_worker(report: dict) -> Recorded:
    """`python -m bench worker`: the worker's rows."""
    return _recorded("worker", report, {"worker": _worker_rows(report["summary"])})


# The peer's figures ours is held to: at or under the peer's (issue 32).
PEER_BARS = ("time over the model", "server CPU", "50 at once")


def from_peer(report: dict) -> Recorded:
    """`python -m bench peer`: ours, the peer's and ours / the peer's, a row a figure."""
    rows: list[Figure] = []
    for name, (ours, peer, ratio) in report["summary"]["ratios"].items():
        barred = name.startswith(PEER_BARS)
        verdict = _holds(ratio <= 1) if barred else ""
        rows.append((name, f"{ours} / {peer} = **{ratio}**", "≤ 1" if barred else "", verdict))
    return _recorded("peer", report, {"peer": rows})


def _recorded(part: str, report: dict, areas: dict[str, list[Figure]]) -> Recorded:
    key = f"{part} {report['date']}"
    repeat = report.get("repeat", 1)
    notes = [f"median of {repeat} runs"] if repeat > 1 else []
    if "load_average" in report:
        notes.append(
            "load average {:.1f} / {:.1f} / {:.1f} at the end".format(*report["load_average"])
        )
    run = Run(
        date=report["date"],
        commit=report.get("commit") or "not recorded",
        command=f"`{report['command'].strip()}`",
        machine=machine_text(report["machine"]),
        note="; ".join(notes),
    )
    return Recorded(
        runs={key: run},
        areas={
            area: [Row(measure=m, value=v, bar=b, holds=h, run=key) for m, v, b, h in rows]
            for area, rows in areas.items()
        },
    )


# The results each part writes, and what reads them.
READERS = {
    "latest.json": from_bench,
    "worker-latest.json": from_worker,
    "peer-latest.json": from_peer,
}


def recorded(results: Path = RESULTS, baseline: Path = BASELINE) -> Recorded:
    """The seed, each row replaced by a newer run's: the runs in `results`, oldest first."""
    figures = Recorded.model_validate_json(baseline.read_text())
    newer = []
    for name, read in READERS.items():
        if (results / name).exists():
            report = json.loads((results / name).read_text())
            newer.append(read(report))
    for run in sorted(newer, key=lambda r: next(iter(r.runs.values())).date):
        figures = figures.merged(run)
    return figures


def render(figures: Recorded, written: str) -> str:
    """BENCHMARKS.md: the header, the runs numbered oldest first, a table an area."""
    order = sorted(figures.runs, key=lambda k: figures.runs[k].date)
    number = {key: i for i, key in enumerate(order, 1)}
    machines = list(dict.fromkeys(figures.runs[k].machine for k in order))
    letter = {m: chr(ord("A") + i) for i, m in enumerate(machines)}
    lines = [
        "# Benchmarks",
        "",
        "The project's figures against its bars, each the last measured. `make bench`",
        "(= `.venv/bin/python -m bench`: its own stack, three runs, about ten minutes of both",
        "cores) measures the rows of a `make bench` run again and rewrites this file, as do",
        "`python -m bench worker` and `python -m bench peer`; `python -m bench.report`",
        "rewrites it from what is recorded: each row the newest of `bench/results/`",
        "(git-ignored) and the committed seed, `bench/results-baseline.json`. How each figure",
        f"is taken, and every earlier run with its notes: [{HISTORY}]({HISTORY}).",
        "",
        f"Written {written}.",
        "",
        *(f"- Machine {letter[m]}: {m}." for m in machines),
        "",
        "| run | date (UTC) | commit | command | machine, conditions |",
        "|---|---|---|---|---|",
    ]
    for key in order:
        run = figures.runs[key]
        where = letter[run.machine] + (f", {run.note}" if run.note else "")
        lines.append(
            f"| {number[key]} | {_when(run.date)} | {run.commit} | {run.command} | {where} |"
        )
    for area, (title, anchor) in AREAS.items():
        rows = figures.areas.get(area)
        if not rows:
            continue
        lines += ["", f"## {title}", "", f"More: [{HISTORY}]({HISTORY}#{anchor}).", ""]
        lines += ["| measure | value | bar | holds? | run |", "|---|---|---|---|---|"]
        lines += [
            f"| {r.measure} | {r.value} | {r.bar} | {r.holds} | {number[r.run]} |" for r in rows
        ]
    return "\n".join(lines) + "\n"


def _when(date: str) -> str:
    """An ISO date as the table shows it: to the minute, or the day when that is all we know."""
    return date[:16].replace("T", " ")


def write(path: Path = BENCHMARKS, results: Path = RESULTS, baseline: Path = BASELINE) -> Path:
    """BENCHMARKS.md from the recorded figures, and those figures back into the seed, so that
    the two committed files agree and a fresh clone writes the same table."""
    figures = recorded(results, baseline)
    baseline.write_text(figures.model_dump_json(indent=1) + "\n")
    written = f"{_when(datetime.now(UTC).isoformat())} UTC at commit {commit() or 'not recorded'}"
    path.write_text(render(figures, written))
    return path


if __name__ == "__main__":
    print(f"written: {write()}", file=sys.stderr)
