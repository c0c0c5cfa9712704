"""Reproducible retrieval benchmarks for recallmem: quality, peers, scale, ablation.

Run ``python -m bench --help`` from the repository root; see bench/README.md.
"""
