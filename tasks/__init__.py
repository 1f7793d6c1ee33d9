"""Task YAML files shipped with madeval (installed as the ``madeval.tasks`` package)."""
