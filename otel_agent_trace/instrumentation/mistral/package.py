_instruments = ("mistralai >= 2.0, < 4",)
