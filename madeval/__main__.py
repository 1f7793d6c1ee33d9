"""``python -m madeval`` runs the command line."""

from madeval.cli.main import main

main()
