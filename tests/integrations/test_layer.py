"""The adapters are clients like any other: importable without any server module, and
`memseek.integrations` alone imports neither framework."""

from __future__ import annotations

import textwrap

from tests.sdk.test_layer import SERVER_MODULES
from tests.sdk.test_layer import runs_alone

# LangChain is built on pydantic, which the SDK alone does without
BLOCKED = tuple(name for name in SERVER_MODULES if name != "pydantic")

IMPORT_ALONE = textwrap.dedent(
    """
    import memseek.integrations
    assert not {{"langchain_core", "langgraph"}} & set(sys.modules), "the package imported a framework"
    from memseek.integrations.langchain import MemseekRetriever
    from memseek.integrations.langgraph import MemseekStore
    MemseekRetriever(url="http://127.0.0.1:9", view="customer_context")
    MemseekStore(url="http://127.0.0.1:9").close()
    print("ok")
    """
)


def test_importable_with_no_server_module() -> None:
    runs_alone(IMPORT_ALONE, BLOCKED)
