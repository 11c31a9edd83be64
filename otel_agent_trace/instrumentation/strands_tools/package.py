_instruments = ("strands-agents >= 1.0, < 2",)
