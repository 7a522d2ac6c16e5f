/* The FM index on the device: rank (O), the backward-search step, locate through the sampled SA, BWA's lower
   bounds and the cut of a read into pieces; the OpenCL C twins of filter/fm_search.py and fm_pieces.py (the
   layout: index/fm.py). Symbols are 0..4 = A C G T N; row ranges are half-open [lo, hi).

   Built in front of fm_scheme.cl. The constants come from the Python modules as build options (program.py),
   so the two cannot drift apart: BLOCK_SHIFT, SUPER_SHIFT, COUNTS_AT, OCC_WORDS, MAX_PIECE, CUT_FROM, CUT_ABOVE,
   CUT_WORK, BIG; SSA_T is the sampled SA's type (int below 2^31 symbols, uint below 2^32, long above). */

#ifndef SSA_T
#define SSA_T int
#endif

/* fm_search.block_row and super_row: the occ table rows of the block and of the superblock holding row i. */
inline long block_row(long i)
{
    long w = i >> BLOCK_SHIFT;
    return w + (w >> SUPER_SHIFT) + 1;
}

inline long super_row(long i)
{
    return (i >> (BLOCK_SHIFT + SUPER_SHIFT)) * ((1L << SUPER_SHIFT) + 1);
}

/* The rows of one half (part 0 or 1) of block row r whose code is `code` (the three bit planes, inverted
   where the code's bit is 0). */
inline ulong agree(__global const ulong *tab, long r, long part, long code)
{
    __global const ulong *row = tab + r * OCC_WORDS;
    ulong p0 = row[part], p1 = row[2 + part], p2 = row[4 + part];
    return (code & 1 ? p0 : ~p0) & (code & 2 ? p1 : ~p1) & (code & 4 ? p2 : ~p2);
}

/* O(c, i): occurrences of symbol c in B[0..i). */
inline long occ(__global const ulong *tab, long c, long i)
{
    long r = block_row(i);
    long code = c + 1;
    ulong before = tab[super_row(i) * OCC_WORDS + c];
    before += (tab[r * OCC_WORDS + COUNTS_AT + (c >> 2)] >> (16 * (c & 3))) & 0xFFFFUL;
    ulong below = (1UL << (i & 63)) - 1UL;
    ulong second = 0UL - (ulong)((i >> 6) & 1);  /* all ones when i is in the block's second half */
    return (long)before + (long)popcount(agree(tab, r, 0, code) & (below | second))
           + (long)popcount(agree(tab, r, 1, code) & (below & second));
}

/* LF of row i by symbol c: the backward-search step's bound (fm_search.extend: lf(lo), lf(hi)). */
inline long lf(__global const ulong *tab, __global const long *counts, long c, long i)
{
    return counts[c] + occ(tab, c, i);
}

/* B[i] as a symbol 0..4, or -1 for a separator. */
inline long bwt_symbol(__global const ulong *tab, long i)
{
    __global const ulong *row = tab + block_row(i) * OCC_WORDS;
    long part = (i >> 6) & 1;
    long bit = i & 63;
    ulong code = ((row[part] >> bit) & 1UL) | (((row[2 + part] >> bit) & 1UL) << 1)
                 | (((row[4 + part] >> bit) & 1UL) << 2);
    return (long)code - 1;
}

/* SA[i]: LF steps to a sampled row (marked in the (blocks, 2) count/bit table), plus the steps taken. */
inline long locate(__global const ulong *tab, __global const long *counts, __global const ulong *mark,
                   __global const SSA_T *ssa, long i)
{
    long steps = 0;
    while (!((mark[(i >> 6) * 2 + 1] >> (i & 63)) & 1UL)) {
        long c = bwt_symbol(tab, i);
        i = lf(tab, counts, c, i);
        steps++;
    }
    long w = i >> 6;
    long sampled = (long)mark[w * 2] + (long)popcount(mark[w * 2 + 1] & ((1UL << (i & 63)) - 1UL));
    return (long)ssa[sampled] + steps;
}

