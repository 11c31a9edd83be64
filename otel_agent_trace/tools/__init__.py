"""The session recorder as a tool agents can call (DevDuck's ``session_recorder``).

* :func:`session_recorder` and :data:`SESSION_RECORDER_SCHEMA`: a plain function and its
  JSON-schema definition, for any tool loop;
* ``otel_agent_trace.tools.strands_tool.session_recorder``: a Strands tool;
* ``otel_agent_trace.tools.langchain_tool.session_recorder``: a LangChain tool;
* ``otel-agent-trace mcp``: an MCP stdio server (``otel_agent_trace.tools.mcp_server``).
"""

from .recorder import ACTIONS, SESSION_RECORDER_SCHEMA, recent_sessions, session_recorder

__all__ = ["ACTIONS", "SESSION_RECORDER_SCHEMA", "recent_sessions", "session_recorder"]
