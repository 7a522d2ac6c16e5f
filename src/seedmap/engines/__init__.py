"""Engines turn queries into candidate verification windows; one per index kind.

Contract: `candidate_windows(qcodes, qoff, qerr) -> (query, start, end)` int64 arrays, ordered by query
then start, windows of one query disjoint, each clipped to one reference sequence, and together holding
every alignment of every query with at most qerr[query // 2] edits.
"""
