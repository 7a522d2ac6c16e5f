/* Bulk verification: the OpenCL C twin of verify/bulk.bulk_distances and of the CUDA kernels (backends/cuda/
   verify_kernels.py), same int32 results: min(semi-global edit distance, e + 1) of a read in each candidate
   window [win_start, win_end). Both kernels take the candidates `sel` picks (the host sends the rest
   elsewhere) and write out[sel[g]].

   - bitvector_distances: Myers' bit vectors over the read's NB words (myers.cl), one work-item per
     candidate, early exit when the last row cannot come back under the best value (it falls by at most 1
     per column).
   - banded_distances: Nouri's banded DP, LANES work-items per candidate, one per diagonal of the band
     [-e, n - m + e], cells in anti-diagonal order (cell (i, k) at step 2i + k), the band's latest values in
     local memory; SLOTS candidates per work-group step in lockstep. The host sends only m > e and bands of
     1 to LANES diagonals. Early exit: once no unfinished diagonal's latest cell is <= e, no later cell of
     the last row can be. */

#define LANES 32
#define SLOTS 2  /* program.GROUP / LANES: the work-group is fixed at 64 work-items */

__kernel void bitvector_distances(long nsel, __global const long *sel, __global const uchar *qcodes,
                                  __global const long *qoff, __global const long *qerr, __global const long *cand_q,
                                  __global const long *win_start, __global const long *win_end,
                                  __global const uchar *packed,
                                  __global const uchar *nmask, __global int *out)
{
    long g = get_global_id(0);
    if (g >= nsel)
        return;
    long k = sel[g];  /* a candidate whose read has NB words */
    u64 peq[4][MAXW], pv[MAXW], mv[MAXW];
    long qi = cand_q[k];
    long a = qoff[qi];
    long m = qoff[qi + 1] - a;
    long e = qerr[qi >> 1];
    long ws = win_start[k];
    long n = max(win_end[k] - ws, 0L);
    long cap = e + 1;
    long best = min(m, cap);  /* column 0: D(m, 0) = m */
    if (n <= 0 || best == 0) {
        out[k] = (int)best;
        return;
    }
    match_masks(qcodes, a, (int)m, 0, peq);
    start_column(pv, mv);
    uint hlast = (uint)((m - 1) & 63);
    long score = m;
    for (long j = 1; j <= n; j++) {
        score += column(peq, pv, mv, hlast, ref_code(packed, nmask, ws + j - 1), 0);
        best = min(best, score);
        if (score - (n - j) >= best)
            break;  /* the last row falls by at most 1 per column */
    }
    out[k] = (int)min(best, cap);
}

/* Work-item g: candidate sel[g / LANES] (nsel is LANES x the candidates), lane g % LANES. Every work-item of
   a group reaches every barrier: the loop ends for all at once, when none of them has work left. */
__kernel void banded_distances(long nsel, __global const long *sel, __global const uchar *qcodes,
                               __global const long *qoff, __global const long *qerr, __global const long *cand_q,
                               __global const long *win_start, __global const long *win_end,
                               __global const uchar *packed,
                               __global const uchar *nmask, __global int *out)
{
    __local int latest[SLOTS][LANES + 1];  /* latest value of each diagonal */
    __local int alive[SLOTS][2];  /* some unfinished diagonal is <= e (double-buffered) */
    __local int going;  /* some work-item of the group is not done */
    int lane = get_local_id(0) % LANES;
    int slot = get_local_id(0) / LANES;
    long g = get_global_id(0);
    int valid = g < nsel;
    long k = valid ? sel[g / LANES] : 0;
    long m = 0, e = 0, a = 0, ws = 0, n = 0, width = 0;
    if (valid) {
        long qi = cand_q[k];
        a = qoff[qi];
        m = qoff[qi + 1] - a;
        e = qerr[qi >> 1];
        ws = win_start[k];
        n = max(win_end[k] - ws, 0L);
        width = n - m + 2 * e + 1;
    }
    int cap = (int)e + 1;
    long kd = lane - e;  /* this lane's diagonal (window column - read row) */
    int mine = (lane < width && kd >= 0) ? 0 : cap;  /* row 0: free start */
    latest[slot][lane] = mine;
    if (lane == 0) {
        alive[slot][0] = 0;
        alive[slot][1] = 0;
    }
    int best = cap;
    int done = !valid;
    long last = 2 * m + width - 1;  /* the step of the last cell */
    long s = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) {
        s++;
        long i2 = s - lane;
        int active = !done && lane < width && i2 >= 2 && (i2 & 1) == 0 && i2 <= 2 * m;
        int val = cap;
        long i = i2 >> 1;
        if (active) {
            long j = i + kd;
            if (j >= 0 && j <= n) {
                int left = lane > 0 ? latest[slot][lane - 1] : cap;  /* D(i, j - 1), written at step s - 1 */
                int up = lane + 1 < width ? latest[slot][lane + 1] : cap;  /* D(i - 1, j), step s - 1 */
                val = min(left, up) + 1;
                if (j >= 1) {
                    int qc = qcodes[a + i - 1];
                    int tc = ref_code(packed, nmask, ws + j - 1);
                    val = min(val, mine + ((qc == tc && qc < 4) ? 0 : 1));
                }
                val = min(val, cap);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int p = s & 1;
        if (active) {
            latest[slot][lane] = val;
            mine = val;
            if (i == m)
                best = min(best, val);
        }
        if (!done && lane < width && s - lane < 2 * m && mine <= e)
            alive[slot][p] = 1;
        if (lane == 0)
            alive[slot][1 - p] = 0;  /* read by everyone at step s - 1, written again at step s + 1 */
        if (get_local_id(0) == 0)
            going = 0;  /* last read after the previous step's final barrier */
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!done && (alive[slot][p] == 0 || s >= last))
            done = 1;
        if (!done)
            going = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!going)
            break;
    }
    latest[slot][lane] = best;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && valid) {
        int r = best;
        for (int x = 1; x < LANES; x++)
            r = min(r, latest[slot][x]);
        out[k] = r;
    }
}
