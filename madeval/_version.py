"""madeval's version, in a module of its own so that internal modules need not import the package
root (which imports them: a cycle). ``madeval.__version__`` re-exports it."""

__version__ = "0.1.0"
