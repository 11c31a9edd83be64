"""End-to-end tests: real ``opentelemetry-instrument`` subprocesses, real files, real Phoenix."""

from tests.services.phoenix import phoenix  # noqa: F401
