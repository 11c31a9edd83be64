_instruments = ("anthropic >= 0.40, < 3",)
