/* The FM engine's search scheme on the device: the OpenCL C twin of filter/fm_scheme.py (the notes there say
   why each step is what it is) and of the CUDA kernels (backends/cuda/fm_kernels.py), the same accepted
   strings in the same order. search_kernel: one work-item per query, its band columns and stacks in its own
   contiguous run of a scratch buffer (scratch_size words: neighbouring on a CPU device's core), its first
   strings written to its rows, all of them counted, and its candidates. fill_kernel: one work-item per query
   locates every row of its strings (sampled SA walk) into its window slots and sorts them by start (windows.cl).

   Built after windows.cl and fm_index.cl; ROW, KIDS, SMALL_FROM, WALK_BASE, WALK_PER_ROW, WALK_FULL_E,
   WALK_PER_ROW_MAX, WALK_MAX and D_FROM_E come as build options. */

typedef struct {  /* fm_scheme.Part: a phase's read part in walking order and its columns */
    __global long *ext;
    long length;
    __global long *bound, *cap, *low, *cols;
} Part;

typedef struct {  /* fm_scheme.Stack: a walk's nodes, one per depth (the left walk's use lo, hi, c only) */
    __global long *lo, *hi, *c, *flo, *acc, *kids;
} Stack;

/* Cell (depth d, read position i) of a column store: the band |i - d| <= e, 2e + 1 cells per depth. */
inline long at(long d, long i, long e)
{
    return d * (2 * e + 1) + i - d + e;
}

/* Column d + 1 from column d for reference symbol c, cells over their cap or under their floor dropped;
   returns the smallest cell + lower bound of the rest. */
inline long column(Part p, long d, long e, long c)
{
    long nd = d + 1;
    long ilo = max(0L, nd - e), ihi = min(p.length, nd + e);
    long old_hi = min(p.length, d + e);
    long best = BIG, prev = BIG;
    for (long i = ilo; i <= ihi; i++) {
        long v;
        if (i == 0) {
            v = p.cols[at(d, 0, e)] + 1;
        } else {
            v = p.cols[at(d, i - 1, e)] + (p.ext[i - 1] == c && c < 4 ? 0 : 1);
            if (i <= old_hi)
                v = min(v, p.cols[at(d, i, e)] + 1);
            v = min(v, prev + 1);
        }
        if (v > p.cap[i] || v < p.low[i])
            v = BIG;
        p.cols[at(nd, i, e)] = v;
        prev = v;
        best = min(best, v + p.bound[i]);
    }
    return best;
}

inline long first_column(Part p, long cost0, long e)
{
    long best = BIG;
    for (long i = 0; i <= min(p.length, e); i++) {
        long v = p.low[i] <= cost0 + i && cost0 + i <= p.cap[i] ? cost0 + i : BIG;
        p.cols[at(0, i, e)] = v;
        best = min(best, v + p.bound[i]);
    }
    return best;
}

inline long last_cell(Part p, long d, long e)
{
    return abs(p.length - d) <= e ? p.cols[at(d, p.length, e)] : BIG;
}

/* Rows [lo, hi) of the forward index whose piece (read position js) starts `depth` bases in. */
inline long record(__global long *out, long cap, long n_out, long js, long depth, long lo, long hi)
{
    if (n_out < cap) {
        __global long *row = out + n_out * ROW;
        row[0] = js; row[1] = depth; row[2] = lo; row[3] = hi;
    }
    return n_out + 1;
}

/* fm_scheme._handed_on: whether a piece's exact search stops after t of its `length` bases with `rows` forward rows. */
inline bool handed_on(long t, long length, long rows, long small)
{
    return t >= STOP_AT && length - t >= REST_MIN && rows <= small;
}

/* fm_scheme._left_walk: the last phase, leftwards in the forward index; returns the rows recorded, adds the
   candidates to *total. */
