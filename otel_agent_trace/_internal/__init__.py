"""Internals: nothing here is public API."""
