_instruments = ("anthropic >= 0.45, < 3",)
