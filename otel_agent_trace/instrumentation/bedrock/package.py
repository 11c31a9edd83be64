_instruments = ("botocore >= 1.34.116, < 2",)  # 1.34.116: the first with Converse / ConverseStream
