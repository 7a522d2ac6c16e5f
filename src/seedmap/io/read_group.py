"""`--rg '@RG\\tID:x\\tSM:y'`: a read group header line, and the ID every record is tagged with (RG:Z:)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from seedmap.errors import SeedmapError

FIELD = re.compile(r"[A-Za-z][A-Za-z0-9]:[ -~]+")  # TAG:value, printable ASCII (SAM spec, header fields)


@dataclass(frozen=True)
class ReadGroup:
    line: str  # the @RG header line, tab separated, no newline
    id: str

    def add_to_header(self, text: str) -> str:
        """The header with this @RG line after the @HD/@SQ lines (before @PG, as bwa writes it)."""
        lines = text.rstrip("\n").split("\n")
        at = next((i for i, line in enumerate(lines) if line.startswith(("@PG", "@CO"))), len(lines))
        return "\n".join([*lines[:at], self.line, *lines[at:]]) + "\n"


def _shown(text: str) -> str:
    """The value as the user typed it: quoted, tabs as \\t (repr would double the backslash of a typed \\t)."""
    return "'" + text.replace("\t", "\\t") + "'"


def parse_read_group(text: str) -> ReadGroup:
    """Accepts real tabs or the two characters backslash-t between fields (like bwa -R)."""
    line = text.replace("\\t", "\t")
    if "\n" in line or "\r" in line or "\\n" in line:
        raise SeedmapError("--rg: the read group must be one line")
    fields = line.split("\t")
    if fields[0] != "@RG":
        raise SeedmapError(f"--rg: the read group must start with '@RG', e.g. '@RG\\tID:sample1\\tSM:sample1'; "
                           f"got {_shown(text)}")
    for field in fields[1:]:
        if not FIELD.fullmatch(field):
            raise SeedmapError(f"--rg: {_shown(field)} is not a TAG:value field")
    ids = [f[3:] for f in fields[1:] if f.startswith("ID:")]
    if len(ids) != 1:
        raise SeedmapError(f"--rg: the read group needs exactly one ID: field; got {_shown(text)}")
    tags = [f[:2] for f in fields[1:]]
    if len(set(tags)) != len(tags):
        raise SeedmapError(f"--rg: a field appears twice in {_shown(text)}")
    return ReadGroup(line, ids[0])
