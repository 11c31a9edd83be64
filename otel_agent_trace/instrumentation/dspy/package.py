_instruments = ("dspy >= 3.0, < 4",)
