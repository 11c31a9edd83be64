_instruments = ("cohere >= 5.20, < 8",)
