"""LangChain's own interfaces over a :class:`~recallmem.Memory`: a LangGraph store
(``langgraph``), a retriever (``retriever``), and fact ids from any unique prefix
(``lookup``)."""
