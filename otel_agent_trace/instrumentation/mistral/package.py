_instruments = ("mistralai >= 3.0, < 4",)