inline long left_walk(__global const ulong *occ_tab, __global const long *counts, long lo0, long hi0, Part p,
                      long e, long cost0, Stack st, long js, long small, long done, __global long *out, long cap,
                      long n_out, long *total, long *work)
{
    long best = first_column(p, cost0, e);
    long last = last_cell(p, 0, e);
    if ((p.low[p.length + 1] <= last && last <= e) || (hi0 - lo0 <= small && done >= 0 && best <= e)) {
        *total += hi0 - lo0;
        return record(out, cap, n_out, js, 0, lo0, hi0);
    }
    if (best > e)
        return n_out;
    long max_depth = p.length + e;
    long d = 0;
    st.lo[0] = lo0; st.hi[0] = hi0; st.c[0] = 0;
    while (d >= 0) {
        if (++work[0] > work[1])  /* the step's budget is spent */
            return n_out;
        long c = st.c[d];
        if (c == 5 || d == max_depth) {
            d--;
            continue;
        }
        long lo = st.lo[d], nlo, nhi;
        if (st.hi[d] - lo == 1) {  /* one row, one child: its symbol is B[lo] */
            long x = bwt_symbol(occ_tab, lo);
            if (x < c) {
                st.c[d] = 5;
                continue;
            }
            c = x;
            st.c[d] = 5;
            nlo = lf(occ_tab, counts, c, lo);
            nhi = nlo + 1;
        } else {
            st.c[d] = c + 1;
            nlo = lf(occ_tab, counts, c, lo);
            nhi = lf(occ_tab, counts, c, st.hi[d]);
            if (nlo >= nhi)
                continue;
        }
        best = column(p, d, e, c);
        long nd = d + 1;
        last = last_cell(p, nd, e);
        if ((p.low[p.length + 1] <= last && last <= e) || (nhi - nlo <= small && done + nd >= 0 && best <= e)) {
            n_out = record(out, cap, n_out, js, nd, nlo, nhi);
            *total += nhi - nlo;
            continue;
        }
        if (best > e)
            continue;
        d = nd;
        st.lo[d] = nlo; st.hi[d] = nhi; st.c[d] = 0;
    }
    return n_out;
}

/* fm_scheme._record_rest: a right walk out of budget at depth d records what it has not walked (rows [lo, hi)
   whole, then every child not yet entered of the nodes on the stack up to depth d); returns the rows recorded,
   adds the candidates to *total. */
inline long record_rest(Stack st, long d, long js, long lo, long hi, long flo, __global long *out, long cap,
                        long n_out, long *total)
{
    if (hi > lo) {
        n_out = record(out, cap, n_out, js, 0, flo, flo + hi - lo);
        *total += hi - lo;
    }
    for (long dd = d; dd >= 0; dd--) {
        long k = KIDS * dd;
        for (long x = max(st.c[dd], 0L); x < 5; x++) {
            long a = st.kids[k + 3 * x], b = st.kids[k + 3 * x + 1];
            if (a < b) {
                n_out = record(out, cap, n_out, js, 0, st.kids[k + 3 * x + 2], st.kids[k + 3 * x + 2] + b - a);
                *total += b - a;
            }
        }
    }
    return n_out;
}

/* fm_scheme._right_walk: the first phase, rightwards in the reverse-text index with the forward rows in step;
   each accepted string starts the left phase. kids[KIDS * d + 3 * x + k]: child x of the node at depth d. */
