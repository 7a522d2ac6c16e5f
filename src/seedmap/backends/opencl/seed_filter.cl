/* MAROSE seed + filter over the neighborhood index: the OpenCL C twin of the CPU's two passes
   (filter/neighborhood_passes.py over neighborhood_bs.py, neighborhood_ph.py) and of the CUDA kernels
   (backends/cuda/seed_filter_kernels.py), same candidates. One work-item per (query, window of its plan):
   the window's seed block is looked up in the SeedBlocks and every pattern within fe substitutions of its
   neighborhood part is binary searched in the block's sorted neighborhoods, or (ph_on, full-length
   patterns) looked up in the block's BDZ perfect hash. open_kernel finds each one's seed block (a pass of
   its own: see there), count_kernel counts each one's candidates and keeps the position range of its hits
   when they are one range (always with fe = 0), the host scans the counts into slots, fill_kernel writes the
   windows of its hits there (searching again only where count_kernel found several ranges: the CPU's passes
   keep theirs too), sort_kernel (windows.cl, built in front of this file) sorts each query's windows by start.

   POS_T, the type of the index's positions (uint below 4 Gbp, long above), is a build option. */

#ifndef POS_T
#define POS_T uint
#endif
#define MAX_FE 8 /* substitutions a window's patterns may have (the combination's private array) */
#define MASK 0xFFFFFFFFUL
#define GOLDEN 0x9E3779B9U
#define FIBONACCI 0x9E3779B1UL

/* plan.plan_shape and plan.plan_offset: window i of a read of length m, as (length, offset); offset -1
   when the plan has no window i. */
inline long plan_window(long m, long e, long lmax, long windows, long step, long i, long *length)
{
    long k = windows > 0 ? windows : e + 1;
    long len = min(lmax, m / k);
    *length = len;
    if (len <= 0)
        return -1;
    if (step > 0)
        k = (m - len) / step + 1;
    if (i >= k)
        return -1;
    if (step > 0)
        return i * step;
    long slack = m - k * len;  /* spread between the windows, which stay disjoint */
    return i * len + (k > 1 ? slack * i / (k - 1) : 0);  /* one window: the read's first (plan.py) */
}

