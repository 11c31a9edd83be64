"""The ``otel-agent-trace`` command line: one module per subcommand."""
