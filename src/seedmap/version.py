"""seedmap's version: in the SAM header, the index store's header, and the kernel cache's key."""

__version__ = "0.1.0"
