/* Traceback (CIGAR runs and MD strings of verified locations): the OpenCL C twin of verify/align.py's
   align_location (and of the CUDA backend's align_kernels.py, which runs that very code), line for line, so
   the output is the CPU's byte for byte; see align.py for why each choice is made. One work-item per
   location; each has its own slices of two scratch buffers (the banded DP matrices, long, and the reference
   window and the reversed operations, uchar), sized by the host (align.scratch_sizes). ref_code: myers.cl. */

#define OP_M 0
#define OP_I 1
#define OP_D 2

__constant uchar BASES[5] = {'A', 'C', 'G', 'T', 'N'};

/* `value` (>= 0) in decimal at buf[p..]; the position after it (io/ascii.write_int). */
inline long write_int(__global uchar *buf, long p, long value)
{
    if (value == 0) {
        buf[p] = '0';
        return p + 1;
    }
    long digits = 0;
    for (long v = value; v > 0; v /= 10)
        digits++;
    for (long k = digits - 1; k >= 0; k--) {
        buf[p + k] = (uchar)('0' + value % 10);
        value /= 10;
    }
    return p + digits;
}

/* 1 unless read base i - 1 matches text base c - 1 (N never matches). */
inline long mismatch(__global const uchar *q, __global const uchar *t, long i, long c)
{
    return (q[i - 1] == t[c - 1] && t[c - 1] < 4) ? 0 : 1;
}

/* The ungapped alignment of q (m bases) on t: one M run; the MD length (align._ungapped). */
inline long ungapped(__global const uchar *q, long m, __global const uchar *t, __global uchar *ops,
                     __global int *lens, __global uchar *md)
{
    ops[0] = OP_M;
    lens[0] = (int)m;
    long md_len = 0, matched = 0;
    for (long i = 0; i < m; i++) {
        if (q[i] == t[i] && t[i] < 4) {
            matched++;
        } else {
            md_len = write_int(md, md_len, matched);
            md[md_len++] = BASES[t[i]];
            matched = 0;
        }
    }
    return write_int(md, md_len, matched);
}

/* Run-length CIGAR (ops, lens) and MD of the alignment whose operations are rev[:k], last first, from text
   column `first`: the CIGAR runs, and the MD length in *md_out (align._forward). */
inline long forward(__global const uchar *q, __global const uchar *t, __global const uchar *rev, long k, long first,
                    __global uchar *ops, __global int *lens, __global uchar *md, long *md_out)
{
    long runs = 0, md_len = 0, matched = 0, qi = 0, ti = first;
    for (long yy = k - 1; yy >= 0; yy--) {
        uchar op = rev[yy];
        if (runs > 0 && ops[runs - 1] == op) {
            lens[runs - 1] += 1;
        } else {
            ops[runs] = op;
            lens[runs] = 1;
            runs++;
        }
        if (op == OP_M) {
            if (q[qi] == t[ti] && t[ti] < 4) {
                matched++;
            } else {
                md_len = write_int(md, md_len, matched);
                md[md_len++] = BASES[t[ti]];
                matched = 0;
            }
            qi++;
            ti++;
        } else if (op == OP_I) {
            qi++;
        } else {
            if (yy == k - 1 || rev[yy + 1] != OP_D) {  /* first base of a deletion run */
                md_len = write_int(md, md_len, matched);
                md[md_len++] = '^';
                matched = 0;
            }
            md[md_len++] = BASES[t[ti]];
            ti++;
        }
    }
    *md_out = write_int(md, md_len, matched);
    return runs;
}

/* Mismatches of q (m bases) against t[s0..s0 + m) (N never matches), counted up to most + 1
   (align._diagonal_mismatches). */
inline long diagonal_mismatches(__global const uchar *q, long m, __global const uchar *t, long s0, long most)
{
    long k = 0;
    for (long i = 0; i < m; i++) {
        if (q[i] != t[s0 + i] || t[s0 + i] > 3) {
            k++;
            if (k > most)
                break;
        }
    }
    return k;
}

/* align._one_gap: the alignment ending at column n when it has one gap, without the DP: the number of
   operations in rev (last first) and the start column in *first; 0 when the DP must decide. */
