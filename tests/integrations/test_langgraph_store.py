"""LangGraph's own store expectations, met by `MemseekStore` against a running service.

Each test reproduces a test of LangGraph's store suites (langchain-ai/langgraph: libs/checkpoint
tests/test_store.py for InMemoryStore, libs/checkpoint-postgres tests/test_store.py and
test_async_store.py for PostgresStore, libs/checkpoint-sqlite tests/test_store.py for
SqliteStore) with the same data and assertions, named after it; every test runs on the blocking
and on the async path. Prefix searches over nested namespaces run on a `nested_namespaces`
store, which is what reads the namespaces under a prefix.

Expectations that cannot apply, and why (docs/integrations.md, "Limits"):
- TTL (`test_store_ttl`, `test_omit_expired_*`): the store does not expire items
  (`supports_ttl = False`; a `ttl` is refused — `test_ttl_is_refused`).
- Scores equal to a similarity (`test_scores`), equal scores of items matched through different
  fields and scores compared across two searches (`test_embed_with_path_*`,
  `test_vector_update_with_embedding`'s score comparison): Memseek's `score` places a hit among
  the other hits of the same response (the best is 1.0), and a record has one text, one vector.
- `index=False` keeping an item out of searches: every record is searchable by its text.
- Filter keys as dotted paths into nested values (SqliteStore's `user.access-level`): filters
  compare top-level keys, as InMemoryStore and PostgresStore do.
- Fake character embeddings (`test_vector_search_with_filters`' query "bbbbluuu" finding
  "blue car"): the service embeds with its own model; the filters of that test are kept.
- `test_no_running_loop`, the `_escape_*` / `_namespace_match_pattern` helpers, migrations:
  properties of those stores' implementations, not of the store interface.
- `test_large_batches` (6,000 operations on 10 threads): run at a tenth of its size
  (`test_large_batches_scaled_down`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.base import GetOp
from langgraph.store.base import InvalidNamespaceError
from langgraph.store.base import Item
from langgraph.store.base import ListNamespacesOp
from langgraph.store.base import MatchCondition
from langgraph.store.base import PutOp
from langgraph.store.base import SearchOp

from memseek.integrations.langgraph import MemseekStore
from tests.integrations.store_support import MakeStore
from tests.integrations.store_support import put_all

# --- batches (PostgresStore, SqliteStore) -------------------------------------------------------


def test_batch_order(nested: MemseekStore) -> None:
    nested.put(("test", "foo"), "key1", {"data": "value1"})
    nested.put(("test", "bar"), "key2", {"data": "value2"})
    ops = [
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
    ]
    results = nested.batch(ops)
    assert len(results) == 5
    assert isinstance(results[0], Item) and (results[0].key, results[0].value) == ("key1", {"data": "value1"})
    assert results[1] is None
    assert isinstance(results[2], list) and len(results[2]) == 1
    assert isinstance(results[3], list) and {("test", "foo"), ("test", "bar")} <= set(results[3])
    assert results[4] is None

    reordered = nested.batch([
        SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
        GetOp(namespace=("test", "bar"), key="key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
        GetOp(namespace=("test", "foo"), key="key1"),
    ])  # fmt: skip
    assert len(reordered) == 5
    assert isinstance(reordered[0], list) and len(reordered[0]) == 2
    assert isinstance(reordered[1], Item) and reordered[1].value == {"data": "value2"}
    assert isinstance(reordered[2], list) and {("test", "foo"), ("test", "bar")} <= set(reordered[2])
    assert reordered[3] is None
    assert isinstance(reordered[4], Item) and reordered[4].value == {"data": "value1"}


def test_batch_get_ops(store: MemseekStore) -> None:
    store.put(("test",), "key1", {"data": "value1"})
    store.put(("test",), "key2", {"data": "value2"})
    results = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "key2"), GetOp(("test",), "key3")])
    assert len(results) == 3
    assert isinstance(results[0], Item) and results[0].key == "key1"
    assert isinstance(results[1], Item) and results[1].key == "key2"
    assert results[2] is None


def test_batch_put_ops(store: MemseekStore) -> None:
    results = store.batch([
        PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
        PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
        PutOp(namespace=("test",), key="key3", value=None),
    ])  # fmt: skip
    assert results == [None, None, None]
    item1, item2 = store.get(("test",), "key1"), store.get(("test",), "key2")
    assert item1 and item1.value == {"data": "value1"}
    assert item2 and item2.value == {"data": "value2"}
    assert store.get(("test",), "key3") is None


def test_batch_search_ops(nested: MemseekStore) -> None:
    put_all(nested, [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ])  # fmt: skip
    results = nested.batch([
        SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
        SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
        SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
    ])  # fmt: skip
    assert len(results[0]) == 2 and all(item.value["tag"] == "a" for item in results[0])  # type: ignore[union-attr]
    assert len(results[1]) == 2  # type: ignore[arg-type]
    assert [item.namespace for item in results[2]] == [("test", "foo")]  # type: ignore[union-attr]


def test_batch_list_namespaces_ops(store: MemseekStore) -> None:
    data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    put_all(store, data)
    results = store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),), max_depth=None, limit=10),
    ])  # fmt: skip
    assert len(results[0]) == len(data)  # type: ignore[arg-type]
    assert all(len(ns) <= 2 for ns in results[1])  # type: ignore[union-attr]
    assert sorted(results[2]) == [  # type: ignore[type-var]
        ("prod", "documents", "public"), ("test", "documents", "public"), ("test", "images", "public"),
    ]  # fmt: skip


# --- basic operations (PostgresStore, SqliteStore) -----------------------------------------------


def test_basic_store_ops(store: MemseekStore) -> None:
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item and (item.namespace, item.key) == (namespace, "doc1")
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}

    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated and updated.value == {"title": "Updated Document", "content": "Hello, Updated!"}
    assert updated.updated_at > item.updated_at

    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None


def test_basic_store_operations(nested: MemseekStore) -> None:
    """SqliteStore's variant: a second item, a nested prefix search, deleting both."""
    namespace = ("uid", "test", "documents")
    assert nested.search(("uid",)) == []
    nested.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = nested.get(namespace, "doc1")
    assert item and item.created_at is not None and item.updated_at is not None
    nested.put(namespace, "doc1", {"title": "Updated Test Document", "content": "Hello, LangGraph!"})
    updated = nested.get(namespace, "doc1")
    assert updated and updated.updated_at >= item.updated_at
    assert nested.get(("uid", "test", "other_documents"), "doc1") is None
    nested.put(namespace, "doc2", {"title": "Another Document", "content": "Greetings!"})
    assert {item.key for item in nested.search(("uid", "test"), limit=10)} == {"doc1", "doc2"}
    assert namespace in nested.list_namespaces(prefix=("uid", "test"))
    nested.delete(namespace, "doc1")
    nested.delete(namespace, "doc2")
    assert nested.get(namespace, "doc1") is None and nested.get(namespace, "doc2") is None
    assert nested.search(("uid", "test"), limit=10) == []


