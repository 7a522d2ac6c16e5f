"""Engines turn queries into candidate verification windows; one per index kind.

Contract: `candidate_windows(qcodes, qoff, qerr, memo=None) -> (query, windows)`: int64 arrays, `windows` with rows
(start, end, min diagonal, max diagonal), ordered by query then start. Windows of one query are disjoint,
each clipped to one reference sequence; together they hold every alignment of every query with at most
e = qerr[query // 2] edits, and each such alignment stays within diagonals [min - e, max + e] of its
window (diagonal = reference position - read position). A memo (base.QueryMemo) changes how fast, never what.
"""
