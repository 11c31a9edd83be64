_instruments = ("google-genai >= 2.30, < 4",)
