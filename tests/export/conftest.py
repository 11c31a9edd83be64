"""Export tests: real recordings (real subprocesses), the real CLI, a real OTLP receiver (Phoenix)."""

from tests.services.phoenix import phoenix  # noqa: F401
