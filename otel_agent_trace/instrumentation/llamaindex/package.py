_instruments = ("llama-index-core >= 0.14.25, < 0.15",)
