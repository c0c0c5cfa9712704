"""recallmem: long-term memory for LangChain agents."""
