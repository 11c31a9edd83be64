"""The ``agent_trace`` distro and configurator for ``opentelemetry-instrument``.

The distro sets defaults (before the configurator runs):

* ``OTEL_TRACES_EXPORTER=agent_session`` (local session files only), plus ``otlp`` when
  ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set;
* ``OTEL_METRICS_EXPORTER=none`` and ``OTEL_LOGS_EXPORTER=none`` (no "connection refused" noise
  about collectors nobody configured);
* ``OTEL_PYTHON_CONFIGURATOR=agent_trace`` so that our configurator is the one used even when
  ``opentelemetry-distro`` is installed too.

The configurator is the SDK's own, with one change: the ``agent_session`` exporter becomes the
synchronous session processor, and every other exporter (``otlp``, ``console``, …) is batched
behind a redacting wrapper, because what leaves the machine is shareable output.
"""

from __future__ import annotations

import logging
import os

from opentelemetry.instrumentation.distro import BaseDistro
from opentelemetry.sdk._configuration import _OTelSDKConfigurator

EXPORTER_NAME = "agent_session"
CONFIGURATOR_NAME = "agent_trace"
_LOAD_LOGGER = "opentelemetry.instrumentation.auto_instrumentation._load"


def _default_traces_exporter(env: os._Environ[str] | dict[str, str]) -> str:
    names = [EXPORTER_NAME]
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        names.append("otlp")
    return ",".join(names)


class _SkippedConfiguratorFilter(logging.Filter):
    """Drops ``opentelemetry-instrument``'s warning that another configurator was not loaded when
    that is because ours was chosen (it would print on every run with ``opentelemetry-distro``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Configuration of %s not loaded"):
            return True
        return CONFIGURATOR_NAME not in (record.args or ())


class AgentTraceDistro(BaseDistro):
    """Defaults for recording agents locally, forwarding only when a backend is configured."""

    def _configure(self, **kwargs):
        env = os.environ
        env.setdefault("OTEL_TRACES_EXPORTER", _default_traces_exporter(env))
        env.setdefault("OTEL_METRICS_EXPORTER", "none")
        env.setdefault("OTEL_LOGS_EXPORTER", "none")
        env.setdefault("OTEL_PYTHON_CONFIGURATOR", CONFIGURATOR_NAME)
        load_logger = logging.getLogger(_LOAD_LOGGER)
        if not any(isinstance(f, _SkippedConfiguratorFilter) for f in load_logger.filters):
            load_logger.addFilter(_SkippedConfiguratorFilter())


class AgentTraceConfigurator(_OTelSDKConfigurator):
    """The SDK configurator with the session processor and a redacting wrapper for exporters."""

    def _configure(self, **kwargs):
        from opentelemetry.trace import get_tracer_provider

        from otel_agent_trace._internal.guard import report_once
        from otel_agent_trace._internal.sdk_compat import configurator_takes_export_span_processor
        from otel_agent_trace.recording import add_session_processor, session_processor_for

        if not configurator_takes_export_span_processor():  # SDK < 1.40 (pyproject says >= 1.40)
            report_once(
                "sdk-version",
                "otel-agent-trace: this opentelemetry-sdk is too old (1.40 or newer is needed); "
                "nothing is recorded or forwarded.",
            )
            return
        kwargs.setdefault("export_span_processor", session_processor_for)
        super()._configure(**kwargs)
        add_session_processor(get_tracer_provider())
