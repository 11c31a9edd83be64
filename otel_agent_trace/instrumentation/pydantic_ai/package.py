_instruments = ("pydantic-ai-slim >= 2.0, < 3",)
