"""The standard library is always there: nothing to require."""

_instruments: tuple[str, ...] = ()
