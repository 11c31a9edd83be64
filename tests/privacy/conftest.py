"""Privacy tests: planted secrets, real ``opentelemetry-instrument`` runs, real Phoenix."""

from tests.services.phoenix import phoenix  # noqa: F401
