"""Auto-instrumentation: one ``BaseInstrumentor`` per library, each in its own folder with a
``package.py`` declaring the versions it instruments. All are skipped silently when the library
is absent."""
