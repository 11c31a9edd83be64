"""The install checks reach the package registry and take minutes: they run only when asked for.

``python -m pytest`` leaves out the tests marked ``install``, and so does a ``-m`` expression
that does not name ``install`` (``-m "not phoenix and not chromium"`` stays offline);
``python -m pytest -m install tests/install`` runs them (the last step of .ci/run). A conftest
rather than ``addopts = "-m 'not install'"``: a ``-m`` on the command line replaces the one in
addopts, and would bring them back.
"""

from __future__ import annotations

import re

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if re.search(r"\binstall\b", config.getoption("markexpr") or ""):
        return  # -m names them: the expression selects
    left_out = [item for item in items if item.get_closest_marker("install")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker("install")]
