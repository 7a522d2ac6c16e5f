"""The layout of the FM index's occurrence tables (index/fm.py describes it), shared by the build, the
rank function (fm_occ.py) and the search."""

from __future__ import annotations

import numpy as np

SYMBOLS = 5  # A C G T N (text codes 1..5); 0 is the separator
PLANES = 3  # bit planes of a row's text code (0..5)
OCC_WORDS = 8  # a block's row: 2 words per plane, then the 16-bit counts (A C G T in word 6, N in word 7)
BLOCK_SHIFT = 7  # 128 rows per block
SUPER_SHIFT = 9  # 512 blocks per superblock: its counts below 65,536 fit 16 bits
COUNTS_AT = 2 * PLANES
# In word 7 of every superblock row: tells this layout from the earlier one (64-row blocks, 64-bit counts).
LAYOUT_MARK = np.uint64(0x534D4F4343313238)  # "SMOCC128"
