"""Framework adapters over the Python SDK, each an optional extra of the package:

- `memseek.integrations.langchain.MemseekRetriever` (`pip install 'memseek[langchain]'`): a
  LangChain retriever over a view or a search request;
- `memseek.integrations.langgraph.MemseekStore` (`pip install 'memseek[langgraph]'`): LangGraph's
  long-term memory store.

They call the service over HTTP through `memseek.client` only, like any other client, so they run
wherever the SDK runs; importing this package imports neither framework.
"""
