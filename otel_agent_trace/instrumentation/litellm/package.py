_instruments = ("litellm >= 1.110, < 2",)