long one_gap(__global const uchar *q, long m, __global const uchar *t, long nt, long x, long n, long dist,
             __global long *scratch, __global uchar *rev, long *first)
{
    long dn = n - m;  /* the end diagonal */
    for (long c = max(n + 1, m); c <= min(nt, x + m); c++)  /* an ungapped end further on, its start free */
        if (diagonal_mismatches(q, m, t, c - m, dist) == dist)
            return 0;
    __global long *suffix = scratch;  /* suffix[j]: mismatches of q[j:] on the end diagonal */
    suffix[m] = 0;
    for (long j = m - 1; j >= 0; j--) {
        long tj = dn + j;
        suffix[j] = suffix[j + 1] + ((tj < 0 || q[j] != t[tj] || t[tj] > 3) ? 1 : 0);
    }
    for (long step = 0; step < 2 * dist; step++) {
        int ins = step < dist;
        long g = ins ? dist - step : step - dist + 1;
        long s0 = ins ? dn + g : dn - g;
        if (s0 < 0 || s0 > x)
            continue;
        long last = ins ? m - g : m;  /* the gap's read positions i: 0..last */
        long pre = 0;
        for (long i = 0; i <= last; i++) {
            if (pre + g > dist)  /* the prefix alone costs too much already */
                break;
            if (pre + g + suffix[ins ? i + g : i] == dist) {
                if (!ins && (i == 0 || i == m))
                    return 0;
                long tail = ins ? m - i - g : m - i;  /* from the end: the suffix's matches, the gap, the prefix's */
                for (long r = 0; r < tail; r++)
                    rev[r] = OP_M;
                for (long r = tail; r < tail + g; r++)
                    rev[r] = ins ? OP_I : OP_D;
                for (long r = tail + g; r < tail + g + i; r++)
                    rev[r] = OP_M;
                *first = s0;
                return tail + g + i;
            }
            if (i < last && (q[i] != t[s0 + i] || t[s0 + i] > 3))
                pre++;
        }
    }
    return 0;
}

/* align.align_one: the alignment of q at edit distance `dist` starting in t's first x + 1 columns and ending
   at column nt - y or one of the y after it, fewest gaps, then leftmost end, then latest start. Results:
   out[0..4] = edit distance at the end, CIGAR runs, MD length, start column, end column. */
