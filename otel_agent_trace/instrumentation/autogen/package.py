_instruments = ("autogen-agentchat >= 0.7, < 0.8",)
