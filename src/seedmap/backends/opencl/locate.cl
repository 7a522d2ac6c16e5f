/* Locations of reads in their candidate windows: the OpenCL C twin of the CPU verifier's window kernel
   (verify/windows.py over verify/bitvector.window_locations) and of the CUDA one (backends/cuda/
   locate_kernels.py), same definitions, same locations. One work-item per window.

   Myers' column-wise bit vectors over the read's words (reads up to 256 bp; the host sends longer ones to
   the CPU). A location is a run of consecutive ends with D(j) <= e, keeping its
   best end (least distance, then span closest to m, then leftmost end); the start of an end is S(j),
   the largest start of its optimal alignments, found by the reversed read against the text read
   leftwards from j, start anchored. There is no column array: the forward pass saves its state at a
   run's first end and replays the run's columns once the run is over (its least distance known). */

/* The bit-vector helpers (advance, ref_code, match_masks, start_column, column) and NB: myers.cl, built
   before this text. */

/* S(j) for window column j with D(j) = d. */
inline long start_of(u64 rpeq[4][MAXW], int m, uint hlast, __global const uchar *packed,
                     __global const uchar *nmask, long ws, long j, int d, u64 *pv, u64 *mv)
{
    if (d == 0)
        return j - m;
    start_column(pv, mv);
    int score = m;
    long kmax = min(j, (long)(m + d));
    for (long k = 1; k <= kmax; k++) {
        score += column(rpeq, pv, mv, hlast, ref_code(packed, nmask, ws + j - k), 1);
        if (score == d)  /* G(k) >= d everywhere: the first k reaching it is the least */
            return j - k;
    }
    return -1;  /* unreachable when d = D(j) */
}

__kernel void window_locations(long nsel, __global const long *sel, __global const uchar *qcodes, __global const long *qoff,
                               __global const long *qerr, __global const long *win_q, __global const long *win,
                               __global const uchar *packed, __global const uchar *nmask,
                               __global const long *slot_off, __global long *loc_start, __global long *loc_end,
                               __global int *loc_dist, __global long *loc_count)
{
    long g = get_global_id(0);
    if (g >= nsel)
        return;
    long w = sel[g];  /* a window whose read has NB words */
    u64 peq[4][MAXW], rpeq[4][MAXW];
    u64 pv[MAXW], mv[MAXW], spv[MAXW], smv[MAXW], rpv[MAXW], rmv[MAXW];
    long qi = win_q[w];
    long a = qoff[qi];
    int m = (int)(qoff[qi + 1] - a);
    int e = (int)qerr[qi >> 1];
    match_masks(qcodes, a, m, 0, peq);
    match_masks(qcodes, a, m, 1, rpeq);
    uint hlast = (uint)((m - 1) & 63);
    long ws = win[4 * w];
    long n = win[4 * w + 1] - ws;
    long s0 = slot_off[w];
    long cap = slot_off[w + 1] - s0;
    start_column(pv, mv);
    int score = m;  /* D(m, 0) */
    long k = 0;
    long first = 0;  /* first end of the current run, 0: none */
    int first_score = 0, least = 0;
    for (long j = 1; j <= n + 1; j++) {  /* column n + 1 only closes a run reaching the window's end */
        int hit = 0;
        if (j <= n) {
            score += column(peq, pv, mv, hlast, ref_code(packed, nmask, ws + j - 1), 0);
            hit = score <= e;
        }
        if (hit && first == 0) {
            first = j;
            first_score = least = score;
            for (int b = 0; b < NB; b++) {
                spv[b] = pv[b];
                smv[b] = mv[b];
            }
        } else if (hit) {
            least = min(least, score);
        } else if (first > 0) {
            /* replay first..j-1 from the saved state: each end at the least distance competes */
            long best_end = -1, best_start = 0;
            int s = first_score;
            for (long jj = first;; jj++) {
                if (s == least) {
                    long st = start_of(rpeq, m, hlast, packed, nmask, ws, jj, least, rpv, rmv);
                    if (best_end < 0 || abs(jj - st - m) < abs(best_end - best_start - m)) {
                        best_end = jj;
                        best_start = st;
                    }
                }
                if (jj == j - 1)
                    break;
                s += column(peq, spv, smv, hlast, ref_code(packed, nmask, ws + jj), 0);
            }
            if (k < cap) {
                loc_start[s0 + k] = ws + best_start;
                loc_end[s0 + k] = ws + best_end;
                loc_dist[s0 + k] = least;
            }
            k++;
            first = 0;
        }
    }
    loc_count[w] = k;
}
