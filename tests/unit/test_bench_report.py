"""bench/report.py: BENCHMARKS.md written from a results JSON, over the committed seed."""

import json
from pathlib import Path

from bench import report
from bench.report import AREAS, BASELINE, BENCHMARKS, Recorded, Row, Run, render

MACHINE = {"platform": "Linux-6.18-x86_64", "python": "3.11.7", "cpus": 2, "cpu": "AMD EPYC"}


def _p(p50: float, p95: float, p99: float) -> dict:
    return {"n": 200, "p50": p50, "p95": p95, "p99": p99, "max": p99 + 1}


def _bench_results() -> dict:
    """bench/results/latest.json as `python -m bench` writes it (the keys the report reads)."""
    bars = {
        "clear_classified_right": 0.95,
        "clear_right_bucket": 0.97,
        "clear_asked_right_bucket": 0.02,
        "clear_misunderstood": 0.0,
        "ambiguous_asked": 0.3,
        "unintelligible_misunderstood": 0.96,
        "classified_right": 0.97,
        "other_language_confident_wrong": 0.0,
    }
    app = {
        f"{p}{k}_ms": 100
        for p in ("cold_", "warm_", "cpu_4x_cold_", "cpu_4x_warm_")
        for k in ("ready", "outcome")
    }
    return {
        "date": "2026-12-01T10:00:00+00:00",
        "machine": MACHINE,
        "commit": "abc1234",
        "command": "python -m bench ",
        "repeat": 3,
        "summary": {
            "text_offline": {"first_byte_ms": _p(2.0, 4.0, 8.0), "outcome_ms": _p(30, 50, 70)},
            "text_model_300ms": {
                "first_byte_ms": _p(2.5, 5.0, 25.0),
                "outcome_ms": _p(315, 320, 325),
                "server_overhead_ms": _p(15, 20, 25),
                "model_calls_per_capture": 1.0,
            },
            "concurrent_50": {"filed": 50, "duplicated": 0, "outcome_ms": _p(500, 650, 660)},
            "cold_start": {
                "import_ms": {"function_app": 500, "framework_and_sdks": 1000, "framework": 450},
                "ratio_all_sdks": 0.5,
            },
            "voice_5s": {"median_s": 1.7},
            "transcription_5s": {"median_s": 1.3},
            "worker": {
                "per_s_steady": 150.0,
                "per_s_from_ready": 110.0,
                "peak_rss_mib": 133.0,
                "devhost_cpu_ms_per_capture": 9.5,
                "emulators_cpu_ms_per_capture": 5.0,
            },
            "classification": {"bars": bars},
            "prompt_tokens": {"median": 700, "max": 730},
            "app_js": {"gzip_bytes": 97_000},
            "app": app,
        },
    }


def _seed() -> Recorded:
    old = Run(date="2026-11-22", commit="b5c0d58", command="`make bench`", machine="2 vCPU")
    rows = {
        "first_byte": [
            Row(measure="first SSE byte, 300 ms model, p50 / p95 / p99", value="9 ms", run="old")
        ],
        "recall": [Row(measure="export", value="5.47 s", bar="≤ 10 s", holds="yes", run="old")],
    }
    return Recorded(runs={"old": old}, areas=rows)


def test_a_bench_run_gives_each_area_its_rows_with_the_bars() -> None:
    figures = report.from_bench(_bench_results())
    (key,) = figures.runs
    assert figures.runs[key].commit == "abc1234"
    assert figures.runs[key].command == "`python -m bench`"
    assert figures.runs[key].note == "median of 3 runs"
    rows = {(area, r.measure): r for area, rs in figures.areas.items() for r in rs}
    over = rows["capture", "outcome - 300 ms model, p50 / p95 / p99"]
    assert over.value == "15 / 20 / 25 ms"
    first = rows["first_byte", "first SSE byte, 300 ms model, p50 / p95 / p99"]
    assert (first.bar, first.holds) == ("≤ 20 ms", "**no**")  # p99 25 ms
    assert rows["first_byte", "first SSE byte, offline model, p50 / p95 / p99"].holds == "yes"
    assert rows["cold_start", "`import function_app` / every SDK it uses"].holds == "**no**"
    assert rows["worker", "500 queued, 300 ms model: captures/s steady"].holds == "yes"
    asked = rows[
        "classification", "ambiguous captures asked (MISUNDERSTOOD or LOW_CONFIDENCE) (frozen set)"
    ]
    assert (asked.value, asked.bar, asked.holds) == ("0.3", "≥ 0.9", "**no**")
    assert rows["app", "JavaScript shipped, gzipped (app.js + sw.js)"].value == "94.7 KiB"
    assert {area for area, _ in rows} <= set(AREAS)


