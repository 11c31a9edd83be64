_instruments = ("openai >= 1.40, < 4",)