inline long right_walk(__global const ulong *rev_occ, __global const ulong *fwd_occ, __global const long *counts,
                       long lo0, long hi0, long flo0, Part p, long e, Stack st, Part left, Stack left_st, long js,
                       long small, long done, __global long *out, long cap, long n_out, long *total, long *work)
{
    long best = first_column(p, 0, e);
    if (best > e)
        return n_out;
    long last = last_cell(p, 0, e);
    long acc = BIG;
    if (last <= e) {
        n_out = left_walk(fwd_occ, counts, flo0, flo0 + hi0 - lo0, left, e, last, left_st, js, small, done, out,
                          cap, n_out, total, work);
        if (work[0] > work[1])  /* the piece's rows, whole */
            return record_rest(st, -1, js, lo0, hi0, flo0, out, cap, n_out, total);
        if (best >= last)
            return n_out;
        acc = last;
    }
    long max_depth = p.length + e;
    long d = 0;
    __global long *kids = st.kids;
    st.lo[0] = lo0; st.hi[0] = hi0; st.flo[0] = flo0; st.c[0] = -1; st.acc[0] = acc;
    while (d >= 0) {
        if (++work[0] > work[1]) {
            if (st.c[d] == -1)  /* a node not entered yet: whole (and its parent's children after it) */
                return record_rest(st, d - 1, js, st.lo[d], st.hi[d], st.flo[d], out, cap, n_out, total);
            return record_rest(st, d, js, 0, 0, 0, out, cap, n_out, total);
        }
        long c = st.c[d];
        long k = KIDS * d;
        if (c == -1) {  /* children of this node, with the forward rows in step */
            long lo = st.lo[d], hi = st.hi[d];
            if (hi - lo == 1) {  /* one row, one child (B[lo]), with the same forward row */
                long x = bwt_symbol(rev_occ, lo);
                if (x < 0) {
                    d--;
                    continue;
                }
                kids[k + 3 * x] = lf(rev_occ, counts, x, lo);
                kids[k + 3 * x + 1] = kids[k + 3 * x] + 1;
                kids[k + 3 * x + 2] = st.flo[d];
                c = x;
                st.c[d] = 5;
            } else {
                long before = st.flo[d] + (hi - lo);  /* separators sort first: counted down from the end */
                for (long x = 0; x < 5; x++) {
                    long a = lf(rev_occ, counts, x, lo), b = lf(rev_occ, counts, x, hi);
                    kids[k + 3 * x] = a;
                    kids[k + 3 * x + 1] = b;
                    before -= b - a;
                }
                for (long x = 0; x < 5; x++) {
                    kids[k + 3 * x + 2] = before;
                    before += kids[k + 3 * x + 1] - kids[k + 3 * x];
                }
                c = 0;
            }
        }
        if (c == 5 || d == max_depth) {
            d--;
            continue;
        }
        st.c[d] = max(c + 1, st.c[d]);
        long nlo = kids[k + 3 * c], nhi = kids[k + 3 * c + 1], nflo = kids[k + 3 * c + 2];
        if (nlo >= nhi)
            continue;
        best = column(p, d, e, c);
        long nd = d + 1;
        if (best > e)
            continue;
        last = last_cell(p, nd, e);
        acc = st.acc[d];
        if (last <= p.cap[p.length] && last < acc) {
            n_out = left_walk(fwd_occ, counts, nflo, nflo + nhi - nlo, left, e, last, left_st, js, small, done + nd,
                              out, cap, n_out, total, work);
            if (work[0] > work[1])  /* this child whole, and the children after it */
                return record_rest(st, d, js, nlo, nhi, nflo, out, cap, n_out, total);
            if (best >= last)  /* no longer string ends the read part with fewer edits */
                continue;
            acc = last;
        }
        if (nhi - nlo <= small && done + nd >= 0) {
            n_out = record(out, cap, n_out, js, 0, nflo, nflo + nhi - nlo);
            *total += nhi - nlo;
            continue;
        }
        d = nd;
        st.lo[d] = nlo; st.hi[d] = nhi; st.flo[d] = nflo; st.c[d] = -1; st.acc[d] = acc;
    }
    return n_out;
}

/* fm_scheme.search: every step of the scheme for query q (m bases, e edits); the first `cap` accepted strings
   written to out; returns their number, the candidates to *total. scratch: fm_scheme.scratch_size(m, e). */
