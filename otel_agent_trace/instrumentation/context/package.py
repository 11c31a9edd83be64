_instruments: tuple[str, ...] = ()
