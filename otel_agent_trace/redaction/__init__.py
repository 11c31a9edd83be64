"""Redaction: the one place that decides what a secret looks like and how it is replaced.

Applied wherever shareable output is written: the trace-tier session file (and so its ZIP) and
every span forwarded to an exporter (OTLP, console, …). The checkpoint tier is never redacted.

What is removed, and the marker that replaces it (so a replay can tell a redaction from a real
difference):

* values (6+ chars) of environment variables whose names look secret → ``<redacted:env:NAME>``;
* known token shapes, in the environment or not (``sk-…``, ``sk-ant-…``, ``ghp_…``,
  ``github_pat_…``, ``AKIA…``, ``xox?-…``, JWTs, Google/Stripe/Hugging Face keys, PEM private-key
  blocks, ``Bearer …``) → ``<redacted:openai_key>`` etc.;
* URL user-info (``scheme://user:pass@host``) → ``scheme://<redacted:userinfo>@host``;
* values under secret-looking keys: dict keys, JSON / Python-literal text (``"api_key": "…"``),
  headers and assignments (``Authorization: Basic …``, ``token=…``), URL query parameters and
  command-line flags (``--password …``) → ``<redacted:key:api_key>``; in text, only a value that
  can be a credential (not code such as ``api_key = os.getenv("API_KEY")``, a placeholder or
  words: see ``credentials.holds_secret``);
* the home directory as a path prefix only → ``~`` (never a bare substring);
* user patterns (``AGENT_TRACE_REDACT_PATTERNS`` or :func:`add_pattern`) → ``<redacted:pattern>``.

Exact strings on the allow list (``AGENT_TRACE_REDACT_ALLOW`` or :func:`allow`) are kept; an
allow-list entry that names an environment variable keeps that variable's value.

The redactor never raises (a failure yields ``<redacted:error>``) and is idempotent. Environment
secrets are re-read whenever a secret-looking variable is added, removed or changed (a cheap check
on each call), so keys an agent loads from ``.env`` after start-up are redacted too.

Cost: one RE2 pass first says whether a text holds anything any rule would change (most text
does not; see ``prefilter.PREFILTER_STATIC``); a span's new attribute strings take one pass
together. Otherwise each rule runs only on text that holds what it needs (substring checks first; Python's
``re`` is slow on alternations), the key rules only on lines where a secret-looking key meets its
separator, searched from near their key words; keys are judged once, and strings, attribute
pairs and key markers are remembered in bounded memos. A pass is repeated until nothing changes,
since a replacement changes its neighbours' context. Every shortcut is tested to give what the
rules alone give (``tests/privacy/test_redaction_prefilter.py``).

The package: ``names`` (secret-looking variable and key names), ``markers``, ``patterns`` (the
token catalogue and the key rules of text), ``prefilter`` (the RE2 pass), ``credentials`` (whether
a value under a secret key can be a credential), ``text`` (the rules on one string, the
environment's secrets), ``values`` (:class:`Redactor`: span names and attributes, nested values,
previews) and ``shared`` (the process-wide redactor). This module keeps the public names.
"""

from __future__ import annotations

from .markers import marker
from .names import is_secret_key, is_secret_name
from .shared import add_pattern, allow, get_redactor, redact, reset_redactor
from .values import Redactor

__all__ = [
    "Redactor",
    "add_pattern",
    "allow",
    "get_redactor",
    "is_secret_key",
    "is_secret_name",
    "marker",
    "redact",
    "reset_redactor",
]
