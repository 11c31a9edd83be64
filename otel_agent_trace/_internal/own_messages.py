"""The messages list a model call's capture hands on, marked as made of its own copies."""

from __future__ import annotations


class OwnMessages(list):
    """A model call's messages as captured, whose plain messages (dicts of ``str`` keys and scalar
    values) are copies the capture made and nobody changes afterwards: the recorder keeps such a
    message as it is, with no copy of its own, and knows it again by identity when the next call
    resends it (a resent conversation then costs a pointer comparison per message there)."""

    __slots__ = ()
