/* What every program whose fill pass writes candidate windows shares, built in front of seed_filter.cl and
   fm_index.cl: the sequence a text position lies in (io/reference.sequence_of), and the sort of a query's
   windows by start (the CPU's filter/windows.sort_windows). */

/* io/reference.sequence_of: the last s with starts[s] <= p. */
inline long sequence_of(__global const long *starts, long n, long p)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = (lo + hi) >> 1;
        if (starts[mid] <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

inline void swap3(__global long *a, __global long *b, __global long *c, long i, long j)
{
    long x = a[i]; a[i] = a[j]; a[j] = x;
    x = b[i]; b[i] = b[j]; b[j] = x;
    x = c[i]; c[i] = c[j]; c[j] = x;
}

inline void sift(__global long *a, __global long *b, __global long *c, long lo, long root, long n)
{
    while (1) {
        long child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && a[lo + child + 1] > a[lo + child])
            child++;
        if (a[lo + root] >= a[lo + child])
            return;
        swap3(a, b, c, lo + root, lo + child);
        root = child;
    }
}

/* The windows [lo, lo + n) sorted by start: insertion sort for the usual handful, heap sort (in place,
   O(n log n)) for repeats. Equal starts may come in any order: the merge that follows does not depend on it. */
inline void sort_windows(__global long *win_s, __global long *win_e, __global long *win_d, long lo, long n)
{
    if (n <= 32) {
        for (long i = lo + 1; i < lo + n; i++)
            for (long j = i; j > lo && win_s[j - 1] > win_s[j]; j--)
                swap3(win_s, win_e, win_d, j - 1, j);
        return;
    }
    for (long root = n / 2 - 1; root >= 0; root--)
        sift(win_s, win_e, win_d, lo, root, n);
    for (long end = n - 1; end > 0; end--) {
        swap3(win_s, win_e, win_d, lo, lo + end);
        sift(win_s, win_e, win_d, lo, 0, end);
    }
}

/* Query q's windows [seg_off[q], seg_off[q + 1]) sorted by start. */
__kernel void sort_kernel(long nq, __global const long *seg_off, __global long *win_s, __global long *win_e,
                          __global long *win_d)
{
    long q = get_global_id(0);
    if (q < nq)
        sort_windows(win_s, win_e, win_d, seg_off[q], seg_off[q + 1] - seg_off[q]);
}
