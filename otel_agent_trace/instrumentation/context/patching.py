"""wrapt patching that survives other instrumentations wrapping the same functions.

``opentelemetry.instrumentation.utils.unwrap`` removes whatever wrapper is outermost; when another
instrumentation wrapped the same method after us, that would remove theirs and leave ours.
:func:`unwrap_own` removes only our own wrapper when it is outermost, and otherwise leaves the
chain alone and reports that the wrapper must turn itself into a pass-through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wrapt import wrap_function_wrapper


def _chain(owner: Any, name: str) -> Any:
    return vars(owner).get(name) if hasattr(owner, "__dict__") else getattr(owner, name, None)


def is_wrapped_by(owner: Any, name: str, wrapper: Callable[..., Any]) -> bool:
    """Whether ``wrapper`` is anywhere in the wrapper chain of ``owner.name``."""
    func = _chain(owner, name)
    while func is not None:
        if getattr(func, "_self_wrapper", None) is wrapper:
            return True
        func = getattr(func, "__wrapped__", None)
    return False


def wrap(owner: Any, name: str, wrapper: Callable[..., Any]) -> bool:
    """Wrap ``owner.name`` unless ``wrapper`` already wraps it; ``False`` when it is missing."""
    if _chain(owner, name) is None and not hasattr(owner, name):
        return False
    if is_wrapped_by(owner, name, wrapper):
        return True
    wrap_function_wrapper(owner, name, wrapper)
    return True


def unwrap_own(owner: Any, name: str, wrapper: Callable[..., Any]) -> bool:
    """Remove ``wrapper`` if it is the outermost wrapper of ``owner.name``; ``True`` when removed."""
    func = _chain(owner, name)
    if func is not None and getattr(func, "_self_wrapper", None) is wrapper:
        setattr(owner, name, func.__wrapped__)
        return True
    return False