/* neighborhood_bs._lower_bound: the first index in [lo, hi) whose neighborhood is >= value. */
inline long lower_bound(__global const uint *nbs, long lo, long hi, long value)
{
    while (lo < hi) {
        long mid = (lo + hi) >> 1;
        if ((long)nbs[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* neighborhood_bs._prefix_end: the end of the neighborhoods from lo that start with the r-base word. */
inline long prefix_end(__global const uint *nbs, long lo, long b1, long value, long r, long l)
{
    if (r == l)  /* whole neighborhoods are unique in a block: one match at most */
        return lo < b1 && (long)nbs[lo] == value ? lo + 1 : lo;
    return lower_bound(nbs, lo, b1, (value + 1) << (2 * (l - r)));
}

/* index/perfect_hash.find: the rank of key in block a's sorted neighborhoods, or -1. lookup2's mix in
   32-bit unsigned arithmetic (the CPU's int64 code keeps the same low 32 bits). */
inline long ph_find(long key, long a, __global const long *ph_off, __global const uint *ph_block,
                    __global const uchar *ph_g, __global const long *ph_table)
{
    uint x = GOLDEN + (uint)key, y = GOLDEN, z = ph_block[2 * a] + 4U;
    x -= y; x -= z; x ^= z >> 13;
    y -= z; y -= x; y ^= x << 8;
    z -= x; z -= y; z ^= y >> 13;
    x -= y; x -= z; x ^= z >> 12;
    y -= z; y -= x; y ^= x << 16;
    z -= x; z -= y; z ^= y >> 5;
    x -= y; x -= z; x ^= z >> 3;
    y -= z; y -= x; y ^= x << 10;
    z -= x; z -= y; z ^= y >> 15;
    ulong r = ph_block[2 * a + 1];
    long base = ph_off[a];
    long v[3];  /* perfect_hash._reduce of each hash, one per third of the block's vertices */
    v[0] = (long)((((x * FIBONACCI) & MASK) * r) >> 32);
    v[1] = (long)((((y * FIBONACCI) & MASK) * r) >> 32) + (long)r;
    v[2] = (long)((((z * FIBONACCI) & MASK) * r) >> 32) + 2 * (long)r;
    int g = 0;
    for (int i = 0; i < 3; i++) {
        long u = base + v[i];
        g += (ph_g[u >> 2] >> (2 * (u & 3))) & 3;
    }
    long entry = ph_table[base + v[g % 3]];
    return (entry & (long)MASK) == key ? entry >> 32 : -1;
}

/* filter/windows.emit_windows: the windows of hits pos[lo, hi) of the read part at offset o from slot w
   on, [diag - e, diag + m + e) clipped to the hit's sequence; the next free slot. */
inline long emit_windows(long o, long lo, long hi, long m, long e, __global const POS_T *pos,
                         __global const long *starts, long nstarts, long w, __global long *win_s,
                         __global long *win_e, __global long *win_d)
{
    for (long k = lo; k < hi; k++) {
        long p = (long)pos[k];
        long s = sequence_of(starts, nstarts, p);
        long diag = p - o;
        win_s[w] = max(diag - e, starts[s]);
        win_e[w] = min(diag + m + e, starts[s + 1]);
        win_d[w] = diag;
        w++;
    }
    return w;
}

/* The seed block [b0, b1) of window q[o, o + length) (a range of blocks when length <= u, the window then
   being a prefix of the seed); an empty one when the window holds an N (N never matches: this window cannot
   be the exact one). */
inline void open_block(__global const uchar *q, long o, long length, long u, __global const long *seed_start,
                       long *block)
{
    block[0] = block[1] = 0;
    for (long i = 0; i < length; i++)
        if (q[o + i] > 3)
            return;
    long a = 0;
    long seed = min(length, u);
    for (long i = 0; i < seed; i++)
        a = (a << 2) | q[o + i];
    long shift = length < u ? 2 * (u - length) : 0;
    block[0] = seed_start[a << shift];
    block[1] = seed_start[(a + 1) << shift];
}

/* The candidates of window q[o, o + length) of a read of length m, its seed block [b0, b1) opened
   (open_block): their number, or (emit) the next free slot after writing their windows from slot w. A
   window shorter than u + l looks up a prefix: every neighborhood of a range of blocks (length <= u) or a
   prefix of the block's neighborhoods. Counting, range[0..1] gets the positions of its hits when they are
   one range (none: an empty one), -1 when they are several. */
inline long visit_window(__global const uchar *q, long o, long length, long m, long e, long u, long l, long fe,
                         long b0, long b1, __global const uint *nbs, __global const long *nb_pos,
                         __global const POS_T *pos, __global const long *starts, long nstarts, int ph_on,
                         __global const long *ph_off, __global const uint *ph_block, __global const uchar *ph_g,
                         __global const long *ph_table, int emit, long w, __global long *win_s,
                         __global long *win_e, __global long *win_d, long *range)
{
    long count = 0;
    range[0] = range[1] = 0;
    if (b0 == b1)
        return emit ? w : 0;
    if (length <= u) {
        long lo = nb_pos[b0];
        long hi = nb_pos[b1];
        range[0] = lo;
        range[1] = hi;
        return emit ? emit_windows(o, lo, hi, m, e, pos, starts, nstarts, w, win_s, win_e, win_d) : hi - lo;
    }
    long a = 0;  /* the seed's address, the perfect hash's block */
    for (long i = 0; i < u; i++)
        a = (a << 2) | q[o + i];
    long r = length - u;
    long base = 0;
    for (long i = 0; i < r; i++)
        base = (base << 2) | q[o + u + i];
    long shift = 2 * (l - r);
    long idx[MAX_FE];
    long kmax = min(fe, r);
    for (long k = 0; k <= kmax; k++) {  /* each set of k positions, each of their 3^k substitutions */
        for (long i = 0; i < k; i++)
            idx[i] = i;
        while (1) {
            long p3 = 1;
            for (long i = 0; i < k; i++)
                p3 *= 3;
            for (long digits = 0; digits < p3; digits++) {
                long value = base, d = digits;
                for (long i = 0; i < k; i++) {
                    long bit = 2 * (r - 1 - idx[i]);
                    long old = (base >> bit) & 3;
                    value += (((old + 1 + d % 3) & 3) - old) << bit;
                    d /= 3;
                }
                long lo, hi;
                if (ph_on && r == l) {
                    lo = ph_find(value, a, ph_off, ph_block, ph_g, ph_table);
                    hi = lo >= 0 ? b0 + lo + 1 : 0;
                    lo = lo >= 0 ? b0 + lo : 0;
                } else {
                    lo = lower_bound(nbs, b0, b1, value << shift);
                    hi = prefix_end(nbs, lo, b1, value, r, l);
                }
                if (hi > lo) {
                    long plo = nb_pos[lo], phi = nb_pos[hi];
                    if (emit) {
                        w = emit_windows(o, plo, phi, m, e, pos, starts, nstarts, w, win_s, win_e, win_d);
                    } else {
                        range[0] = count ? -1 : plo;  /* count > 0: an earlier range */
                        range[1] = phi;
                        count += phi - plo;
                    }
                }
            }
            long j = k - 1;  /* the next combination of k positions out of r */
            while (j >= 0 && idx[j] == r - k + j)
                j--;
            if (j < 0)
                break;
            idx[j]++;
            for (long i = j + 1; i < k; i++)
                idx[i] = idx[i - 1] + 1;
        }
    }
    return emit ? w : count;
}

/* The (query, window) of work-item t (t % nwin of query t / nwin): the query's start, length m and e, and
   the window's offset (-1: past the query's plan) and length. */
inline long window_of(long t, __global const long *qoff, __global const long *qerr, long nwin, long lmax,
                      long windows, long step, long *qa, long *m, long *e, long *length)
{
    long qi = t / nwin;
    *qa = qoff[qi];
    *m = qoff[qi + 1] - *qa;
    *e = qerr[qi >> 1];
    *length = 0;
    return *m > *e ? plan_window(*m, *e, lmax, windows, step, t - qi * nwin, length) : -1;
}

/* blocks[2t, 2t + 1] = the seed block of work-item t's window (empty past its query's plan). A pass of its
   own, before the searches, so that its misses in seed_start (a random address each) overlap: a work-item
   loop this short runs many at once on a CPU device, as the CPU's sweeps do (neighborhood_passes.py). */
__kernel void open_kernel(long nt, __global const uchar *qcodes, __global const long *qoff,
                          __global const long *qerr, long nwin, long u, long l, long windows, long step,
                          __global const long *seed_start, __global long *blocks)
{
    long t = get_global_id(0);
    if (t >= nt)
        return;
    long qa, m, e, length;
    long o = window_of(t, qoff, qerr, nwin, u + l, windows, step, &qa, &m, &e, &length);
    long block[2] = {0, 0};
    if (o >= 0)
        open_block(qcodes + qa, o, length, u, seed_start, block);
    blocks[2 * t] = block[0];
    blocks[2 * t + 1] = block[1];
}

/* counts[t] = the candidates of work-item t's window; ranges[2t, 2t + 1] their positions when they are one
   range (else -1). */
__kernel void count_kernel(long nt, __global const uchar *qcodes, __global const long *qoff,
                           __global const long *qerr, long nwin, long u, long l, long windows, long step, long fe,
                           __global const long *blocks, __global const uint *nbs,
                           __global const long *nb_pos, int ph_on, __global const long *ph_off,
                           __global const uint *ph_block, __global const uchar *ph_g,
                           __global const long *ph_table, __global long *counts, __global long *ranges)
{
    long t = get_global_id(0);
    if (t >= nt)
        return;
    long range[2] = {0, 0};
    long count = 0;
    long b0 = blocks[2 * t], b1 = blocks[2 * t + 1];
    if (b0 != b1) {
        long qa, m, e, length;
        long o = window_of(t, qoff, qerr, nwin, u + l, windows, step, &qa, &m, &e, &length);
        count = visit_window(qcodes + qa, o, length, m, e, u, l, fe, b0, b1, nbs, nb_pos,
                             (__global const POS_T *)nb_pos, blocks, 0, ph_on, ph_off, ph_block, ph_g, ph_table, 0,
                             0, counts, counts, counts, range);
    }
    counts[t] = count;
    ranges[2 * t] = range[0];
    ranges[2 * t + 1] = range[1];
}

/* Window t_first + t writes its candidates' windows from slot cursor[t] on: from the range count_kernel
   kept, else by searching again. */
__kernel void fill_kernel(long nt, long t_first, __global const uchar *qcodes, __global const long *qoff,
                          __global const long *qerr, long nwin, long u, long l, long windows, long step, long fe,
                          __global const long *blocks, __global const uint *nbs, __global const long *nb_pos,
                          __global const POS_T *pos, __global const long *starts, long nstarts, int ph_on,
                          __global const long *ph_off, __global const uint *ph_block, __global const uchar *ph_g,
                          __global const long *ph_table, __global const long *ranges, __global const long *cursor,
                          __global long *win_s, __global long *win_e, __global long *win_d)
{
    long t = get_global_id(0);
    if (t >= nt)
        return;
    long g = t_first + t;
    long lo = ranges[2 * g], hi = ranges[2 * g + 1];
    if (lo == hi)
        return;  /* no hits */
    long qa, m, e, length, range[2];
    long o = window_of(g, qoff, qerr, nwin, u + l, windows, step, &qa, &m, &e, &length);
    if (lo >= 0)
        emit_windows(o, lo, hi, m, e, pos, starts, nstarts, cursor[t], win_s, win_e, win_d);
    else
        visit_window(qcodes + qa, o, length, m, e, u, l, fe, blocks[2 * g], blocks[2 * g + 1], nbs, nb_pos, pos,
                     starts, nstarts, ph_on, ph_off, ph_block, ph_g, ph_table, 1, cursor[t], win_s, win_e, win_d,
                     range);
}
