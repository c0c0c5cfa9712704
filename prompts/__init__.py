"""Prompt and tool-description files, shipped inside the package as ``recallmem._prompts``."""
