"""Local dataset mirrors (JSON lines under ``MADEVAL_DATA_DIR``) read without ``datasets``."""

from .rows import MirrorBroken, MirrorNotPlain, mirror_rows, read_mirror

__all__ = ["MirrorBroken", "MirrorNotPlain", "mirror_rows", "read_mirror"]
