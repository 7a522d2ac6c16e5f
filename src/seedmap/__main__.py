from seedmap.cli import entry

entry()
