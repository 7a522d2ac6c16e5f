"""The help: `seedmap map --help` fits a screen (at most 60 lines, 80 columns, whatever the terminal), and
`--help-all` lists every option the parser takes."""

from __future__ import annotations

import argparse

import pytest

from seedmap.cli import build_parser, main


def _help(capsys, monkeypatch, *argv: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal still gets 80 columns
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 0
    return capsys.readouterr().out.splitlines()


def _map_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["map"]


def test_map_help_is_short(capsys, monkeypatch):
    lines = _help(capsys, monkeypatch, "map", "--help")
    assert len(lines) <= 60
    assert max(map(len, lines)) <= 80
    text = "\n".join(lines)
    for group in ("input and output:", "search:", "paired-end reads", "performance:"):
        assert group in text
    assert "--windows" not in text and "--gpu-verify" not in text  # engine-specific: --help-all only


def test_help_all_lists_every_option(capsys, monkeypatch):
    lines = _help(capsys, monkeypatch, "map", "--help-all")
    assert max(map(len, lines)) <= 80
    words = set("\n".join(lines).replace(",", " ").split())
    options = [o for a in _map_parser()._actions if a.dest != "early_stop" for o in a.option_strings]
    missing = [o for o in options if o not in words]  # (--no-early-stop: a flag for the tests, never listed)
    assert not missing
    assert "Full sensitivity" in "\n".join(lines)


@pytest.mark.parametrize("argv", [["--help"], ["index", "--help"], ["check", "--help"], ["stats", "--help"]])
def test_other_help_fits_80_columns(capsys, monkeypatch, argv):
    assert max(map(len, _help(capsys, monkeypatch, *argv))) <= 80


def test_hidden_options_still_parse():
    args = build_parser().parse_args(["map", "--windows", "2", "--fe", "1", "--filter", "bpr", "--step", "3",
                                      "--adjacency", "2", "--gpu-verify", "banded", "ref.fa", "r.fq"])
    assert (args.windows, args.fe, args.filter, args.step, args.adjacency, args.gpu_verify) == \
        (2, 1, "bpr", 3, 2, "banded")
