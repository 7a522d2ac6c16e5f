"""Verification (edit distance over candidate windows) and alignment (traceback to CIGAR/MD)."""
