"""``python -m gavel`` runs the command line."""

from gavel.cli.main import main

main()
