"""The ``gavel`` command line: one small module per subcommand."""
