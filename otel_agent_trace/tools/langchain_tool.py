"""``session_recorder`` as a LangChain tool: ``create_agent(model, tools=[session_recorder])``."""

from __future__ import annotations

from langchain_core.tools import StructuredTool

from . import recorder

session_recorder = StructuredTool.from_function(
    recorder.session_recorder,
    name="session_recorder",
    description=recorder.DESCRIPTION,
    parse_docstring=True,
)
