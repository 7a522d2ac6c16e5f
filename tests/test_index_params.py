"""An index's parameters and their form in the stored header: the keys earlier indexes were written with, a
round trip for every kind, and a header that lacks a required parameter refused."""

from __future__ import annotations

import pytest

from seedmap.index.fm import FmParams
from seedmap.index.kmer import KmerParams
from seedmap.index.neighborhood import NeighborhoodParams
from seedmap.index.params import from_header, to_header
from seedmap.index.perfect_hash import VERSION
from seedmap.kinds import KINDS, IndexChoices


@pytest.mark.parametrize("params,header", [
    (NeighborhoodParams(10, 16), {"u": 10, "l": 16}),
    (NeighborhoodParams(8, 0, "####-####", VERSION, (0, 50, 100)),
     {"u": 8, "l": 0, "shape": "####-####", "ph": VERSION, "segments": [0, 50, 100]}),
    (KmerParams(12), {"k": 12}),
    (FmParams(8), {"r": 8}),
    (FmParams(4, (0, 10, 20), (0, 5, 10, 15, 20)), {"r": 4, "segments": [0, 10, 20]}),  # (blocks: not stored)
])
def test_header_form_and_round_trip(params, header):
    assert to_header(params) == header
    back = from_header(type(params), header)
    assert back == (FmParams(params.r, params.segments) if isinstance(params, FmParams) else params)


def test_a_header_without_a_required_parameter_is_refused():
    with pytest.raises(KeyError):
        from_header(NeighborhoodParams, {"u": 10})
    assert from_header(FmParams, {"r": 8, "from_a_newer_seedmap": 1}) == FmParams(8)


def test_each_kind_chooses_its_parameters():
    choices = IndexChoices(seed_length=9, neighborhood_length=12, kmer_length=11, sa_sample=16)
    assert KINDS["neighborhood"].choose(choices) == NeighborhoodParams(9, 12)
    assert KINDS["kmer"].choose(choices) == KmerParams(11)
    assert KINDS["fm"].choose(choices) == FmParams(16)
    assert KINDS["neighborhood"].choose(IndexChoices(seed_shape="##-##", ph=True)).u == 4
    assert [name for name, kind in KINDS.items() if kind.segment_bounds is None] == ["kmer"]
