_instruments = ("google-adk >= 2.13, < 3",)
