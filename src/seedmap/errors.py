"""The one exception the CLI turns into a single line on stderr."""


class SeedmapError(Exception):
    """A user-facing error: bad input, bad index, impossible parameters."""


class Terminated(BaseException):
    """SIGTERM (what cluster schedulers send): unwinds like Ctrl-C, so temporary files are removed."""