def test_a_newer_run_replaces_its_rows_and_keeps_the_others() -> None:
    figures = _seed().merged(report.from_bench(_bench_results()))
    first_byte = {r.measure: r for r in figures.areas["first_byte"]}
    assert (
        first_byte["first SSE byte, 300 ms model, p50 / p95 / p99"].value == "2.5 / 5.0 / 25.0 ms"
    )
    assert figures.areas["recall"][0].run == "old"  # a bench run does not measure recall
    assert set(figures.runs) == {"old", "bench 2026-12-01T10:00:00+00:00"}
    # Results older than the figures they would replace change nothing.
    stale = _bench_results() | {"date": "2026-11-01T10:00:00+00:00"}
    kept = {r.measure: r for r in _seed().merged(report.from_bench(stale)).areas["first_byte"]}
    assert kept["first SSE byte, 300 ms model, p50 / p95 / p99"].run == "old"
    # A run no row names any more is left out.
    seed = _seed()
    seed.areas.pop("recall")
    assert "old" not in seed.merged(report.from_bench(_bench_results())).runs


def test_the_peer_side_by_side_holds_ours_at_or_under_the_peer() -> None:
    peer = {
        "date": "2026-12-01T11:00:00+00:00",
        "machine": MACHINE,
        "load_average": [0.5, 0.6, 0.7],
        "command": "python -m bench peer --repeat 3",
        "repeat": 3,
        "summary": {
            "ratios": {
                "first SSE byte p50": [2.5, 3.0, 0.83],
                "server CPU per capture": [16.0, 15.0, 1.07],
                "50 at once, end of stream, p95": [750, 950, 0.79],
            }
        },
    }
    rows = {r.measure: r for r in report.from_peer(peer).areas["peer"]}
    assert rows["first SSE byte p50"].bar == ""
    assert (rows["server CPU per capture"].value, rows["server CPU per capture"].holds) == (
        "16.0 / 15.0 = **1.07**",
        "**no**",
    )
    assert rows["50 at once, end of stream, p95"].holds == "yes"
    (run,) = report.from_peer(peer).runs.values()
    assert run.note == "median of 3 runs; load average 0.5 / 0.6 / 0.7 at the end"


def test_the_file_says_where_each_row_comes_from(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "latest.json").write_text(json.dumps(_bench_results()))
    baseline = tmp_path / "baseline.json"
    baseline.write_text(_seed().model_dump_json())
    out = report.write(tmp_path / "BENCHMARKS.md", results, baseline)
    text = out.read_text()
    assert text.startswith("# Benchmarks\n")
    assert "[bench/HISTORY.md](bench/HISTORY.md)" in text
    assert "- Machine A: 2 vCPU." in text
    assert "- Machine B: 2 CPUs (AMD EPYC), Linux-6.18-x86_64, Python 3.11.7." in text
    # Runs numbered oldest first; each row names its run.
    assert "| 1 | 2026-11-22 | b5c0d58 | `make bench` | A |" in text
    assert "| 2 | 2026-12-01 10:00 | abc1234 | `python -m bench` | B, median of 3 runs |" in text
    assert "| export | 5.47 s | ≤ 10 s | yes | 1 |" in text
    assert "| outcome - 300 ms model, p50 / p95 / p99 | 15 / 20 / 25 ms |  |  | 2 |" in text
    # The figures shown are saved back as the seed.
    assert Recorded.model_validate_json(baseline.read_text()) == report.recorded(results, baseline)


def test_the_seed_names_a_bench_run_s_rows_as_a_bench_run_does() -> None:
    """Else the next `make bench` would add its row beside the seed's instead of replacing it."""
    seed = Recorded.model_validate_json(BASELINE.read_text())
    fresh = report.from_bench(_bench_results())
    for area, rows in seed.areas.items():
        named = {r.measure for r in fresh.areas.get(area, [])}
        for row in rows:
            if seed.runs[row.run].command == "`make bench`":
                assert row.measure in named, (area, row.measure)


def test_the_committed_file_is_the_committed_seed_rendered() -> None:
    """BENCHMARKS.md and bench/results-baseline.json are committed together: the file is what
    the writer makes of the seed (all but the line saying when it was written)."""
    seed = Recorded.model_validate_json(BASELINE.read_text())
    assert set(seed.areas) == set(AREAS)
    assert {r.run for rows in seed.areas.values() for r in rows} == set(seed.runs)

    def body(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("Written ")]

    assert body(BENCHMARKS.read_text()) == body(render(seed, "then"))
