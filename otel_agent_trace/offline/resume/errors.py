"""What resume raises when a session cannot be resumed as asked."""


class ResumeError(ValueError):
    """The session cannot be resumed as asked (trace tier, no such snapshot, unknown agent)."""
