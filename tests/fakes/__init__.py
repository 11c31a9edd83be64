"""Local stand-ins for remote services (a recorded-response LLM server)."""
