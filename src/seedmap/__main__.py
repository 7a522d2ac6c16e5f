"""The `seedmap` command (and `python -m seedmap`)."""

import gc


def main() -> None:
    """cli.entry, with Python's cyclic collector paused while the command's modules import: numba and the
    kernel modules create some 90,000 objects that live for the whole run, and the collections their
    creation set off walked them again and again (60 ms of a 0.7 s start-up, measured). Frozen once
    imported, they are out of every later collection's way."""
    gc.disable()
    from seedmap.cli import entry

    gc.freeze()
    gc.enable()
    entry()


if __name__ == "__main__":
    main()
