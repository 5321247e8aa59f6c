"""Write contracts through the Python SDK (`client.writes.list()`, `client.writes.call()`), sync
and async, against a running service over the session database and the reference catalog (the
SDK tests' `service`, `m` and `am` fixtures): `remember` and `propose_fact` as an application
calls them."""

from __future__ import annotations

import pytest

from memseek.client import AsyncMemseek
from memseek.client import Conflict
from memseek.client import InvalidRequest
from memseek.client import Memseek
from memseek.client import NotFound

NOTE = {"entity": "contact.maria", "text": "Maria prefers email to calls.", "tags": ["channel"]}


def test_list_publishes_each_version_and_its_input_contract(m: Memseek) -> None:
    writes = {(w.name, w.version): w for w in m.writes.list()}
    assert {("remember", 1), ("propose_fact", 1)} <= set(writes)
    remember = writes[("remember", 1)]
    assert remember.active and remember.description and remember.description.startswith("Remember")
    assert remember.input_schema["required"] == ["entity", "text"]
    assert remember.raw["status"] == "active" and writes[("propose_fact", 1)].raw["status"] == "draft"


def test_call_writes_the_record_the_contract_fixes(m: Memseek) -> None:
    called = m.writes.call("remember", **NOTE, importance=8)
    (written,) = called.records
    assert called.raw["write"]["name"] == "remember" and called.raw["parameters"] == {**NOTE, "importance": 8}
    record = m.records.get(written.id)
    assert (record.collection, record.type, record.status, record.key) == ("memories", "note", "active", None)
    assert record.content == {"source": "agent", "tags": ["channel"]} and record.scores == {"importance": 8}


def test_call_reports_the_version_that_ran_and_the_parameters_applied(m: Memseek) -> None:
    """Issue 41 §2: a call runs "through `POST /records`' own write path"; its answer names the
    contract version (`write`) and the parameters applied, as `POST /writes/{name}` does."""
    called = m.writes.call("remember", NOTE)
    (listed,) = [w for w in m.writes.list() if (w.name, w.active) == ("remember", True)]
    assert (called.write.name, called.write.version) == ("remember", listed.version)
    assert called.write.hash == listed.raw["hash"] and called.parameters == NOTE


def test_call_waits_until_the_record_is_processed(m: Memseek) -> None:
    """Issue 41 §2: "through `POST /records`' own write path" — `wait`/`timeout` as
    `.records.write(records, wait=False, timeout=None)` takes them (`?wait=true&timeout=S`)."""
    called = m.writes.call("remember", NOTE, wait=True, timeout=30)
    assert [r.processing for r in called.records] == ["ready"]
    found = m.search(q="prefers email to calls", mode="text", scope={"entities": ["contact.maria"]})
    assert called.records[0].id in found.ids


def test_parameters_as_the_route_body_names_them(m: Memseek) -> None:
    """Issue 41 §2: "called by `POST /writes/{name}` with `{"parameters": {...}, "idempotency_key":
    ...}`" — `parameters=` and `idempotency_key=` as keywords are that body, as `views.query`
    reads `parameters=` (no parameter value can be an object, so nothing else is meant)."""
    called = m.writes.call("remember", parameters=NOTE, idempotency_key="body-shaped")
    assert called.parameters == NOTE
    again = m.writes.call("remember", parameters=NOTE, idempotency_key="body-shaped")
    assert [r.id for r in again.records] == [r.id for r in called.records]


def test_a_proposed_fact_is_a_draft_until_approved(m: Memseek) -> None:
    proposal = {"entity": "contact.maria", "fact": "preferred_channel", "value": "Maria prefers email."}
    (written,) = m.writes.call("propose_fact", proposal).records  # parameters as a mapping work too
    draft = m.records.get(written.id)
    assert (draft.status, draft.key, draft.type) == ("draft", "preferred_channel", "fact")
    approved = m.records.approve(written.id)
    assert (approved.status, approved.current) == ("active", True)


def test_idempotency_keys(m: Memseek) -> None:
    first = m.writes.call("remember", NOTE, idempotency_key="turn-7")
    again = m.writes.call("remember", NOTE, idempotency_key="turn-7")
    # The same record, as it stands now: the service's worker may have processed it in between.
    assert [(r.id, r.current) for r in again.records] == [(r.id, r.current) for r in first.records]
    assert again.records[0].processing in ("pending", "ready")
    with pytest.raises(Conflict) as caught:
        m.writes.call("remember", {**NOTE, "text": "Something else."}, idempotency_key="turn-7")
    assert (caught.value.status, caught.value.locs) == (409, [["idempotency_key"]])


@pytest.mark.parametrize(
    ("name", "parameters", "error", "locs"),
    [
        pytest.param(
            "remember", {"entity": "contact.maria"}, InvalidRequest, [["parameters", "text"]], id="missing"
        ),
        pytest.param(
            "remember",
            {**NOTE, "importance": 11},
            InvalidRequest,
            [["parameters", "importance"]],
            id="out-of-range",
        ),
        pytest.param(
            "remember", {**NOTE, "mood": "happy"}, InvalidRequest, [["parameters", "mood"]], id="unknown"
        ),
        pytest.param("forget_everything", NOTE, NotFound, [], id="unknown-contract"),
    ],
)
def test_errors_carry_the_services_code_and_loc(
    m: Memseek, name: str, parameters: dict[str, object], error: type[Exception], locs: list[list[str]]
) -> None:
    with pytest.raises(error) as caught:
        m.writes.call(name, parameters)
    assert caught.value.locs == locs  # type: ignore[attr-defined]
    assert caught.value.code == ("not_found" if error is NotFound else "invalid_request")  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_the_async_client(am: AsyncMemseek, m: Memseek) -> None:
    listed = await am.writes.list()
    assert [w.name for w in listed] == [w.name for w in m.writes.list()]
    (written,) = (await am.writes.call("remember", NOTE)).records
    assert (await am.records.get(written.id)).text == NOTE["text"]
    with pytest.raises(InvalidRequest):
        await am.writes.call("remember", entity="contact.maria")
