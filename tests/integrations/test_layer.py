"""The adapters are clients like any other: importable without any server module, and
`memseek.integrations` alone imports neither framework."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.sdk.test_layer import SERVER_MODULES

# LangChain is built on pydantic, which the SDK alone does without
BLOCKED = tuple(name for name in SERVER_MODULES if name != "pydantic")

IMPORT_ALONE = textwrap.dedent(
    """
    import importlib.abc, sys
    BLOCKED = {blocked!r}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                raise ImportError(f"{{name}} is a server module")

    sys.meta_path.insert(0, Block())
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
    code = IMPORT_ALONE.format(blocked=BLOCKED)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
