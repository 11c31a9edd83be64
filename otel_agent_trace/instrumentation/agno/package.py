_instruments = ("agno >= 3.0, < 4",)
