_instruments = ("google-genai >= 3.0, < 4",)
