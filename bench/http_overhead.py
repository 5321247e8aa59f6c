"""`python -m bench http`: what HTTP costs a caller of Memseek, beside a bare waitress + Flask route.

Two servers run side by side, each in its own process with the same number of threads:

* a bare WSGI app (`bare_app`: one Flask route answering a small JSON body) under plain
  waitress — the floor any Python HTTP service of this shape pays;
* `memseek serve`, with a small `documents` corpus written with random unit vectors.

The same client (one keep-alive connection, `bench.client`) asks, in rotating order:

* `bare`: `GET /hello` of the bare app;
* `health`: Memseek's `GET /health` (answered by the server's I/O loop);
* `cheap`: `GET /collections` (authenticated; the app's own time is its `Server-Timing` `app`);
* `search`: `POST /search` with the caller's vector (`vector` + `embedding_model`), k = 10.

Reported: each one's client wait (p50 / p95), and the HTTP overhead — the client's wait less the
server's own figure (`total` for the search, `app` for the cheap route) — with its ratio to the
bare route's whole wait, and the overhead target (issue 47: at most 1 ms p50); and two parts of
it, the key's look-up (`auth`) and what lies outside the app (client − `app`: the client, the
sockets, waitress).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.client import Client
from bench.client import Response
from bench.client import check
from bench.load import analyze
from bench.load import wait_processed
from bench.load import write_records
from bench.metrics import percentiles
from bench.report import options_dict
from bench.report import table
from bench.service import Service
from bench.service import ServiceOptions
from bench.service import _free_port
from bench.service import running_service
from bench.vectors import as_json_vector
from memseek.models.config import LOCAL_DIMENSIONS
from memseek.models.local import MODEL_ID

TARGET_MS = 1.0
"""Issue 47: HTTP overhead at most 1 ms p50."""
ROUTES = ("bare", "health", "cheap", "search")
OWN_TIME = {"cheap": "app", "search": "total"}
"""The `Server-Timing` metric that is the server's own work, per measured Memseek route."""


@dataclass(frozen=True, slots=True)
class HttpOptions:
    requests: int = 2000
    warmup: int = 200
    docs: int = 2000
    seed: int = 7


def bare_app() -> Any:
    """The bare comparison: one Flask route returning a small JSON body."""
    from flask import Flask
    from flask import jsonify

    app = Flask("bare")

    @app.get("/hello")
    def hello() -> Any:
        return jsonify({"status": "ok"})

    return app


def serve_bare(port: int, threads: int) -> None:
    """`bare_app` under plain waitress on 127.0.0.1:`port` (run in a process of its own)."""
    import waitress

    waitress.serve(bare_app(), host="127.0.0.1", port=port, threads=threads, _quiet=True)


def _start_bare(threads: int) -> tuple[subprocess.Popen[bytes], Client]:
    port = _free_port()
    code = f"from bench.http_overhead import serve_bare; serve_bare({port}, {threads})"
    process = subprocess.Popen([sys.executable, "-c", code])
    client = Client(f"http://127.0.0.1:{port}", "")
    for _ in range(200):
        try:
            if client.get("/hello").ok():
                return process, client
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the bare server did not start")


def _unit_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, LOCAL_DIMENSIONS)).astype(np.float32)
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def load(service: Service, options: HttpOptions) -> None:
    """`docs` short records of the `documents` collection, each with its own random vector."""
    bodies = [
        {
            "collection": "documents",
            "entity": f"doc-{i}",
            "type": "abstract",
            "text": f"document number {i}",
            "content": {"doc_id": str(i), "title": f"title {i}"},
        }
        for i in range(options.docs)
    ]
    write_records(service, bodies, list(_unit_vectors(options.docs, options.seed)), progress="POST /records")
    wait_processed(service)
    analyze(service)


def calls(service: Service, bare: Client, vectors: np.ndarray) -> dict[str, Callable[[int], Response]]:
    """One request per route, for the `i`-th probe."""
    scope = {"collections": ["documents"]}

    def search(i: int) -> Response:
        vector = as_json_vector(vectors[i % len(vectors)])
        body = {"mode": "vector", "k": 10, "scope": scope, "vector": vector, "embedding_model": MODEL_ID}
        return service.client.post("/search", body)

    return {
        "bare": lambda i: bare.get("/hello"),
        "health": lambda i: service.client.get("/health"),
        "cheap": lambda i: service.client.get("/collections"),
        "search": search,
    }


def measure(route_calls: dict[str, Callable[[int], Response]], options: HttpOptions) -> dict[str, Any]:
    """Every route asked `warmup + requests` times in rotating order; the first `warmup` untimed."""
    answers: dict[str, list[Response]] = {name: [] for name in route_calls}
    names = list(route_calls)
    for i in range(options.warmup + options.requests):
        start = i % len(names)
        for name in names[start:] + names[:start]:
            response = route_calls[name](i)
            check(response, name)
            if i >= options.warmup:
                answers[name].append(response)
    return summarise(answers)


def summarise(answers: dict[str, list[Response]]) -> dict[str, Any]:
    """Client waits per route; for Memseek's timed routes, the overhead and its ratio to bare."""
    out: dict[str, Any] = {
        name: {"client": percentiles([r.client_ms for r in rs])} for name, rs in answers.items()
    }
    bare = out["bare"]["client"]
    for name, metric in OWN_TIME.items():
        overhead = percentiles([r.client_ms - r.timing[metric] for r in answers[name]])
        out[name]["own"] = percentiles([r.timing[metric] for r in answers[name]])
        out[name]["overhead"] = overhead
        out[name]["overhead ÷ bare"] = {p: overhead[p] / bare[p] for p in ("p50", "p95")}
        out[name]["auth"] = percentiles([r.timing["auth"] for r in answers[name]])
        out[name]["transport"] = percentiles([r.client_ms - r.timing["app"] for r in answers[name]])
    out["health"]["client ÷ bare"] = {p: out["health"]["client"][p] / bare[p] for p in ("p50", "p95")}
    return out


def run(options: HttpOptions, service_options: ServiceOptions) -> dict[str, Any]:
    """Start both servers, load the corpus, measure."""
    bare_process, bare = _start_bare(service_options.threads)
    try:
        with running_service(service_options) as service:
            if not service_options.reuse:
                load(service, options)
            vectors = _unit_vectors(options.warmup + options.requests, options.seed + 1)
            results = measure(calls(service, bare, vectors), options)
    finally:
        bare_process.terminate()
        bare_process.wait(10)
    return {"options": options_dict(options), "results": results, "target_ms": TARGET_MS}


def _cell(stats: dict[str, Any], key: str) -> str:
    value = stats.get(key)
    return f"{value['p50']:.2f} / {value['p95']:.2f}" if value else "—"


def render(result: dict[str, Any]) -> str:
    """One row per route: client wait, the server's own time, the overhead and its ratio to bare."""
    found = result["results"]
    rows = [
        [
            name,
            _cell(found[name], "client"),
            _cell(found[name], "own"),
            _cell(found[name], "overhead"),
            _cell(found[name], "overhead ÷ bare" if name in OWN_TIME else "client ÷ bare"),
            _cell(found[name], "auth"),
            _cell(found[name], "transport"),
        ]
        for name in ROUTES
    ]
    headers = [
        "route",
        "client p50 / p95 ms",
        "server p50 / p95",
        "overhead p50 / p95",
        "÷ bare wait",
        "of which auth",
        "client − app",
    ]
    target = f"target: overhead at most {result['target_ms']:.1f} ms p50"
    return table(headers, rows, digits=2) + "\n" + target
