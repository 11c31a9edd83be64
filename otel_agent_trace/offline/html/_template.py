# ruff: noqa: E501  (the page's Content-Security-Policy line is as long as it is)
"""The page of ``view --html`` and ``diff --html``: inline CSS and script, no network.

The style and the script are package data beside this module (``page.css``, ``page.js``), read
once. The data blocks (``<script type="application/json">``) are written between :data:`HEAD`
and :data:`SCRIPT`; the script builds the page from them with ``textContent`` only.
"""

from __future__ import annotations

from importlib.resources import files

_HERE = files("otel_agent_trace.offline.html")

HEAD = (
    r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>otel-agent-trace session</title>
<style>
"""
    + _HERE.joinpath("page.css").read_text(encoding="utf-8")
    + """</style>
</head>
<body>
<div id="errors"></div>
<div id="app"></div>
"""
)

SCRIPT = (
    "<script>\n"
    + _HERE.joinpath("page.js").read_text(encoding="utf-8")
    + """</script>
</body>
</html>
"""
)
