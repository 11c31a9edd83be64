_instruments = ("openai-agents >= 0.2, < 1",)
