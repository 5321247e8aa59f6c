"""`python -m bench soak`: minutes of mixed load from several workspaces plus a flooding one,
and requests fuzzed from the served OpenAPI document, against `memseek serve` in its own process.

The ordinary clients run alone first (the quiet phase), then beside the flooding workspace and
the fuzzed requests (the flooded phase). Reports, per workspace, client-side p50/p95/p99 and
answers by status under the flood; each ordinary workspace's search p95 quiet and flooded (the
target: at most 2x); `/health`'s latency, probed twice a second throughout (the target: under 1 s);
the service's resident memory over time; and the fuzzed requests by status, with every 5xx that
is not a documented `503` (the database or a model unavailable, a search past SEARCH_TIMEOUT_MS)
listed: the target is none. The flooding workspace sends slow waits for processing and searches
from more clients than the server has threads, honouring `Retry-After` as a compliant client does.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import statistics
import threading
import time
import uuid
from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from bench.client import Client
from bench.client import Response
from bench.service import Service
from bench.service import ServiceOptions
from bench.service import running_service

DOCUMENTED_5XX = frozenset({"backend_unavailable", "search_timeout"})
"""The 5xx codes the service documents as retryable outages, not defects."""
TEXTS = ("budget review", "renewal call", "onboarding notes", "pricing question", "support ticket")


HEALTH_INTERVAL = 0.5
"""Seconds between two `/health` probes."""


@dataclass(frozen=True, slots=True)
class SoakOptions:
    minutes: float = 10.0
    """The flooded phase."""
    clients: int = 8
    workspaces: int = 4
    flood_clients: int = 10
    fuzz: int = 10_000
    fuzz_clients: int = 2
    seed: int = 7
    quiet_minutes: float = 2.0
    """The ordinary clients alone, before the flood: their search latency without it."""


class Tally:
    """Latencies and statuses per workspace (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.latency: defaultdict[str, list[float]] = defaultdict(list)
        self.searches: defaultdict[str, list[float]] = defaultdict(list)
        """The answered searches' latencies, per workspace."""
        self.statuses: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.unexpected: list[dict[str, Any]] = []

    def add(self, who: str, response: Response, what: str) -> None:
        code = response.body.get("error", {}).get("code") if isinstance(response.body, dict) else None
        with self._lock:
            self.latency[who].append(response.client_ms)
            if "/search" in what and response.status == 200:
                self.searches[who].append(response.client_ms)
            self.statuses[who][str(response.status)] += 1
            if response.status >= 500 and code not in DOCUMENTED_5XX:
                self.unexpected.append(
                    {"who": who, "request": what[:300], "status": response.status, "code": code}
                )


def _record(rng: random.Random, text: str, pad: int = 0) -> dict[str, Any]:
    return {
        "collection": "memories",
        "entity": f"e{rng.randrange(50)}",
        "type": "note",
        "text": text + " x" * pad,
    }


def _mixed(client: Client, rng: random.Random, written: list[str]) -> tuple[Response, str]:
    """One request of an ordinary client: mostly searches, some writes and reads."""
    roll = rng.random()
    if roll < 0.25:
        records = [_record(rng, rng.choice(TEXTS)) for _ in range(rng.randint(1, 5))]
        response = client.post("/records", {"records": records})
        if response.status == 201:
            written.extend(r["id"] for r in response.body["records"][:2])
        return response, "POST /records"
    if roll < 0.35 and written:
        return client.get(f"/records/{rng.choice(written)}"), "GET /records/{id}"
    if roll < 0.5:
        return client.get(f"/search?q={quote(rng.choice(TEXTS))}&k=10"), "GET /search"
    mode = rng.choice(("hybrid", "text", "recent", "vector"))
    body: dict[str, Any] = {"mode": mode, "k": 10, **({} if mode == "recent" else {"q": rng.choice(TEXTS)})}
    return client.post("/search", body), f"POST /search {mode}"


def _flood(client: Client, rng: random.Random, written: list[str]) -> tuple[Response, str]:
    """One request of the flooding workspace: a slow wait for processing, or a search."""
    if rng.random() < 0.7:
        body = {"records": [_record(rng, "flood", pad=1200)]}
        return client.post("/records?wait=true&timeout=30", body), "POST /records?wait=true"
    return client.post("/search", {"q": "flood", "mode": "hybrid"}), "POST /search hybrid"


class Phases:
    """The tally of the phase under way: the quiet one, then the flooded one."""

    def __init__(self) -> None:
        self.quiet, self.flooded = Tally(), Tally()
        self.current = self.quiet


def _loop(
    client: Client,
    who: str,
    send: Callable[..., tuple[Response, str]],
    phases: Phases,
    stop: threading.Event,
    seed: int,
) -> None:
    rng, written = random.Random(seed), list[str]()
    while not stop.is_set():
        tally = phases.current
        try:
            response, what = send(client, rng, written)
        except OSError as exc:  # a connection the server dropped counts as an error of its own
            tally.add(who, Response(599, {"error": {"code": str(exc)}}, 0.0, {}), "connection")
            continue
        tally.add(who, response, what)
        if response.status in (429, 503):  # both carry Retry-After: 1
            stop.wait(1.0)


def _health_probe(url: str, stop: Any, out: Any) -> None:
    """In a process of its own, so that the load generator's threads cannot delay it: `GET /health`
    every `HEALTH_INTERVAL` seconds until `stop` is set, then (time.monotonic() at the start,
    latency in ms, status) of each probe sent through `out`."""
    client, samples = Client(url, ""), []
    while not stop.wait(HEALTH_INTERVAL):
        started = time.monotonic()
        try:
            response = client.get("/health")
            samples.append((started, response.client_ms, response.status))
        except OSError:
            samples.append((started, (time.monotonic() - started) * 1000, 599))
    out.send(samples)


# --- fuzzing from the served OpenAPI document --------------------------------------------------


class Fuzzer:
    """Random requests from the document: valid-looking values from each schema, then often
    broken (unknown keys and parameters, wrong types, out-of-range numbers, junk bodies)."""

    def __init__(self, document: dict[str, Any], names: dict[str, list[str]], rng: random.Random) -> None:
        self.doc, self.names, self.rng = document, names, rng
        self.operations = [
            (method.upper(), path, op)
            for path, methods in document["paths"].items()
            for method, op in methods.items()
        ]

    def request(self) -> tuple[str, str, bytes | None, str]:
        """(method, path with query, body, content type)."""
        method, path, op = self.rng.choice(self.operations)
        target = PATH_VARIABLE.sub(lambda match: quote(self._variable(path, match[1]), safe=""), path)
        query = self._query(op)
        body, content_type = self._body(op) if "requestBody" in op else (None, "application/json")
        return method, target + (f"?{query}" if query else ""), body, content_type

    def _variable(self, path: str, name: str) -> str:
        """A value of the path variable `name`: mostly a plausible one, sometimes junk."""
        if self.rng.random() < 0.2:
            return self.rng.choice(["x", "0", "\u0000", "a" * 300, "..", "Ω≈ç"])
        if name in ("id", "erasure_id"):
            return str(uuid.uuid4())
        if name == "entity":
            return f"e{self.rng.randrange(50)}"
        known = self.names["writes" if path.startswith("/writes") else "views"]
        return self.rng.choice(known) if known and name == "name" else "index.html"

    def _query(self, op: dict[str, Any]) -> str:
        parts = []
        for param in op.get("parameters", []):
            if param["in"] == "query" and (param["required"] or self.rng.random() < 0.5):
                value = self.sample(param["schema"]) if self.rng.random() < 0.8 else self._junk()
                parts.append((param["name"], value if isinstance(value, str) else json.dumps(value)))
        if self.rng.random() < 0.1:
            parts.append(("unknown", "1"))
        return "&".join(f"{quote(str(k))}={quote(str(v), safe='')}" for k, v in parts)

    def _body(self, op: dict[str, Any]) -> tuple[bytes, str]:
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        roll = self.rng.random()
        if roll < 0.05:
            return b"{not json", "application/json"
        if roll < 0.1:
            return b"{}", self.rng.choice(
                ["text/plain", "application/xml", "application/json; charset=utf-16"]
            )
        value = self.sample(schema)
        if roll < 0.5:
            value = self._mutate(value)
        return json.dumps(value).encode(), "application/json"

    def sample(self, schema: dict[str, Any], depth: int = 0) -> Any:
        """A value shaped by `schema` (references resolved in the document)."""
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            return self.sample(self.doc["components"]["schemas"][name], depth)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.sample(self.rng.choice(schema[key]), depth)
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        kind = schema.get("type")
        kind = self.rng.choice(kind) if isinstance(kind, list) else kind
        if depth > 6 or kind is None:
            return self._junk()
        sampler = SAMPLERS.get(kind)
        return sampler(self, schema, depth) if sampler is not None else None

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        required = set(schema.get("required", []))
        return {
            name: self.sample(prop, depth + 1)
            for name, prop in schema.get("properties", {}).items()
            if name in required or self.rng.random() < 0.3
        }

    def _array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        low = schema.get("minItems", 0)
        count = self.rng.randint(low, max(low, min(schema.get("maxItems", 3), 3)))
        return [self.sample(schema.get("items", {}), depth + 1) for _ in range(count)]

    def _string(self, schema: dict[str, Any]) -> str:
        if schema.get("format") == "uuid":
            return str(uuid.uuid4())
        if schema.get("format") == "date-time":
            return "2026-07-01T09:00:00Z"
        low = schema.get("minLength", 0)
        text = self.rng.choice(["budget", "records", "e1", "memories", "a b", "Ω≈ç", "x" * 40])
        return text if len(text) >= low else text * (low // max(1, len(text)) + 1)

    def _number(self, schema: dict[str, Any], whole: bool) -> float | int:
        low, high = schema.get("minimum", -10), schema.get("maximum", 1000)
        value = self.rng.uniform(low, high)
        return int(value) if whole else value

    def _junk(self) -> Any:
        return self.rng.choice(
            [None, True, -1, 0, 10**30, 1e308, "", "\u0000x", [], {}, [[[[1]]]], {"a": {"b": 1}}]
        )

    def _mutate(self, value: Any) -> Any:
        if isinstance(value, dict) and value and self.rng.random() < 0.5:
            key = self.rng.choice(list(value))
            return {**value, key: self._junk()}
        if isinstance(value, dict):
            return {**value, "zz_unknown": self._junk()}
        return self._junk()


PATH_VARIABLE = re.compile(r"\{([^}]+)\}")
SAMPLERS: dict[str, Callable[[Fuzzer, dict[str, Any], int], Any]] = {
    "object": Fuzzer._object,
    "array": Fuzzer._array,
    "string": lambda f, s, d: f._string(s),
    "integer": lambda f, s, d: f._number(s, True),
    "number": lambda f, s, d: f._number(s, False),
    "boolean": lambda f, s, d: f.rng.random() < 0.5,
    "null": lambda f, s, d: None,
}


def _fuzz_loop(client: Client, fuzzer: Fuzzer, tally: Tally, budget: list[int], lock: threading.Lock) -> None:
    while True:
        with lock:
            if budget[0] <= 0:
                return
            budget[0] -= 1
            method, target, body, content_type = fuzzer.request()
        try:
            response = client.request(method, target, body, content_type=content_type)
        except OSError as exc:
            tally.add("fuzz", Response(599, {"error": {"code": str(exc)}}, 0.0, {}), f"{method} {target}")
            continue
        tally.add("fuzz", response, f"{method} {target} {(body or b'')[:200]!r}")


# --- the run -------------------------------------------------------------------------------------


def _workspaces(service: Service, count: int) -> dict[str, str]:
    """Workspace name → key: `default` (the service's) and `count - 1` more, plus `flood` and
    `fuzz` (the fuzzed requests' own, so that its share does not limit the others')."""
    keys = {"default": service.client.key}
    for name in [*(f"ws{index}" for index in range(1, count)), "flood", "fuzz"]:
        keys[name] = service.command("workspace", "create", name).stdout.strip().splitlines()[-1]
    return keys


def run(opts: SoakOptions, service_options: ServiceOptions) -> dict[str, Any]:
    with running_service(service_options) as service:
        keys = _workspaces(service, opts.workspaces)
        phases, stop = Phases(), threading.Event()
        names = [name for name in keys if name not in ("flood", "fuzz")]
        ordinary = [(names[i % len(names)], _mixed) for i in range(opts.clients)]
        flood = [("flood", _flood)] * opts.flood_clients

        def clients(which: list[tuple[str, Any]], first: int) -> list[threading.Thread]:
            return [
                threading.Thread(
                    target=_loop,
                    args=(Client(service.url, keys[who]), who, send, phases, stop, opts.seed + first + i),
                    daemon=True,  # an interrupted run (SIGTERM) ends without waiting for them
                )
                for i, (who, send) in enumerate(which)
            ]

        quiet, flooded = clients(ordinary, 0), clients(flood, len(ordinary))
        fuzz_threads, fuzz_started = _fuzzers(service, keys["fuzz"], opts, phases.flooded)
        spawn = multiprocessing.get_context("spawn")
        probe_stop, (samples_in, samples_out) = spawn.Event(), spawn.Pipe(duplex=False)
        probe = spawn.Process(target=_health_probe, args=(service.url, probe_stop, samples_out), daemon=True)
        probe.start()
        started = time.monotonic()
        for thread in quiet:
            thread.start()
        rss = _sample_memory(service, started, opts.quiet_minutes * 60)
        phases.current = phases.flooded
        fuzz_started[0] = time.monotonic()
        for thread in flooded + fuzz_threads:
            thread.start()
        rss += _sample_memory(service, started, (opts.quiet_minutes + opts.minutes) * 60)
        stop.set()
        probe_stop.set()
        health = samples_in.recv()
        probe.join(30)
        for thread in quiet + flooded:
            thread.join(120)
        for thread in fuzz_threads:  # the whole budget is sent, past the load if need be
            thread.join()
        fuzz_seconds = time.monotonic() - fuzz_started[0]
        tracebacks = sum("Traceback" in line for line in service.log)
    return _result(opts, phases, _health_rows(health, fuzz_started[0]), rss, fuzz_seconds, tracebacks)


def _fuzzers(
    service: Service, key: str, opts: SoakOptions, tally: Tally
) -> tuple[list[threading.Thread], list[float]]:
    client = Client(service.url, key)
    document = client.get("/openapi.json").body
    names = {
        "views": [view["name"] for view in client.get("/views").body["views"]],
        "writes": [write["name"] for write in client.get("/writes").body["writes"]],
    }
    fuzzer, budget, lock = Fuzzer(document, names, random.Random(opts.seed)), [opts.fuzz], threading.Lock()
    threads = [
        threading.Thread(
            target=_fuzz_loop, args=(Client(service.url, key), fuzzer, tally, budget, lock), daemon=True
        )
        for _ in range(opts.fuzz_clients)
    ]
    return threads, [time.monotonic()]


def _sample_memory(service: Service, started: float, until: float) -> list[tuple[float, float, float]]:
    """(minutes since start, service RSS in MiB, the machine's 1-minute load average) every 10 s
    until `until` seconds after `started`: memory over time, and how busy the cores were."""
    samples = []
    while True:
        elapsed = time.monotonic() - started
        samples.append((round(elapsed / 60, 2), round(service.rss_bytes() / 2**20, 1), os.getloadavg()[0]))
        if elapsed >= until:
            return samples
        time.sleep(min(10.0, until - elapsed))


def _percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {"p50": values[0] if values else 0.0, "p95": 0.0, "p99": 0.0}
    cuts = statistics.quantiles(values, n=100, method="inclusive")  # never past the largest
    return {"p50": round(cuts[49], 1), "p95": round(cuts[94], 1), "p99": round(cuts[98], 1)}


def _result(
    opts: SoakOptions,
    phases: Phases,
    health: dict[str, Any],
    rss: list[tuple[float, float, float]],
    fuzz_s: float,
    tb: int,
) -> dict[str, Any]:
    tally, quiet = phases.flooded, phases.quiet
    workspaces = {
        who: {
            "requests": len(tally.latency[who]),
            **_percentiles(tally.latency[who]),
            "statuses": dict(tally.statuses[who]),
        }
        for who in sorted(tally.latency)
        if who != "fuzz"
    }
    fuzz = tally.statuses["fuzz"]
    return {
        "options": asdict(opts),
        "workspaces": workspaces,
        "search_p95_ms": _search_p95(quiet, tally),
        "health_ms": health,
        "rss_mib": rss,
        "fuzz": {"requests": sum(fuzz.values()), "seconds": round(fuzz_s, 1), "statuses": dict(fuzz)},
        "unexpected_5xx": (quiet.unexpected + tally.unexpected)[:50],
        "unexpected_5xx_count": len(quiet.unexpected) + len(tally.unexpected),
        "service_log_tracebacks": tb,
    }


def _health_rows(samples: list[tuple[float, float, int]], flooded_at: float) -> dict[str, Any]:
    """`/health` quiet and flooded: percentiles, the slowest answer, how many took over a second
    (the target: none) and the answers by status."""
    rows = {}
    for phase, flooded in (("quiet", False), ("flooded", True)):
        chosen = [(ms, status) for at, ms, status in samples if (at >= flooded_at) == flooded]
        latencies = [ms for ms, _ in chosen]
        rows[phase] = {
            **_percentiles(latencies),
            "max": round(max(latencies, default=0.0), 1),
            "over_1s": sum(ms > 1000 for ms in latencies),
            "probes": len(latencies),
            "statuses": dict(Counter(str(status) for _, status in chosen)),
        }
    return rows


def _search_p95(quiet: Tally, flooded: Tally) -> dict[str, dict[str, float]]:
    """Each ordinary workspace's search p95, quiet and flooded, and their ratio (target: at most 2)."""
    rows = {}
    for who in sorted(quiet.searches):
        before = _percentiles(quiet.searches[who])["p95"]
        after = _percentiles(flooded.searches[who])["p95"]
        rows[who] = {"quiet": before, "flooded": after, "ratio": round(after / before, 2) if before else 0.0}
    return rows


def render(result: dict[str, Any]) -> str:
    lines = [
        "| workspace | requests | p50 ms | p95 ms | p99 ms | answers by status |",
        "|---|---|---|---|---|---|",
    ]
    for who, row in result["workspaces"].items():
        statuses = ", ".join(f"{code}: {n}" for code, n in sorted(row["statuses"].items()))
        lines.append(
            f"| {who} | {row['requests']} | {row['p50']} | {row['p95']} | {row['p99']} | {statuses} |"
        )
    lines += ["", "| workspace | search p95 quiet ms | flooded ms | ratio |", "|---|---|---|---|"]
    for who, row in result["search_p95_ms"].items():
        lines.append(f"| {who} | {row['quiet']} | {row['flooded']} | {row['ratio']} |")
    lines.append("")
    for phase, row in result["health_ms"].items():
        lines.append(
            f"/health {phase}: p50 {row['p50']} ms, p99 {row['p99']} ms, max {row['max']} ms, "
            f"{row['over_1s']} of {row['probes']} over 1 s, statuses {row['statuses']}"
        )
    rss = result["rss_mib"]
    lines.append(f"\nservice RSS (MiB): start {rss[0][1]}, max {max(m for _, m, _ in rss)}, end {rss[-1][1]}")
    every = rss[:: max(1, len(rss) // 12)]
    lines.append("RSS by minute: " + ", ".join(f"{t:g}: {m}" for t, m, _ in every))
    lines.append("load average by minute: " + ", ".join(f"{t:g}: {load:.1f}" for t, _, load in every))
    fuzz = result["fuzz"]
    statuses = ", ".join(f"{code}: {n}" for code, n in sorted(fuzz["statuses"].items()))
    lines.append(f"fuzzed requests: {fuzz['requests']} in {fuzz['seconds']} s ({statuses})")
    lines.append(f"5xx other than documented 503s: {result['unexpected_5xx_count']}")
    lines.append(f"tracebacks in the service log: {result['service_log_tracebacks']}")
    for item in result["unexpected_5xx"][:10]:
        lines.append(f"  {item}")
    return "\n".join(lines)