inline long search(__global const uchar *q, long m, long e, long n, __global const long *counts,
                   __global const ulong *fwd_occ, __global const ulong *rev_occ, long small, __global long *out,
                   long cap, __global long *s, long *total)
{
    *total = 0;
    if (m <= e)
        return 0;
    long k = e + 1, dim = m + e + 1;
    long band = dim * (2 * e + 1);
    __global long *ext_r = s, *ext_l = s + m;
    long a = 2 * m;
    __global long *bound_r = s + a, *bound_l = s + a + m + 1;
    a += 2 * m + 2;
    __global long *cap_r = s + a, *cap_l = s + a + m + 1;
    a += 2 * m + 2;
    __global long *low_r = s + a, *low_l = s + a + m + 2;
    a += 2 * m + 4;
    __global long *cols_r = s + a, *cols_l = s + a + band;
    a += 2 * band;
    __global long *sk = s + a;  /* s0 .. s7, dim words each */
    a += 8 * dim;
    __global long *kids = s + a;
    a += KIDS * dim;
    __global long *bounds = s + a, *piece = s + a + k + 1;
    pieces(q, m, k, n, counts, fwd_occ, bounds, s + a + k + 1 + m);
    for (long j = 0; j < k; j++)
        for (long i = bounds[j]; i < bounds[j + 1]; i++)
            piece[i] = j;
    for (long i = 0; i < m; i++) {
        ext_r[i] = q[i];
        ext_l[i] = q[m - 1 - i];
        cap_l[i] = e;
        low_r[i] = 0;
    }
    cap_l[m] = e;
    low_r[m] = low_r[m + 1] = 0;
    if (e < D_FROM_E) {  /* cheaper without them (e = 0: no walk reads them) */
        for (long i = 0; i <= m; i++)
            bound_r[i] = bound_l[i] = 0;
    }
    int make_d = e >= D_FROM_E;  /* made before the first walk only (fm_scheme.search) */
    Stack left_st = {sk, sk + dim, sk + 2 * dim, sk, sk, sk};
    Stack right_st = {sk + 3 * dim, sk + 4 * dim, sk + 6 * dim, sk + 5 * dim, sk + 7 * dim, kids};
    long n_out = 0;
    for (long j = 0; j < k; j++) {
        long js = bounds[j], je = bounds[j + 1];
        long lo = 0, hi = n, flo = 0, fhi = n;
        long handed = -1;  /* where the part of the piece handed on to verification starts (STOP_AT) */
        if (k == 1) {  /* e = 0: the read is the piece: the forward index alone, backwards */
            for (long t = 0; t < m; t++) {
                if (handed_on(t, m, fhi - flo, small)) {
                    handed = m - t;
                    break;
                }
                long c = q[m - 1 - t];
                if (c > 3) {
                    fhi = flo;
                    break;
                }
                long nflo = lf(fwd_occ, counts, c, flo);
                fhi = lf(fwd_occ, counts, c, fhi);
                flo = nflo;
                if (flo >= fhi)
                    break;
            }
            hi = max(fhi - flo, 0L);
        } else {
            for (long t = 0; t < je - js; t++) {  /* piece j in both indexes */
                if (handed_on(t, je - js, fhi - flo, small)) {
                    handed = je - t;
                    break;
                }
                long c = q[js + t];
                if (c > 3) {
                    hi = lo;
                    break;
                }
                long nlo = lf(rev_occ, counts, c, lo);
                hi = lf(rev_occ, counts, c, hi);
                lo = nlo;
                if (lo >= hi)
                    break;
                c = q[je - 1 - t];
                long nflo = lf(fwd_occ, counts, c, flo);
                fhi = lf(fwd_occ, counts, c, fhi);
                flo = nflo;
            }
        }
        if (handed >= 0) {
            if (flo < fhi) {
                n_out = record(out, cap, n_out, handed, 0, flo, fhi);
                *total += fhi - flo;
            }
            continue;
        }
        if (lo >= hi)
            continue;
        long len_r = m - je, len_l = js;
        for (long i = 0; i < len_r; i++)
            cap_r[i] = piece[je + i] - j;
        cap_r[len_r] = k - 1 - j;
        low_l[0] = 0;
        for (long i = 1; i <= len_l; i++)
            low_l[i] = j - 1 - piece[js - i];
        low_l[len_l + 1] = j;
        Part left = {ext_l + m - js, len_l, bound_l + m - js, cap_l, low_l, cols_l};
        Part right = {ext_r + je, len_r, bound_r + je, cap_r, low_r, cols_r};
        long done = je - js - min(m, SMALL_FROM * (je - js));
        if (hi - lo <= small && done >= 0) {  /* a rare piece: its rows to verification, no walk */
            n_out = record(out, cap, n_out, js, 0, flo, flo + hi - lo);
            *total += hi - lo;
            continue;
        }
        if (make_d) {
            lower_bounds(fwd_occ, counts, n, ext_r, m, bound_r);
            lower_bounds(rev_occ, counts, n, ext_l, m, bound_l);
            make_d = 0;
        }
        long got = 0;
        long per_row = min(WALK_PER_ROW_MAX, WALK_PER_ROW << max(0L, WALK_FULL_E - e));  /* fm_scheme.walk_per_row */
        long work[2] = {0, min((long)WALK_MAX, WALK_BASE + per_row * (hi - lo))};  /* fm_scheme.py's notes */
        n_out = right_walk(rev_occ, fwd_occ, counts, lo, hi, flo, right, e, right_st, left, left_st, js, small,
                           done, out, cap, n_out, &got, work);
        *total += got;
    }
    return n_out;
}

