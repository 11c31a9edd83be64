"""What every model-call instrumentation shares: the model span, stream proxies, patching."""