/* BWA's D array: bound[i] = edits ext[i:length] needs to occur anywhere (greedy cut into absent pieces). */
inline void lower_bounds(__global const ulong *tab, __global const long *counts, long n, __global const long *ext,
                         long length, __global long *bound)
{
    bound[length] = 0;
    long k = 0, lo = 0, hi = n;
    for (long i = length - 1; i >= 0; i--) {
        long c = ext[i];
        if (c <= 3) {
            long nlo = lf(tab, counts, c, lo);
            hi = lf(tab, counts, c, hi);
            lo = nlo;
        }
        if (c > 3 || lo >= hi) {
            k++;
            lo = 0;
            hi = n;
        }
        bound[i] = k;
    }
}

inline void equal_pieces(long m, long k, __global long *bounds)
{
    for (long j = 0; j <= k; j++)
        bounds[j] = j * m / k;
}

inline int by_count(long m, long k)
{
    return k > 1 && k * m * MAX_PIECE <= CUT_WORK;
}

/* fm_pieces.cut_pieces: bounds[0..k], the cut of least occurrences summed (pieces of m / (2k) to MAX_PIECE
   bases starting and ending at multiples of GRID, the last at m), or equal pieces where it is not weighed or no cut fits. scratch: 2 (k + 1)(m + 1) words. */
inline void cut_pieces(__global const uchar *q, long m, long k, long n, __global const long *counts,
                       __global const ulong *fwd_occ, __global long *bounds, __global long *scratch)
{
    equal_pieces(m, k, bounds);
    if (!by_count(m, k))
        return;
    long shortest = max(1L, m / (2 * k));
    __global long *cost = scratch;
    __global long *back = scratch + (k + 1) * (m + 1);
    for (long i = 0; i < (k + 1) * (m + 1); i++)
        cost[i] = BIG;
    cost[0] = 0;
    for (long end = 1; end <= (m + GRID - 1) / GRID; end++) {  /* pieces end on the grid, the last at m */
        long b = min(end * GRID, m);
        long lo = 0, hi = n;
        for (long a = b - 1; a > max(-1L, b - 1 - MAX_PIECE); a--) {  /* the piece q[a:b], longer each turn */
            if (hi - lo > 1) {
                long c = q[a];
                if (c > 3) {  /* an N matches nothing exactly */
                    hi = lo;
                } else {
                    long nlo = lf(fwd_occ, counts, c, lo);
                    hi = lf(fwd_occ, counts, c, hi);
                    lo = nlo;
                }
            }
            if (b - a < shortest || a % GRID)
                continue;
            long found = max(hi - lo, 0L);
            for (long j = 1; j <= k; j++) {
                long here = cost[(j - 1) * (m + 1) + a];
                if (here < BIG && here + found < cost[j * (m + 1) + b]) {
                    cost[j * (m + 1) + b] = here + found;
                    back[j * (m + 1) + b] = a;
                }
            }
        }
    }
    if (cost[k * (m + 1) + m] >= BIG)
        return;
    long b = m;
    for (long j = k; j > 0; j--) {
        bounds[j] = b;
        b = back[j * (m + 1) + b];
    }
    bounds[0] = 0;
}

/* fm_pieces.piece_count: occurrences of q[a:b] in the forward index (from its last symbol; the CPU starts
   from a k-mer table, which changes no count). */
inline long piece_count(__global const uchar *q, long a, long b, long n, __global const long *counts,
                        __global const ulong *fwd_occ)
{
    long lo = 0, hi = n;
    for (long i = b - 1; i >= a && lo < hi; i--) {
        long c = q[i];
        if (c > 3)
            return 0;
        lo = lf(fwd_occ, counts, c, lo);
        hi = lf(fwd_occ, counts, c, hi);
    }
    return hi > lo ? hi - lo : 0;
}

/* fm_pieces.pieces: the search's cut, by occurrences from CUT_FROM pieces on where the equal pieces occur
   more than CUT_ABOVE times in all, else equal. */
inline void pieces(__global const uchar *q, long m, long k, long n, __global const long *counts,
                   __global const ulong *fwd_occ, __global long *bounds, __global long *scratch)
{
    equal_pieces(m, k, bounds);
    if (k < CUT_FROM)
        return;
    long total = 0;
    for (long j = 0; j < k; j++) {
        total += piece_count(q, bounds[j], bounds[j + 1], n, counts, fwd_occ);
        if (total > CUT_ABOVE) {
            cut_pieces(q, m, k, n, counts, fwd_occ, bounds, scratch);
            return;
        }
    }
}
