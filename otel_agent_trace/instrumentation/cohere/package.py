_instruments = ("cohere >= 6.0, < 8",)
