"""Helpers of ``benchmarks/bench_genai_calls.py``: the local stub model server, the child that
measures one configuration, and the generic on/off switch of an instrumentation's patches."""
