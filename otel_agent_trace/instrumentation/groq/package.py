_instruments = ("groq >= 0.30, < 2",)