def test_cannot_put_empty_namespace(store: MemseekStore) -> None:
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.get(("foo", "langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    assert store.search(("foo", "langgraph", "foo"), query="bar")[0].value == doc
    store.delete(("foo", "langgraph", "foo"), "bar")
    assert store.get(("foo", "langgraph", "foo"), "bar") is None
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])  # past the public put: allowed
    assert store.get(("langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


# --- search (PostgresStore, SqliteStore) ---------------------------------------------------------


def test_search(nested: MemseekStore) -> None:
    data = [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    put_all(nested, data)
    assert len(nested.search(("test",))) == 3
    docs = nested.search(("test", "docs"))
    assert len(docs) == 2 and all(item.namespace == ("test", "docs") for item in docs)
    alice = nested.search(("test",), filter={"author": "Alice"})
    assert len(alice) == 2 and all(item.value["author"] == "Alice" for item in alice)
    assert len(nested.search(("test",), limit=2)) == 2
    assert len(nested.search(("test",), offset=2)) == 1
    for namespace, key, _ in data:
        nested.delete(namespace, key)
    assert nested.search(("test",)) == []


def test_search_items(nested: MemseekStore) -> None:
    base = "test_search_items"
    namespaces = [(base, "documents", "user1"), (base, "documents", "user2"),
                  (base, "reports", "department1"), (base, "reports", "department2")]  # fmt: skip
    values = [
        {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
        {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
        {"title": "Report A", "author": "John Doe", "tags": ["final"]},
        {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
    ]
    put_all(nested, [(ns, f"item_{ns[-1]}", value) for ns, value in zip(namespaces, values, strict=True)])
    docs = nested.search((base, "documents"))
    assert len(docs) == 2 and all(item.namespace[1] == "documents" for item in docs)
    reports = nested.search((base, "reports"))
    assert len(reports) == 2 and all(item.namespace[1] == "reports" for item in reports)
    first, second = nested.search((base,), limit=2, offset=0), nested.search((base,), limit=2, offset=2)
    assert len(first) == len(second) == 2
    assert {item.key for item in first}.isdisjoint({item.key for item in second})
    assert len(nested.search((base,))) == 4
    john = nested.search((base,), filter={"author": "John Doe"})
    assert len(john) == 2 and all(item.value["author"] == "John Doe" for item in john)
    drafts = nested.search((base,), filter={"tags": ["draft"]})
    assert len(drafts) == 2 and all("draft" in item.value["tags"] for item in drafts)


def namespaces_found(store: MemseekStore, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    return {item.namespace for item in store.search(prefix, limit=100)}


def test_search_namespace_segment_boundary(nested: MemseekStore) -> None:
    for_each = [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"),
                ("foo2",)]  # fmt: skip
    put_all(nested, [(namespace, "k", {"v": 1}) for namespace in for_each])
    assert namespaces_found(nested, ("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert namespaces_found(nested, ("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert namespaces_found(nested, ("foo", "child")) == {("foo", "child"), ("foo", "child", "deep")}
    assert namespaces_found(nested, ("foo2",)) == {("foo2",)}
    assert namespaces_found(nested, ("fo",)) == set()


def test_search_empty_prefix_is_unconstrained(store: MemseekStore) -> None:
    put_all(store, [(namespace, "k", {"v": 1}) for namespace in [("a",), ("b", "c"), ("d", "e", "f")]])
    assert namespaces_found(store, ()) == {("a",), ("b", "c"), ("d", "e", "f")}


def test_search_namespace_like_metacharacters(nested: MemseekStore) -> None:
    for_each = [("user_1",), ("user_1", "child"), ("userX1",), ("a%b",), ("axxb",)]
    put_all(nested, [(namespace, "k", {"v": 1}) for namespace in for_each])
    assert namespaces_found(nested, ("user_1",)) == {("user_1",), ("user_1", "child")}
    assert namespaces_found(nested, ("a%b",)) == {("a%b",)}


def test_search_namespace_is_case_sensitive(nested: MemseekStore) -> None:
    put_all(nested, [(("Users",), "k", {"v": 1}), (("users",), "k", {"v": 2})])
    assert namespaces_found(nested, ("users",)) == {("users",)}


def test_vector_insert_with_auto_embedding(store: MemseekStore) -> None:
    put_all(store, [
        (("test",), "doc1", {"text": "short text"}),
        (("test",), "doc2", {"text": "longer text document"}),
        (("test",), "doc3", {"text": "longest text document here"}),
        (("test",), "doc4", {"description": "text in description field"}),
        (("test",), "doc5", {"content": "text in content field"}),
        (("test",), "doc6", {"body": "text in body field"}),
    ])  # fmt: skip
    keys = [item.key for item in store.search(("test",), query="long text")]
    assert "doc2" in keys and "doc3" in keys


def test_vector_update_with_embedding(store: MemseekStore) -> None:
    """The new value is what is searched after an update (scores are per response; see above)."""
    put_all(store, [
        (("test",), "doc1", {"text": "zany zebra Xerxes"}),
        (("test",), "doc2", {"text": "something about dogs"}),
        (("test",), "doc3", {"text": "text about birds"}),
    ])  # fmt: skip
    assert store.search(("test",), query="Zany Xerxes")[0].key == "doc1"
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    assert store.search(("test",), query="Zany Xerxes", filter={"text": "zany zebra Xerxes"}) == []
    after = store.search(("test",), query="new text about dogs")
    assert after[0].key == "doc1" and after[0].value == {"text": "new text about dogs"}


def test_vector_search_with_filters(store: MemseekStore) -> None:
    put_all(store, [
        (("test",), "doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        (("test",), "doc2", {"text": "red car", "color": "red", "score": 3.0}),
        (("test",), "doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        (("test",), "doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ])  # fmt: skip
    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert [item.key for item in results][:1] == ["doc1"] and len(results) == 2
    results = store.search(("test",), query="car", filter={"color": "red"})
    assert [item.key for item in results][:1] == ["doc2"] and len(results) == 2
    results = store.search(("test",), query="blue", filter={"score": {"$gt": 3.2}})
    assert [item.key for item in results][:1] == ["doc4"] and len(results) == 3
    results = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [item.key for item in results] == ["doc3"]


def test_vector_search_pagination(store: MemseekStore) -> None:
    put_all(store, [(("test",), f"doc{i}", {"text": f"test document number {i}"}) for i in range(5)])
    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == len(page2) == 2 and page1[0].key != page2[0].key
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_vector_search_edge_cases(store: MemseekStore) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert len(store.search(("test",), query=query)) == 1, query


def test_search_sorting(nested: MemseekStore) -> None:
    """PostgresStore's async test: the one match among 200 others in sibling namespaces leads."""
    others = [(("test", side), f"{side}{i}", {"text": "no"}) for side in "AZ" for i in range(100)]
    put_all(nested, [(("test", "M"), "M", {"text": "mmm"}), *others])
    results = nested.search(("test",), query="mmm", limit=10)
    assert len({item.key for item in results}) == 10
    assert results[0].key == "M" and results[0].score > results[1].score  # type: ignore[operator]


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("1", "这是中文"),
        ("2", "これは日本語です"),
        ("3", "이건 한국어야"),
        ("4", "Это русский"),
        ("5", "यह रूसी है"),
    ],  # fmt: skip
    ids=["chinese", "japanese", "korean", "russian", "hindi"],
)
def test_non_ascii(store: MemseekStore, key: str, text: str) -> None:
    put_all(store, [
        (("user_123", "memories"), "1", {"text": "这是中文"}),
        (("user_123", "memories"), "2", {"text": "これは日本語です"}),
        (("user_123", "memories"), "3", {"text": "이건 한국어야"}),
        (("user_123", "memories"), "4", {"text": "Это русский"}),
        (("user_123", "memories"), "5", {"text": "यह रूसी है"}),
    ])  # fmt: skip
    assert store.search(("user_123", "memories"), query=text)[0].key == key


# --- filters (SqliteStore) -----------------------------------------------------------------------


def test_sql_injection_filter_values(store: MemseekStore) -> None:
    put_all(store, [
        (("docs",), "doc1", {"access": "public", "title": "Public Document"}),
        (("docs",), "doc2", {"access": "private", "title": "Private Document"}),
        (("docs",), "doc3", {"access": "secret", "title": "Secret Document"}),
    ])  # fmt: skip
    for value in ["public' OR '1'='1", "public'; --", "public' UNION SELECT * FROM store --",
                  "public\x00' OR '1'='1", "''''", "public' OR 'א'='א"]:  # fmt: skip
        assert store.search(("docs",), filter={"access": value}) == [], value
    store.put(("docs",), "doc4", {"title": "O'Brien's Document", "access": "public"})
    [found] = store.search(("docs",), filter={"title": "O'Brien's Document"})
    assert found.value["title"] == "O'Brien's Document"


def test_numeric_filter_safety(store: MemseekStore) -> None:
    put_all(store, [
        (("items",), "item1", {"price": 10, "quantity": 5}),
        (("items",), "item2", {"price": 20, "quantity": 3}),
        (("items",), "item3", {"price": 30, "quantity": 1}),
    ])  # fmt: skip
    results = store.search(("items",), filter={"price": {"$gt": 15}})
    assert len(results) == 2 and all(item.value["price"] > 15 for item in results)
    assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
    assert store.search(("items",), filter={"price": {"$eq": float("nan")}}) == []
    assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3
    store.put(("items",), "item4", {"price": -10, "quantity": 0})
    assert [item.key for item in store.search(("items",), filter={"price": {"$lt": 0}})] == ["item4"]


def test_boolean_filter_safety(store: MemseekStore) -> None:
    put_all(store, [
        (("flags",), "flag1", {"active": True, "name": "Feature A"}),
        (("flags",), "flag2", {"active": False, "name": "Feature B"}),
        (("flags",), "flag3", {"active": True, "name": "Feature C"}),
    ])  # fmt: skip
    active = store.search(("flags",), filter={"active": True})
    assert len(active) == 2 and all(item.value["active"] is True for item in active)
    [inactive] = store.search(("flags",), filter={"active": False})
    assert inactive.value["active"] is False


def test_filter_keys_with_hyphens_and_digits(store: MemseekStore) -> None:
    put_all(store, [
        (("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}}),
        (("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}}),
    ])  # fmt: skip
    assert [item.key for item in store.search(("docs",), filter={"access-level": "public"})] == ["hyphen"]
    assert [item.key for item in store.search(("docs",), filter={"123abc": "ok"})] == ["digit"]
    nested_value = store.search(("docs",), filter={"user": {"access-level": "nested"}})
    assert [item.key for item in nested_value] == ["hyphen"]


# --- namespaces (InMemoryStore, PostgresStore, SqliteStore) --------------------------------------

BASIC = [
    ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
    ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789"),
]  # fmt: skip


AB = ("a", "b")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param({"prefix": AB}, [(*AB, "c"), (*AB, "d", "e"), (*AB, "d", "i"), (*AB, "f")], id="prefix"),
        pytest.param({"suffix": ("f",)}, [(*AB, "f"), ("a", "c", "f"), ("b", "a", "f")], id="suffix"),
        pytest.param({"prefix": ("a",), "suffix": ("f",)}, [(*AB, "f"), ("a", "c", "f")], id="both"),
        pytest.param({"prefix": AB, "max_depth": 3}, [(*AB, "c"), (*AB, "d"), (*AB, "f")], id="max-depth"),
        pytest.param({"prefix": AB, "limit": 2}, [(*AB, "c"), (*AB, "d", "e")], id="limit"),
        pytest.param({"prefix": AB, "offset": 2}, [(*AB, "d", "i"), (*AB, "f")], id="offset"),
        pytest.param({"prefix": ("a", "*", "f")}, [(*AB, "f"), ("a", "c", "f")], id="*-prefix"),
        pytest.param({"suffix": ("*", "f")}, [(*AB, "f"), ("a", "c", "f"), ("b", "a", "f")], id="*-suffix"),
        pytest.param({"prefix": ("nonexistent",)}, [], id="no-match"),
        pytest.param({"prefix": ("users", "123")}, [("users", "123")], id="exact"),
    ],
)
def test_list_namespaces_basic(make_store: MakeStore, options: dict[str, Any], expected: list[Any]) -> None:
    store = make_store()
    put_all(store, [(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(BASIC)])
    assert store.list_namespaces(**options) == expected


def test_list_namespaces_with_wildcards(store: MemseekStore) -> None:
    namespaces = [("users", "123"), ("users", "456"), ("users", "789", "settings"), ("admin", "users", "789"),
                  ("guests", "123"), ("guests", "456", "preferences")]  # fmt: skip
    put_all(store, [(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)])
    users = [("users", "123"), ("users", "456"), ("users", "789", "settings")]
    assert store.list_namespaces(prefix=("users", "*")) == users
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pagination(store: MemseekStore) -> None:
    put_all(store, [(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i}) for i in range(20)])
    for offset in (0, 5, 15):
        expected = [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == expected


def test_list_namespaces_max_depth(store: MemseekStore) -> None:
    namespaces = [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"),
                  ("h", "i", "j", "k")]  # fmt: skip
    put_all(store, [(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)])
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "g"), ("h", "i")]


def test_list_namespaces_no_conditions_and_empty_store(store: MemseekStore) -> None:
    assert store.list_namespaces() == []
    namespaces = [("a", "b"), ("c", "d"), ("e", "f", "g")]
    put_all(store, [(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)])
    assert store.list_namespaces() == namespaces


def test_list_namespaces(store: MemseekStore) -> None:
    """PostgresStore's variant, with its clean-up by delete."""
    kinds = (("test", "documents"), ("test", "images"), ("prod", "documents"))
    namespaces = [(env, kind, access) for env, kind in kinds for access in ("public", "private")]
    put_all(store, [(ns, "dummy", {"content": "dummy"}) for ns in namespaces])
    assert len(store.list_namespaces()) == len(namespaces)
    test_prefix = store.list_namespaces(prefix=["test"])  # type: ignore[arg-type]
    assert len(test_prefix) == 4 and all(ns[0] == "test" for ns in test_prefix)
    public = store.list_namespaces(suffix=["public"])  # type: ignore[arg-type]
    assert len(public) == 3 and all(ns[-1] == "public" for ns in public)
    assert all(len(ns) <= 2 for ns in store.list_namespaces(max_depth=2))
    assert len(store.list_namespaces(limit=3)) == 3
    for namespace in namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == []


def test_list_namespaces_operations(store: MemseekStore) -> None:
    """SqliteStore's variant: deeper namespaces, wildcards inside suffixes, depth and paging."""
    p = "pref"
    namespaces = [
        (p, "test", "documents", "public", p), (p, "test", "documents", "private", p),
        (p, "test", "images", "public", p), (p, "test", "images", "private", p),
        (p, "prod", "documents", "public", p), (p, "prod", "documents", "some", "nesting", "public", p),
        (p, "prod", "documents", "private", p),
    ]  # fmt: skip
    put_all(store, [(ns, "dummy", {"content": "dummy"}) for ns in namespaces])
    assert len(store.list_namespaces(prefix=(p, "test"))) == 4
    assert len(store.list_namespaces(prefix=(p, "test", "documents"))) == 2
    assert len(store.list_namespaces(suffix=("public", p))) == 4
    assert len(store.list_namespaces(prefix=(p, "test"), suffix=("public", p))) == 2
    assert len(store.list_namespaces(prefix=(p, "*", "documents"))) == 5
    assert len(store.list_namespaces(suffix=("*", "public", p))) == 4
    assert store.list_namespaces(suffix=("some", "*", "public", p)) == [namespaces[5]]
    assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))
    assert len(set(store.list_namespaces(max_depth=4, prefix=(p, "*", "documents")))) == 5
    assert len(store.list_namespaces(prefix=(p,), limit=3)) == 3
    assert len(store.list_namespaces(prefix=(p,), offset=3)) == len(namespaces) - 3
    assert set(store.list_namespaces(prefix=(p,))) == set(namespaces)


def test_list_namespaces_segment_boundary(store: MemseekStore) -> None:
    namespaces = [("foo",), ("foo", "child"), ("foobar",), ("foobar", "baz"), ("uid", "users", "alice"),
                  ("uid", "users", "malice"), ("uid", "a", "b", "alice")]  # fmt: skip
    put_all(store, [(ns, "k", {"v": 1}) for ns in namespaces])
    assert set(store.list_namespaces(prefix=["foo"], limit=100)) == {("foo",), ("foo", "child")}  # type: ignore[arg-type]
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {  # type: ignore[arg-type]
        ("uid", "users", "alice"), ("uid", "a", "b", "alice"),
    }  # fmt: skip
    assert set(store.list_namespaces(prefix=["uid", "*", "alice"], limit=100)) == {("uid", "users", "alice")}  # type: ignore[arg-type]
    assert len(store.list_namespaces(prefix=["uid"], limit=100)) == 3  # type: ignore[arg-type]


def test_namespace_labels_with_trailing_newline(store: MemseekStore) -> None:
    put_all(store, [(("users", "alice"), "k", {"v": 1}), (("users", "alice\n"), "k", {"v": 2})])
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("users", "alice")}  # type: ignore[arg-type]
    assert set(store.list_namespaces(prefix=["users", "alice"], limit=100)) == {("users", "alice")}  # type: ignore[arg-type]
    assert store.get(("users", "alice\n"), "k").value == {"v": 2}  # type: ignore[union-attr]


# --- concurrency (PostgresStore's async suite) ---------------------------------------------------


def test_large_batches_scaled_down(make_store: MakeStore) -> None:
    """`test_large_batches_async` at a tenth of its keys and one round: each key's put, get,
    listing, search, put again and delete, all at once; then every key ends deleted."""
    store = make_store()
    namespace = ("test", "foo", "bar", "baz", "0")
    calls: list[Any] = []
    for i in range(10):
        calls += [
            lambda i=i: store.put(namespace, f"key{i}", {"foo": f"bar{i}"}),
            lambda i=i: store.get(namespace, f"key{i}"),
            lambda: store.list_namespaces(prefix=None, max_depth=1),
            lambda: store.search(("test",)),
        ]

    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(asyncio.to_thread(call) for call in calls))

    assert len(asyncio.run(all_at_once())) == len(calls)
    found = {item.key for item in store.search(namespace, limit=20)}
    assert found == {f"key{i}" for i in range(10)}
    deletes = [lambda i=i: store.delete(namespace, f"key{i}") for i in range(10)]

    async def delete_all() -> list[Any]:
        return await asyncio.gather(*(asyncio.to_thread(call) for call in deletes))

    asyncio.run(delete_all())
    assert store.search(namespace) == []
