_instruments = ("smolagents >= 1.20, < 2",)
