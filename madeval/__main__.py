"""``python -m madeval`` runs the command line."""

from .cli.main import main

main()
