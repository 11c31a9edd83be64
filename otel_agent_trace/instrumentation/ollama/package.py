_instruments = ("ollama >= 0.4, < 1",)