void align_one(__global const uchar *q, long m, __global const uchar *t, long nt, long x, long y, long band,
               long dist, __global uchar *ops, __global int *lens, __global uchar *md, __global long *scratch,
               __global uchar *rev, long *out)
{
    long n = nt - y;
    if (0 <= n - m && n - m <= x) {
        long mismatches = 0;
        for (long i = 0; i < m; i++)
            if (q[i] != t[n - m + i] || t[n - m + i] > 3)
                mismatches++;
        if (mismatches == dist) {
            out[0] = mismatches;
            out[1] = 1;
            out[2] = ungapped(q, m, t + n - m, ops, lens, md);
            out[3] = n - m;
            out[4] = n;
            return;
        }
    }
    long first = 0;
    long k1 = one_gap(q, m, t, nt, x, n, dist, scratch, rev, &first);
    if (k1 > 0) {
        long ml = 0;
        out[0] = dist;
        out[1] = forward(q, t, rev, k1, first, ops, lens, md, &ml);
        out[2] = ml;
        out[3] = first;
        out[4] = n;
        return;
    }
    long w = x + 2 * band + 3;  /* a row: the band between two cells that stay out of it */
    long cells = (m + 1) * w;
    long gap = x + 1;
    long edit = (band + 1) * gap;
    long big = 1L << 60;
    long off = band + 1;
    __global long *h = scratch;  /* cell (i, c) at i * w + c - i + off */
    __global long *dl = scratch + cells;
    __global long *il = scratch + 2 * cells;
    /* the diagonals a path of at most band edits from a free start to an end in [n, nt] meets (align.py) */
    long k_lo = x + band + 1, k_hi = -band - 1;
    for (long kd = -band; kd <= x + band; kd++) {
        if (max(max(0L, -kd), kd - x) + max(max(0L, n - m - kd), kd - nt + m) <= band) {
            k_lo = min(k_lo, kd);
            k_hi = kd;
        }
    }
    if (k_lo > k_hi) {
        k_lo = -band;
        k_hi = x + band;
    }
    for (long c = 0; c < w; c++) {
        h[c] = big;
        dl[c] = big;
        il[c] = big;
    }
    for (long c = 0; c <= min(nt, x + band); c++) {
        if (c <= x) {
            h[c + off] = x - c;  /* a free start */
        } else {  /* never optimal: a leading deletion */
            dl[c + off] = (c - x) * edit + gap;
            h[c + off] = dl[c + off];
        }
    }
    for (long i = 1; i <= m; i++) {
        long row = i * w - i + off;
        h[row + i + k_lo - 1] = dl[row + i + k_lo - 1] = il[row + i + k_lo - 1] = big;
        h[row + i + k_hi + 1] = dl[row + i + k_hi + 1] = il[row + i + k_hi + 1] = big;
        uchar qi = q[i - 1];
        long c0 = max(0L, i + k_lo);
        if (c0 == 0) {  /* column 0: insertions only */
            il[row] = min(h[row - w + 1] + edit + gap, il[row - w + 1] + edit);
            h[row] = il[row];
            dl[row] = big;
            c0 = 1;
        }
        for (long c = c0; c <= min(nt, i + k_hi); c++) {
            long k = row + c;
            long ins = min(h[k - w + 1] + edit + gap, il[k - w + 1] + edit);
            long dele = min(h[k - 1] + edit + gap, dl[k - 1] + edit);
            uchar tc = t[c - 1];
            long dg = h[k - w] + ((qi == tc && tc < 4) ? 0 : edit);
            il[k] = ins;
            dl[k] = dele;
            h[k] = min(min(ins, dele), dg);
        }
    }
    long last = m * w - m + off;
    dist = h[last + n] / edit;  /* (the host checks it equals the verified distance) */
    long end = n;
    for (long c = n + 1; c <= min(nt, m + k_hi); c++) {  /* an end further on with fewer gaps */
        if (h[last + c] / edit != dist)
            break;
        if (h[last + c] / gap < h[last + end] / gap)
            end = c;
    }
    /* Traceback from (m, end) to a free start in row 0, in state 0 (H), 1 (D) or 2 (I); ops backwards. */
    long k = 0, i = m, c = end;
    int state = 0;
    while (i > 0 || c > x) {
        long cur = i * w - i + off + c;
        if (state == 0) {
            if (i > 0 && c > 0 && h[cur] == h[cur - w] + mismatch(q, t, i, c) * edit) {
                rev[k++] = OP_M;
                i--;
                c--;
                continue;
            }
            state = (c > 0 && h[cur] == dl[cur]) ? 1 : 2;
        }
        if (state == 1) {
            rev[k] = OP_D;
            if (dl[cur] == h[cur - 1] + edit + gap)  /* the gap opens here */
                state = 0;
            c--;
        } else {
            rev[k] = OP_I;
            if (il[cur] == h[cur - w + 1] + edit + gap)
                state = 0;
            i--;
        }
        k++;
    }
    long ml = 0;
    out[0] = dist;
    out[1] = forward(q, t, rev, k, c, ops, lens, md, &ml);
    out[2] = ml;
    out[3] = c;
    out[4] = end;
}

/* Work-item g aligns location sel[first + g] (align.align_location) with `cells` longs and 2 x `span` bytes
   of scratch. */
__kernel void align_locations(long n, long first, __global const long *sel, __global const uchar *qcodes,
                              __global const long *qoff, __global const long *loc_q, __global const long *loc_s,
                              __global const long *loc_e, __global const long *loc_d, __global const long *loc_lo,
                              __global const long *loc_hi, __global const uchar *packed, __global const uchar *nmask,
                              __global const long *cig_off, __global const long *md_off, __global uchar *ops,
                              __global int *lens, __global uchar *md, __global long *n_runs, __global long *md_len,
                              __global int *dist, __global long *start, __global long *end,
                              __global long *cells_buf, __global uchar *bytes_buf, long cells, long span)
{
    long g = get_global_id(0);
    if (g >= n)
        return;
    long k = sel[first + g];
    long qi = loc_q[k];
    long lo = loc_lo[k];
    long nt = loc_hi[k] - lo;
    __global uchar *rev = bytes_buf + 2 * span * g;
    __global uchar *t = rev + span;
    for (long i = 0; i < nt; i++)
        t[i] = (uchar)ref_code(packed, nmask, lo + i);
    long out[5];
    align_one(qcodes + qoff[qi], qoff[qi + 1] - qoff[qi], t, nt, loc_s[k] - lo, loc_hi[k] - loc_e[k], loc_d[k],
              loc_d[k], ops + cig_off[k], lens + cig_off[k], md + md_off[k], cells_buf + cells * g, rev, out);
    dist[k] = (int)out[0];
    n_runs[k] = out[1];
    md_len[k] = out[2];
    start[k] = lo + out[3];
    end[k] = lo + out[4];
}