/* Query ids[first + t] searched: its first row_off[j + 1] - row_off[j] strings written from rows[row_off[j]]
   (j = first + t), their number to n_rows[j], its candidates to cand[j]. */
__kernel void search_kernel(long nt, __global const uchar *qcodes, __global const long *qoff,
                            __global const long *qerr, __global const long *ids, long first, long n,
                            __global const long *counts, __global const ulong *fwd_occ,
                            __global const ulong *rev_occ, long small, __global long *scratch, long width,
                            __global long *rows, __global const long *row_off, __global long *n_rows,
                            __global long *cand)
{
    long t = get_global_id(0);
    if (t >= nt)
        return;
    long j = first + t;
    long qi = ids[j];
    long total;
    n_rows[j] = search(qcodes + qoff[qi], qoff[qi + 1] - qoff[qi], qerr[qi >> 1], n, counts, fwd_occ, rev_occ,
                       small, rows + row_off[j] * ROW, row_off[j + 1] - row_off[j], scratch + t * width, &total);
    cand[j] = total;
}

/* Query first + t writes the windows [diag - e, diag + m + e) (clipped to the piece's sequence) of every row of
   its strings (rows[row_at[q]:], n_rows[q] of them) from slot slot_off[t] on, then sorts them by start
   (fm_scheme.row_windows, then filter/windows.sort_windows). */
__kernel void fill_kernel(long nt, long first, __global const long *qoff, __global const long *qerr,
                          __global const long *counts, __global const long *text_starts, long n_text_starts,
                          __global const ulong *fwd_occ, __global const ulong *fwd_mark,
                          __global const SSA_T *fwd_ssa, __global const long *ref_starts, __global const long *rows,
                          __global const long *row_at, __global const long *n_rows, __global const long *slot_off,
                          __global long *win_s, __global long *win_e, __global long *win_d)
{
    long t = get_global_id(0);
    if (t >= nt)
        return;
    long qi = first + t;
    long m = qoff[qi + 1] - qoff[qi], e = qerr[qi >> 1];
    long w = slot_off[t];
    for (long r = 0; r < n_rows[qi]; r++) {
        __global const long *row = rows + (row_at[qi] + r) * ROW;
        for (long i = row[2]; i < row[3]; i++) {
            long ps = locate(fwd_occ, counts, fwd_mark, fwd_ssa, i) + row[1];
            long s = sequence_of(text_starts, n_text_starts, ps);
            long diag = ps - text_starts[s] + ref_starts[s] - row[0];  /* a segment's sequences start further on */
            win_s[w] = max(diag - e, ref_starts[s]);
            win_e[w] = min(diag + m + e, ref_starts[s + 1]);
            win_d[w] = diag;
            w++;
        }
    }
    sort_windows(win_s, win_e, win_d, slot_off[t], w - slot_off[t]);
}
