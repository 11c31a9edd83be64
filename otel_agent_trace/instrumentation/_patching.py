"""The one way our instrumentors patch: wrap, switch on and off, and remove only what is ours.

Each instrumentor owns one :class:`Patches`. It

* wraps a function or method with ``wrapt`` (:meth:`Patches.wrap`), or, where a C builtin such
  as ``open`` is too hot for a ``wrapt`` proxy, replaces it by a plain function
  (:meth:`Patches.replace`);
* holds the instrumentor's on/off switch (:attr:`Patches.on`, one attribute read): a wrapper of
  ours that is switched off calls straight through;
* holds the instrumentor's tracer (the ``tracer_provider`` given to ``instrument()``, reset by
  ``uninstrument()``), so two instrumentors given two providers never mix their spans;
* removes its own wrappers wherever they sit in a chain (:meth:`Patches.stop`): outermost, it puts
  back what it replaced; under another package's ``wrapt`` wrapper it splices itself out of that
  wrapper's ``__wrapped__`` (the other wrapper stays and keeps working); under a wrapper it cannot
  splice (a plain closure), it stays as a switched-off pass-through and is reused when the
  instrumentor is switched on again (never two wrappers of ours around one function).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

import wrapt
from opentelemetry import trace

from otel_agent_trace import semconv
from otel_agent_trace._internal.guard import internal_error, report_once
from otel_agent_trace._version import __version__

OURS = "_agent_trace_patches"  # on each wrapper function of ours: the Patches it belongs to
_PROXIES: tuple[type, ...] = tuple(
    t for t in (getattr(wrapt, "BaseObjectProxy", None), wrapt.ObjectProxy) if isinstance(t, type)
)
_OS_SUPPORT_SETS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks", "supports_effective_ids")
_MAX_CHAIN = 64


def resolve(target: Any, path: str) -> tuple[Any, str] | None:
    """``(owner, attribute)`` of ``path`` (``"Class.method"`` or ``"function"``) under ``target``
    (a module, a module name or a class); ``None`` when any part is missing (another version)."""
    if isinstance(target, str):
        try:
            target = importlib.import_module(target)
        except ImportError:
            return None
    *parents, attr = path.split(".")
    owner = target
    for part in parents:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    if _current(owner, attr) is None:
        return None
    return owner, attr


def _current(owner: Any, attr: str) -> Any:
    """What ``owner.attr`` is now, as stored (for a class: the raw descriptor along its MRO)."""
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if attr in klass.__dict__:
                return klass.__dict__[attr]
        return None
    return getattr(owner, attr, None)


def _wrapper_of(node: Any) -> Any:
    """The wrapper function of a ``wrapt`` wrapper (``None`` for anything else)."""
    try:
        return object.__getattribute__(node, "_self_wrapper") if isinstance(node, _PROXIES) else None
    except AttributeError:
        return None


def owner_of(node: Any) -> Patches | None:
    """The :class:`Patches` a wrapper in a chain belongs to (``None``: not ours)."""
    func = _wrapper_of(node)
    if func is None:
        func = node
    try:
        found = getattr(func, OURS, None)
    except Exception:  # an exotic object whose __getattr__ raises: not ours
        return None
    return found if isinstance(found, Patches) else None


def chain(owner: Any, attr: str) -> list[Any]:
    """``owner.attr`` and every object under it along ``__wrapped__`` (outermost first)."""
    out: list[Any] = []
    node = _current(owner, attr)
    while node is not None and len(out) < _MAX_CHAIN:
        out.append(node)
        try:
            node = getattr(node, "__wrapped__", None)
        except Exception:  # an exotic object whose __getattr__ raises: the chain ends there
            break
    return out


class _Patch:
    __slots__ = ("owner", "attr", "original", "installed", "had_own")

    def __init__(self, owner: Any, attr: str, original: Any, installed: Any, had_own: bool):
        self.owner = owner
        self.attr = attr
        self.original = original
        self.installed = installed
        self.had_own = had_own  # a class attribute of its own (not inherited): put back, else deleted


class Patches:
    """The patches, the on/off switch and the tracer of one instrumentor.

    ``step_over_peers``: where another package already wrapped a method before us, our wrapper
    calls what is under that package's wrapper, so one call makes one span, ours (the model SDK
    instrumentations; see ``docs/instrumentation.md``).
    """

    def __init__(self, name: str, *, step_over_peers: bool = False):
        self.name = name
        self.on = False
        self.step_over_peers = step_over_peers
        self.foreign: list[str] = []  # methods a peer had wrapped before us
        self._patches: list[_Patch] = []
        self._parked: list[_Patch] = []  # ours, under a wrapper we cannot splice: switched off
        self._tracer: trace.Tracer | None = None

    # -- switch and tracer ----------------------------------------------------------------------

    def start(self, tracer_provider: Any = None) -> None:
        """Switch on; spans from ``tracer_provider`` (``None``: the global provider)."""
        self._tracer = (
            None
            if tracer_provider is None
            else tracer_provider.get_tracer(semconv.INSTRUMENTATION_SCOPE, __version__)
        )
        self.on = True

    def tracer(self) -> trace.Tracer:
        """This instrumentor's tracer (looked up once, not per call)."""
        found = self._tracer
        if found is None:
            found = self._tracer = trace.get_tracer(
                semconv.INSTRUMENTATION_SCOPE, __version__
            )  # a proxy: follows the global provider
        return found

    # -- patching -------------------------------------------------------------------------------

    def wrap(self, target: Any, path: str, wrapper: Callable[..., Any]) -> bool:
        """Wrap ``path`` under ``target`` with a ``wrapt`` wrapper
        ``wrapper(wrapped, instance, args, kwargs)``; ``False`` when it does not exist."""
        found = resolve(target, path)
        if found is None:
            return False
        owner, attr = found
        if self._reuse(owner, attr):
            return True
        original = _current(owner, attr)
        if self.step_over_peers and isinstance(original, _PROXIES) and owner_of(original) is None:
            where = f"{target if isinstance(target, str) else getattr(target, '__name__', target)}.{path}"
            self.foreign.append(where)
            report_once(
                f"foreign:{where}",
                "otel-agent-trace: %s is already instrumented by another package; "
                "%s records these calls once, without that package's span",
                where,
                self.name,
            )
            wrapper = _stepping_over(wrapper)
        installed = wrapt.FunctionWrapper(original, self._gate(wrapper))
        self._install(owner, attr, original, installed)
        return True

    def replace(self, owner: Any, attr: str, make: Callable[[Any], Callable[..., Any]]) -> bool:
        """Replace ``owner.attr`` by the plain function ``make(original)`` (which checks
        :attr:`on` itself). One original gets one replacement wherever it is found
        (``builtins.open`` is ``io.open``), so identity checks and pickling by name still work."""
        original = getattr(owner, attr, None)
        if original is None:
            return False
        if self._reuse(owner, attr):
            return True
        for patch in self._patches:
            if patch.original is original:
                self._install(owner, attr, original, patch.installed)
                return True
        installed = make(original)
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(installed, name, getattr(original, name))
            except (AttributeError, TypeError):
                pass
        installed.__wrapped__ = original
        setattr(installed, OURS, self)
        self._install(owner, attr, original, installed)
        if owner is os:  # keep `os.open in os.supports_dir_fd` style checks true
            for group in _OS_SUPPORT_SETS:
                members = getattr(os, group, None)
                if isinstance(members, set) and original in members:
                    members.add(installed)
        return True

    def wraps(self, target: Any, path: str) -> bool:
        """Whether a wrapper of ours is anywhere in the chain of ``path`` under ``target``."""
        found = resolve(target, path)
        return found is not None and any(owner_of(node) is self for node in chain(*found))

    def stop(self) -> None:
        """Switch off, forget the tracer, and remove our wrappers (see the module docstring)."""
        self.on = False
        self._tracer = None
        self.foreign.clear()
        while self._patches:
            patch = self._patches.pop()
            try:
                self._remove(patch)
            except Exception as exc:  # never raise into the host; the wrapper stays switched off
                self._parked.append(patch)
                internal_error(f"{self.name}: removing its wrapper of {patch.attr}", exc)

    # -- internals ------------------------------------------------------------------------------

    def _gate(self, wrapper: Callable[..., Any]) -> Callable[..., Any]:
        def gate(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            if self.on:
                return wrapper(wrapped, instance, args, kwargs)
            return wrapped(*args, **kwargs)

        setattr(gate, OURS, self)
        return gate

    def _install(self, owner: Any, attr: str, original: Any, installed: Any) -> None:
        had_own = not isinstance(owner, type) or attr in owner.__dict__
        setattr(owner, attr, installed)
        self._patches.append(_Patch(owner, attr, original, installed, had_own))

    def _reuse(self, owner: Any, attr: str) -> bool:
        """A wrapper of ours left parked here (or still installed): use it again, add none."""
        for patch in self._patches:
            if patch.owner is owner and patch.attr == attr:
                return True
        for patch in list(self._parked):
            if patch.owner is owner and patch.attr == attr:
                self._parked.remove(patch)
                if any(self._ours(node, patch) for node in chain(owner, attr)):
                    self._patches.append(patch)
                    return True
        return False

    def _ours(self, node: Any, patch: _Patch) -> bool:
        # A wrapper of ours may also be found bound: ``unwrap(cls, name)`` of contrib reads
        # ``getattr(cls, name)`` (a bound wrapper of the one below it) and stores its ``__wrapped__``.
        return node is patch.installed or owner_of(node) is self

    def _remove(self, patch: _Patch) -> None:
        owner, attr = patch.owner, patch.attr
        for _ in range(_MAX_CHAIN):  # until no wrapper of ours is left in the chain
            nodes = chain(owner, attr)
            index = next((i for i, node in enumerate(nodes) if self._ours(node, patch)), None)
            if index is None:
                return  # gone (or replaced wholesale by someone else): nothing of ours runs
            if index == 0:
                if patch.had_own:
                    setattr(owner, attr, patch.original)
                else:
                    delattr(owner, attr)
            else:
                outer = nodes[index - 1]
                if not isinstance(outer, _PROXIES):
                    self._parked.append(patch)  # under a plain closure: stays, switched off
                    return
                outer.__wrapped__ = patch.original  # splice ours out of the other wrapper's chain
                if outer.__wrapped__ is not patch.original:
                    self._parked.append(patch)
                    return
            _forget_os_support(owner, patch.installed)


def _forget_os_support(owner: Any, installed: Any) -> None:
    if owner is os:
        for group in _OS_SUPPORT_SETS:
            members = getattr(os, group, None)
            if isinstance(members, set):
                members.discard(installed)


def _stepping_over(wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """Our wrapper, calling what is under a peer's wrapper (one span per call, ours)."""

    def call(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        inner = getattr(wrapped, "__wrapped__", None)
        if inner is None or not callable(inner):
            return wrapper(wrapped, instance, args, kwargs)
        return wrapper(inner, instance, args, kwargs)

    return call
