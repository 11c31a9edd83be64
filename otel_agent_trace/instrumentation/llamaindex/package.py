_instruments = ("llama-index-core >= 0.14, < 0.15",)
