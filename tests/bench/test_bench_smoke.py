"""The benchmark harness, end to end at its smallest sizes (correctness of the harness, not timing).

Each suite starts its own embedded PostgreSQL and `memseek serve` subprocess, loads a tiny corpus
through `POST /records`, runs a handful of queries and writes its JSON. Needs only `.[test]`
(which carries rank-bm25 and pytrec-eval-terrier for the quality suite) and the evaluation data
in `../shared/data`. A few pure pieces (generator, evidence rules, metrics) are checked directly.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench import CATALOG_DIR
from bench import data_dir
from bench.__main__ import main
from bench.baselines import parse_tsvector
from bench.corpus import CorpusSpec
from bench.corpus import generate
from bench.datasets import Dataset
from bench.datasets import Query
from bench.datasets import normalise_evidence
from bench.datasets import session_time
from bench.latency import _around
from bench.latency import render
from bench.metrics import evaluate
from bench.quality import BLENDED_VIEW
from bench.quality import blended_rank
from bench.quality import score


def test_mini_data_reads_like_the_shared_data(tmp_path: Path) -> None:
    from bench.datasets import load_locomo
    from bench.datasets import load_scifact

    root = write_mini_data(tmp_path)
    scifact, locomo = load_scifact(root), load_locomo(root)
    assert (len(scifact.docs), len(scifact.queries)) == (20, 10)
    assert (len(locomo.docs), len(locomo.queries)) == (10, 10)


def run_suite(tmp_path: Path, *argv: str) -> dict[str, Any]:
    """Run `python -m bench ARGV` in-process; the JSON it wrote."""
    assert main([*argv, "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("*.json")
    return json.loads(path.read_text())


def test_corpus_is_deterministic_and_shaped() -> None:
    spec = CorpusSpec(2000, seed=3)
    corpus = generate(spec)
    assert corpus == generate(spec)
    assert len(corpus.records) == 2000
    kinds = {(r.collection, r.type, r.status) for r in corpus.records}
    assert {
        ("memories", "fact", "draft"),
        ("memories", "meeting", "active"),
        ("links", "link", "active"),
        ("reflections", "reflection", "active"),
    } <= kinds
    assert all(50 <= len(r.text) <= 600 for r in corpus.records if r.collection != "links")
    assert any(r.retract for r in corpus.records)
    keyed = [r for r in corpus.records if r.key is not None]
    assert len({(r.entity, r.key, r.status) for r in keyed}) < len(keyed), "some slots are superseded"
    assert sum(corpus.current_flags()) < len(corpus.records)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(["D1:3"], ["D1:3"], id="plain"),
        pytest.param(["D8:6; D9:17"], ["D8:6", "D9:17"], id="semicolon"),
        pytest.param(["D:11:26"], ["D11:26"], id="extra-colon"),
        pytest.param(["D30:05"], ["D30:5"], id="leading-zero"),
        pytest.param(["D4:1 D4:2"], ["D4:1", "D4:2"], id="whitespace"),
    ],
)
def test_locomo_evidence_normalisation(raw: list[str], expected: list[str]) -> None:
    assert normalise_evidence(raw) == expected


def test_locomo_session_time() -> None:
    assert session_time("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"


def test_metrics_follow_the_ranked_order() -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    result = evaluate(qrels, {"q1": ["a", "x", "b"]}, ["ndcg@10", "recall@10"])
    assert result["recall@10"] == pytest.approx(0.5)  # q2 returned nothing: counts as 0
    assert result["ndcg@10"] == pytest.approx((1 + 1 / 2) / (1 + 1 / 1.5849625) / 2, rel=1e-6)


def test_locomo_groups_read_in_category_order() -> None:
    """Categories 1 to 4, their union `1-4`, then the adversarial 5 (not text order: 1, 1-4, 2)."""
    queries = tuple(Query(f"q{c}", "text", {"d": 1}, category=c) for c in (2, 5, 1, 3))
    ranked = {q.query_id: ["d"] for q in queries}
    assert list(score(Dataset("locomo", (), queries), ranked)) == ["1", "2", "3", "1-4", "5"]


def test_blended_formula_is_the_documented_one() -> None:
    """The suites measure, as `blended`, exactly the hybrid formula docs/catalog.md documents, in
    both views: figures quoted for one formula must not come from another."""
    section = (Path(__file__).parents[2] / "docs" / "catalog.md").read_text(encoding="utf-8")
    section = section.split("### A blended hybrid formula", 1)[1]
    documented = yaml.safe_load(section.split("```yaml", 1)[1].split("```", 1)[0])["variants"]["hybrid"]
    views = yaml.safe_load((CATALOG_DIR / "views" / "bench.yaml").read_text(encoding="utf-8"))["views"]
    ranks = [view["query"]["rank"] for view in views if view["name"] in BLENDED_VIEW.values()]
    assert blended_rank() == documented
    assert ranks == [documented] * len(BLENDED_VIEW)


def test_tsvector_parsing_counts_positions() -> None:
    assert parse_tsvector("'cat':1,4 'it''s':2 'sat':3") == ["cat", "cat", "it's", "sat"]


def test_ingest_suite(tmp_path: Path) -> None:
    result = run_suite(
        tmp_path, "ingest", "--records", "300", "--embed-records", "40", "--import-records", "120"
    )
    paths = {row["path"]: row for row in result["rows"]}
    assert len(paths) == 10  # raw model at two batch sizes, six bare-engine paths
    assert all(row["per_second"] > 0 for row in paths.values())
    assert paths["service POST /records, vectors supplied"]["records"] == 300
    assert paths["bare engine: COPY"]["vs_bare_copy"] == 1.0
    bulk = {row["path"]: row for row in result["bulk_rows"]}
    assert [row["records"] for row in bulk.values()] == [120] * 4  # the import (whole, write pass), COPY ×2
    assert bulk["bare engine: COPY, 1 session"]["vs_bare_copy_1_session"] == 1.0
    assert all(row["per_second"] > 0 for row in bulk.values())


@pytest.mark.parametrize(
    ("beside", "orders"),
    [
        pytest.param([], [["request"]], id="alone"),
        pytest.param(["recent"], [["recent", "request"], ["request", "recent"]], id="one-alternates"),
        pytest.param(
            ["vector", "vector_pool"],
            [
                ["vector", "vector_pool", "request"],
                ["vector_pool", "request", "vector"],
                ["request", "vector", "vector_pool"],
            ],
            id="two-rotate",
        ),
    ],
)
def test_bare_statements_and_the_request_take_turns_first(beside: list[str], orders: list[list[str]]) -> None:
    """Over one cycle of probes each bare statement and the request run first, second, ... once."""
    for turn in range(2 * len(orders)):
        ahead, after = _around(beside, turn)
        assert [*ahead, "request", *after] == orders[turn % len(orders)]


def test_latency_suite(tmp_path: Path) -> None:
    result = run_suite(
        tmp_path,
        "latency",
        "--records",
        "300",
        "--queries",
        "5",
        "--warmup",
        "1",
        "--concurrency",
        "1,2",
        "--duration",
        "1",
    )
    problems = {m["mode"]: m.get("missing") or m.get("error") for m in result["modes"] if "server" not in m}
    assert not problems
    assert all(m["mean_hits"] > 0 for m in result["modes"])
    assert set(result["raw"]) == {"vector", "vector_pool", "text", "hybrid", "recent", "structured"}
    assert all(raw["latency"]["n"] == 5 for raw in result["raw"].values())  # one per timed request
    placements = {name: raw["placement"] for name, raw in result["raw"].items()}
    # 300 records stay cached whatever a bare scan reads: the scans too run beside their requests
    assert set(placements.values()) == {"beside its mode's requests"}, placements
    vector = next(m for m in result["modes"] if m["mode"] == "vector")
    assert vector["searching"]["p50"] < vector["server"]["p50"]  # the query embedding is left out
    assert set(vector) >= {"vs_raw", "vs_raw_pool"}
    assert [level["clients"] for level in result["throughput"]] == [1, 2]
    assert result["relation_sizes"]["index records_embedding"] > 0 and result["service_rss_bytes"] > 0
    indexes = sum(size for name, size in result["relation_sizes"].items() if name.startswith("index "))
    assert result["load"]["cache_warmed"]["bytes"] >= indexes  # every file was read before measuring


def _latency(p50: float, p95: float, p99: float) -> dict[str, float]:
    return {"n": 5, "p50": p50, "p95": p95, "p99": p99, "mean": p50}


def test_latency_tables_print_p99_and_throughput_at_the_p95_target() -> None:
    """Issue 7: latency distributions "(p50, p95, p99) per mode" and throughput "requests/s at a
    fixed p95" are what the printed tables report, not only the JSON."""
    result = {
        "modes": [
            {
                "mode": "hybrid",
                "server": _latency(11.11, 22.22, 33.33),
                "searching": _latency(5.55, 6.66, 7.77),
                "client": _latency(12.0, 24.0, 36.0),
                "vs_raw": {"p50": 1.5, "p95": 1.25, "p99": 1.1},
            }
        ],
        "raw": {"hybrid": {"latency": _latency(3.7, 5.33, 7.06)}},
        "fused_sources": {},
        "throughput": [
            {"clients": 1, "requests": 53, "per_second": 26.6, "client": _latency(36, 54, 60), "errors": 0},
            {"clients": 2, "requests": 99, "per_second": 49.2, "client": _latency(38, 61, 70), "errors": 0},
        ],
        "p95_target_ms": 60.0,
        "throughput_at_target": 26.6,
        "relation_sizes": {},
        "service_rss_bytes": 2**30,
    }
    header, _, row = render(result).splitlines()[:3]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    columns = dict(zip([cell.strip() for cell in header.strip("|").split("|")], cells, strict=True))
    server = [columns[f"server {p}"] for p in ("p50", "p95", "p99")]
    assert server == ["11.11", "22.22", "33.33"]
    assert "throughput at client p95 ≤ 60 ms: 26.6 requests/s" in render(result)


