"""Amazon Bedrock through boto3/botocore: the ``bedrock-runtime`` client's ``converse``,
``converse_stream``, ``invoke_model`` and ``invoke_model_with_response_stream`` (Strands'
``BedrockModel`` and DevDuck's default provider call the first two).

One wrapper on ``botocore.client.BaseClient._make_api_call``, the one method every client
operation goes through; a call of any other service or operation goes straight on (one dict
lookup). ``opentelemetry-instrument`` loads this as ``agent_trace_bedrock``; by hand::

    BedrockInstrumentor().instrument()
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from otel_agent_trace.instrumentation._deferred import DeferredInstrumentor
from otel_agent_trace.instrumentation._patching import Patches


class BedrockInstrumentor(DeferredInstrumentor):  # type: ignore[misc]
    """Model-call spans for Amazon Bedrock (``gen_ai.provider.name = aws.bedrock``)."""

    library_module = "botocore.client"

    # Not ``step_over_peers``: the method carries every AWS call of every service, and another
    # package's wrapper of it (the contrib botocore instrumentation) must keep its spans for them.
    _patches = Patches("agent_trace_bedrock")  # class-level: a singleton

    def instrumentation_dependencies(self) -> Collection[str]:
        from otel_agent_trace.instrumentation.bedrock.package import (
            _instruments,  # read when asked, not at start-up
        )

        return _instruments

    def _instrument_now(self, **kwargs: Any) -> None:
        from otel_agent_trace.instrumentation.bedrock.wrappers import api_call

        self._patches.wrap("botocore.client", "BaseClient._make_api_call", api_call(self._patches))
