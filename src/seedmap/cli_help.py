"""How `seedmap` prints its help: at most 80 columns, and `map --help` short, its engine-specific options and
the notes on full sensitivity printed by `map --help-all` only (they stay parsed either way)."""

from __future__ import annotations

import argparse
import shutil
from typing import Any

Hidden = list[tuple[argparse.Action, str | None]]  # options listed by --help-all only, with their help texts
WIDTH = 80  # help lines never wider, whatever the terminal: a pasted --help reads the same everywhere

MAP_SHORT_EPILOG = """\
--help-all also lists the engine-specific options (windows, filters, GPU
verification) and which of them keep full sensitivity. Manual: docs/ (mkdocs).
"""

MAP_EPILOG = """\
Full sensitivity: every location within e edits (substitutions, insertions,
deletions) is reported when the read is cut into at least e + 1 disjoint
windows that are looked up exactly. That is the default plan (--windows 0 =
e + 1, --step 0 = disjoint, --fe 0), for every read length and e: windows are
min(u + l, m // (e + 1)) long, and a window shorter than the index's word is
still one exact range lookup. Choices that lose the guarantee, and are warned
about:
  --windows K < e + 1  fewer windows (bs/ph, with or without --fe: the seed
                       part of every window is exact, so one edit in each
                       seed is enough to miss a location)
  --step D             sliding windows every D bases; guaranteed only when
                       they contain e + 1 disjoint windows (e.g. D dividing
                       the window length). With --windows 1 they are Tran's
                       delta patterns (u + l bases every D), rarely guaranteed
--filter ph looks bs's degenerated patterns up in each seed block's BDZ
perfect hash instead of by binary search (seedmap index --ph stores the
hashes; map builds them in memory otherwise).
--filter bpr (mflBPR, bit-parallel Levenshtein) matches a lookup's
neighborhood within --fe edits, indels included. Its plan: K = ceil((e + 1) /
(fe + 1)) disjoint windows (--windows 0), each holding fe + 1 lookups with
disjoint exact seeds and neighborhood parts of at most l - fe bases; fully
sensitive whenever K * (fe + 1) >= e + 1 (proof in seedmap/filter/plan.py);
--step plans are checked for such groups and warned about otherwise. bs, ph
and bpr report the same hits.
Spaced seeds (seedmap index --seed-shape '####-####'): every shape keeps the
guarantee of the plan it is used with (the plans count the whole span as the
seed); substitutions at '-' positions are tolerated besides.
-e is at most a quarter of the read length: a larger rate is refused, and so
is a count larger than a quarter of the median length of the first reads
(random reads align within about a third of their length, and such short
pieces match everywhere); shorter reads are searched with a quarter of their
length. Reads shorter than --min-length are reported unmapped.
"""


def _width() -> int:
    return min(shutil.get_terminal_size().columns - 2, WIDTH)


class Formatter(argparse.HelpFormatter):
    """argparse's formatter, never wider than WIDTH, naming an option's value once ('-o, --output FILE'), so
    that most options and their help share a line."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_width(), max_help_position=26)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        value = self._format_args(action, self._get_default_metavar_for_optional(action))
        return f"{', '.join(action.option_strings)} {value}"


class RawFormatter(Formatter, argparse.RawDescriptionHelpFormatter):
    """The same, keeping the description's and epilog's own line breaks (written within WIDTH)."""


class HelpAll(argparse.Action):
    """`--help-all`: the help with the hidden options' texts restored and the full epilog, then exit."""

    def __init__(self, option_strings: list[str], hidden: Hidden, dest: str = "",
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help)
        self.hidden = hidden

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        for action, text in self.hidden:
            action.help = text
        parser.epilog = MAP_EPILOG
        parser.print_help()
        parser.exit()


def hidden_group(parser: argparse.ArgumentParser, title: str) -> tuple[argparse._ArgumentGroup, Hidden]:
    """A group whose options are parsed as usual but listed by --help-all only: add_argument through the
    returned group, then register() the list with HelpAll."""
    group = parser.add_argument_group(title)
    hidden: Hidden = []
    add = group.add_argument

    def add_hidden(*args: Any, **kwargs: Any) -> argparse.Action:  # add_argument's own arguments
        action = add(*args, **kwargs)
        hidden.append((action, action.help))
        action.help = argparse.SUPPRESS
        return action

    group.add_argument = add_hidden  # type: ignore[method-assign]  # this group's add_argument only
    return group, hidden