def test_latency_bare_statement_without_its_mode(tmp_path: Path) -> None:
    """The raw ANN at the pool's size runs on the vector mode's probes; without that mode it
    runs on its own, and hybrid is still compared with it."""
    result = run_suite(
        tmp_path, "latency", "--records", "300", "--queries", "5", "--warmup", "1", "--modes", "hybrid",
        "--concurrency", "1", "--duration", "1",
    )  # fmt: skip
    assert set(result["raw"]) == {"hybrid", "vector_pool"}
    assert all(raw["latency"]["n"] == 5 for raw in result["raw"].values())
    (hybrid,) = result["modes"]
    assert set(hybrid) >= {"vs_raw", "vs_raw_pool"}


TOPICS = [
    "vitamin d deficiency and bone density",
    "insulin resistance in adipose tissue",
    "tumour suppressor genes in colon cancer",
    "antibiotic resistance of staphylococcus",
    "sleep deprivation and memory consolidation",
    "statins lower cholesterol levels",
    "malaria transmission by mosquitoes",
    "gut microbiome and obesity",
    "hypertension treated with diuretics",
    "stem cells regenerate heart muscle",
]


def write_mini_data(root: Path) -> Path:
    """A dataset in the shared data's formats, for machines (CI) without `../shared/data`."""
    scifact = root / "scifact"
    (scifact / "qrels").mkdir(parents=True)
    docs = [
        {
            "_id": f"d{i}",
            "title": t.title(),
            "text": f"We study {t}. Results on {t} in {n} patients.",
            "metadata": {},
        }
        for i, (t, n) in enumerate((t, n) for n in (40, 90) for t in TOPICS)
    ]
    (scifact / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": f"q{i}", "text": f"Does {t} matter?", "metadata": {}} for i, t in enumerate(TOPICS)]
    (scifact / "queries-train.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    qrels = "".join(f"q{i}\td{i}\t1\n" for i in range(len(TOPICS)))
    (scifact / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    turns = [
        {"speaker": "Ann" if i % 2 else "Bo", "dia_id": f"D1:{i + 1}", "text": f"I read about {t}."}
        for i, t in enumerate(TOPICS)
    ]
    qa = [
        {
            "question": f"Who read about {t}?",
            "answer": "x",
            "evidence": [f"D1:{i + 1}"],
            "category": 1 + i % 4,
        }
        for i, t in enumerate(TOPICS)
    ]
    sample = {
        "sample_id": "conv-1",
        "qa": qa,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1": turns,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
        },
    }
    (root / "locomo").mkdir()
    (root / "locomo" / "locomo-dev.json").write_text(json.dumps([sample]))
    return root


@pytest.fixture
def evaluation_data(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real shared data where it exists, else a small copy in the same formats."""
    if not (data_dir() / "scifact").is_dir() or not (data_dir() / "locomo").is_dir():
        monkeypatch.setenv("MEMSEEK_BENCH_DATA", str(write_mini_data(tmp_path_factory.mktemp("data"))))


@pytest.mark.usefixtures("evaluation_data")
@pytest.mark.parametrize("dataset", ["scifact", "locomo"])
def test_quality_suite(tmp_path: Path, dataset: str) -> None:
    result = run_suite(tmp_path, "quality", dataset, "--queries", "8", "--corpus", "20")
    assert set(result["systems"]) == {
        *("vector", "text", "text_bm25", "hybrid", "hybrid_weighted", "blended", "fused"),
        *("bm25", "dense", "bm25+dense"),
    }
    for name, system in result["systems"].items():
        assert "metrics" in system, f"{name}: {system.get('missing')}"
        assert all(
            0.0 <= value <= 1.0
            for group in system["metrics"].values()
            for key, value in group.items()
            if key != "queries"
        )
    # the exact dense baseline and the service's vector mode see the same corpus and model
    assert result["systems"]["dense"]["metrics"]["all" if dataset == "scifact" else "1-4"]["recall@10"] > 0


@pytest.mark.usefixtures("evaluation_data")
def test_vector_suite(tmp_path: Path) -> None:
    """Every system answers every query at each k; the ratios the targets name are reported."""
    result = run_suite(tmp_path, "vector", "--corpus", "20", "--queries", "4", "--warmup", "1", "--k", "3,5")
    assert [found["k"] for found in result["results"]] == [3, 5]
    for found in result["results"]:
        expected = {"bare", "bare_candidates", "raw_model", "raw_model_1_thread"}
        expected |= {"memseek_vector", "memseek_text"}
        assert set(found["systems"]) - {"chroma"} == expected
        assert all(stats["n"] == 4 for stats in found["systems"].values())
        own, text = found["service"]["memseek_vector"], found["service"]["memseek_text"]
        assert own["embed"]["p95"] == 0.0 and text["embed"]["p50"] > 0  # the caller's vector is not embedded
        assert own["http"]["n"] == 4 and own["client"]["p50"] > own["total"]["p50"]
        assert set(found["ratios"]) >= {"embed ÷ raw model", "search ÷ bare", "HTTP overhead, ms"}
        assert "search ÷ bare at the candidate count" in found["ratios"]
        assert ("memseek_vector ÷ chroma" in found["ratios"]) == ("chroma" in found["systems"])


def test_soak_suite(tmp_path: Path) -> None:
    """The soak at its smallest: both phases, the flood, the health probe and the fuzzer run, and
    the report holds every figure docs/reliability.md quotes."""
    result = run_suite(
        tmp_path,
        *("soak", "--minutes", "0.2", "--quiet-minutes", "0.15", "--clients", "2", "--workspaces", "2"),
        *("--flood-clients", "3", "--fuzz", "150"),
    )
    assert set(result["workspaces"]) == {"default", "ws1", "flood"}
    assert set(result["search_p95_ms"]) == {"default", "ws1"}
    assert all(row["quiet"] > 0 and row["flooded"] > 0 for row in result["search_p95_ms"].values())
    assert all(row["probes"] > 0 and row["max"] > 0 for row in result["health_ms"].values())
    assert result["fuzz"]["requests"] == 150
    assert result["unexpected_5xx_count"] == 0, result["unexpected_5xx"]
    assert len(result["rss_mib"]) >= 3


def test_http_suite(tmp_path: Path) -> None:
    """Every route answers every request; the overhead and its parts are reported per route."""
    result = run_suite(tmp_path, "http", "--docs", "20", "--requests", "5", "--warmup", "1")
    found = result["results"]
    assert set(found) == {"bare", "health", "cheap", "search"}
    assert all(stats["client"]["n"] == 5 for stats in found.values())
    for route in ("cheap", "search"):
        assert set(found[route]) >= {"own", "overhead", "overhead ÷ bare", "auth", "transport"}
        assert found[route]["client"]["p50"] > found[route]["own"]["p50"] > 0


@pytest.mark.parametrize("tool", ["bm25_cost", "index_ab", "vector_parts", "graph_walk"])
def test_a_tools_help_opens_with_its_whole_first_paragraph(
    tool: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m bench.<tool> --help` says what the tool measures in full, not the docstring's
    first line cut mid-sentence ("... interleaved query by")."""
    module = importlib.import_module(f"bench.{tool}")
    monkeypatch.setattr(sys, "argv", [tool, "--help"])
    with pytest.raises(SystemExit):
        module.main()
    first_paragraph = " ".join(module.__doc__.split("\n\n")[0].split())
    assert first_paragraph in " ".join(capsys.readouterr().out.split())
