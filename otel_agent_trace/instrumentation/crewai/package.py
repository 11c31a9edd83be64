_instruments = ("crewai >= 1.15.30, < 2",)  # 1.15.0 checked: its native tool calls take another path
