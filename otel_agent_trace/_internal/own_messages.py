"""The messages list a model call's capture hands on, marked as made of its own copies."""

from __future__ import annotations


class OwnMessages(list):
    """A model call's messages as captured: copies the capture made, holding nothing of the
    agent's, that nobody changes afterwards. The recorder keeps them as they are, with no copy of
    its own, and knows them again by identity when the next call resends them (a resent
    conversation then costs a pointer comparison per message there, whatever its messages hold)."""

    __slots__ = ()
