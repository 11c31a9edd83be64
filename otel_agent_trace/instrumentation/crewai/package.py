_instruments = ("crewai >= 1.15, < 2",)
