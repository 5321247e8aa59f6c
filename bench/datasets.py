"""SciFact (BEIR train split) and LoCoMo (dev conversations), read from the shared data folder.

Both become lists of `Doc` (what is written as a record) and `Query` (what is asked, with its
relevant doc ids), so the quality suite treats them alike. The files are read in place at run
time and never copied (the data folder's own README describes the files).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import data_dir
from bench.corpus import record_body


@dataclass(frozen=True, slots=True)
class Doc:
    """One document to write as a record; `doc_id` is the dataset's own id."""

    doc_id: str
    collection: str
    entity: str
    type: str
    text: str
    content: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None

    def record_in(self) -> dict[str, Any]:
        """The `RecordIn` body for `POST /records` (without an embedding)."""
        return record_body(
            self.collection, self.entity, self.type, self.text, self.content, occurred_at=self.occurred_at
        )


@dataclass(frozen=True, slots=True)
class Query:
    """One question with its judged documents (doc id → relevance)."""

    query_id: str
    text: str
    relevant: dict[str, int]
    entity: str | None = None
    category: int | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    """Documents and queries of one benchmark."""

    name: str
    docs: tuple[Doc, ...]
    queries: tuple[Query, ...]
    skipped_evidence: int = 0


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def scifact_split(base: Path) -> str:
    """`train` when judged, else the one split with judgments (a held-out copy may hold `test`)."""
    splits = sorted(p.stem for p in (base / "qrels").glob("*.tsv"))
    return "train" if "train" in splits or not splits else splits[0]


def load_scifact(root: Path | None = None, split: str | None = None) -> Dataset:
    """The abstracts (title + text) and the queries of `split` that have judgments."""
    base = (root or data_dir()) / "scifact"
    split = split or scifact_split(base)
    docs = tuple(
        Doc(
            row["_id"],
            "documents",
            "scifact",
            "abstract",
            f"{row['title']}\n{row['text']}".strip(),
            {"doc_id": row["_id"], "title": row["title"]},
        )
        for row in _jsonl(base / "corpus.jsonl")
    )
    qrels: dict[str, dict[str, int]] = {}
    lines = (base / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:  # header line first
        qid, doc_id, score = line.split("\t")
        qrels.setdefault(qid, {})[doc_id] = int(score)
    queries = tuple(
        Query(row["_id"], row["text"], qrels[row["_id"]])
        for row in _jsonl(_first(base / f"queries-{split}.jsonl", base / "queries.jsonl"))
        if row["_id"] in qrels
    )
    return Dataset("scifact", docs, queries)


def _first(*paths: Path) -> Path:
    return next((p for p in paths if p.is_file()), paths[0])


_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"^D:?(\d+):0*(\d+)$")


def session_time(raw: str) -> datetime:
    """LoCoMo's `"1:56 pm on 8 May, 2023"` as an aware UTC datetime."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def evidence_tokens(raw: list[str]) -> list[str]:
    """Split evidence entries on `;` and whitespace."""
    return [token for item in raw for token in re.split(r"[;\s]+", item) if token]


def normalise_evidence(raw: list[str]) -> list[str]:
    """Evidence ids, normalised: `D:11:26` → `D11:26`, `D30:05` → `D30:5` (data README)."""
    ids = []
    for token in evidence_tokens(raw):
        match = _EVIDENCE.match(token)
        if match:
            ids.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return list(dict.fromkeys(ids))


def _turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def _conversation_docs(sample: dict[str, Any]) -> list[Doc]:
    conv_id = sample["sample_id"]
    conversation = sample["conversation"]
    docs = []
    for name, turns in conversation.items():
        match = _SESSION.match(name)
        if not match or not isinstance(turns, list):
            continue
        when = session_time(conversation[f"{name}_date_time"])
        for turn in turns:
            content = {"dia_id": turn["dia_id"], "speaker": turn["speaker"], "session": int(match.group(1))}
            docs.append(
                Doc(
                    f"{conv_id}/{turn['dia_id']}",
                    "conversations",
                    conv_id,
                    "turn",
                    _turn_text(turn),
                    content,
                    when,
                )
            )
    return docs


def load_locomo(root: Path | None = None) -> Dataset:
    """Every turn as an event of its conversation; every question with resolvable evidence.

    Doc ids are `conv-26/D1:3`. Evidence ids that resolve to no turn are skipped (counted in
    `skipped_evidence`); a question left with no evidence is dropped.
    """
    files = sorted(((root or data_dir()) / "locomo").glob("*.json"))  # dev here; held-out copies may differ
    if not files:
        raise FileNotFoundError(f"no LoCoMo *.json under {(root or data_dir()) / 'locomo'}")
    samples = [s for f in files for s in json.loads(f.read_text(encoding="utf-8"))]
    docs: list[Doc] = []
    queries: list[Query] = []
    skipped = 0
    for sample in samples:
        conv_docs = _conversation_docs(sample)
        known = {d.doc_id for d in conv_docs}
        docs += conv_docs
        for number, qa in enumerate(sample["qa"]):
            evidence = qa.get("evidence", [])
            wanted = [f"{sample['sample_id']}/{e}" for e in normalise_evidence(evidence)]
            relevant = {d: 1 for d in wanted if d in known}
            skipped += len(evidence_tokens(evidence)) - len(relevant)
            if relevant:
                queries.append(
                    Query(
                        f"{sample['sample_id']}#{number}",
                        str(qa["question"]),
                        relevant,
                        sample["sample_id"],
                        int(qa["category"]),
                    )
                )
    return Dataset("locomo", tuple(docs), tuple(queries), skipped)
