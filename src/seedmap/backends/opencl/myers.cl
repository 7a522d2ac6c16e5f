/* Myers' column-wise bit vectors over a read's NB 64-bit words, shared by the window kernel (locate.cl) and
   the bulk verification kernels (bulk.cl), which program.py builds after this text: one column step of a
   block (verify/bulk._advance), a reference base's code, a read's match masks, one text column.

   NB, the read's 64-bit words (1 to 4: reads up to 256 bp), is a build option: one program per NB, so every
   loop over the words has a constant count (unrolled, the words in registers); the host launches each
   program on the windows (candidates) whose reads have that many words. */
#ifndef NB
#define NB 4
#endif
#define MAXW NB
typedef ulong u64;

/* One column step of a 64-row block (verify/bulk._advance): vp, vn updated, the change at row bit hs. */
inline int advance(u64 *vp, u64 *vn, u64 eq, int hin, uint hs)
{
    u64 hn = hin < 0 ? 1UL : 0UL;
    u64 hp = hin > 0 ? 1UL : 0UL;
    u64 xv = eq | *vn;
    eq |= hn;
    u64 xh = (((eq & *vp) + *vp) ^ *vp) | eq;
    u64 ph = *vn | ~(xh | *vp);
    u64 mh = *vp & xh;
    int hout = (int)((ph >> hs) & 1UL) - (int)((mh >> hs) & 1UL);
    ph = (ph << 1) | hp;
    mh = (mh << 1) | hn;
    *vp = mh | ~(xv | ph);
    *vn = ph & xv;
    return hout;
}

/* Code of reference base i, 4 for N (io/reference.ref_code). */
inline int ref_code(__global const uchar *packed, __global const uchar *nmask, long i)
{
    if ((nmask[i >> 3] >> (i & 7)) & 1)
        return 4;
    return (packed[i >> 2] >> ((i & 3) << 1)) & 3;
}

/* peq[c][w] bit b <=> read base 64w + b is c (read backwards when `backwards`); N matches nothing. */
inline void match_masks(__global const uchar *qcodes, long a, int m, int backwards, u64 peq[4][MAXW])
{
    for (int b = 0; b < NB; b++)
        for (int c = 0; c < 4; c++)
            peq[c][b] = 0UL;
    for (int i = 0; i < m; i++) {
        int c = backwards ? qcodes[a + m - 1 - i] : qcodes[a + i];
        if (c < 4)
            peq[c][i >> 6] |= 1UL << (i & 63);
    }
}

inline void start_column(u64 *pv, u64 *mv)
{
    for (int b = 0; b < NB; b++) {
        pv[b] = ~0UL;
        mv[b] = 0UL;
    }
}

/* One text column (code c) through the read's NB words; the last row's change. hin: row 0's change
   (0: free start in the text, 1: start anchored). */
inline int column(u64 peq[4][MAXW], u64 *pv, u64 *mv, uint hlast, int c, int hin)
{
    int h = hin;
    for (int b = 0; b < NB; b++)
        h = advance(&pv[b], &mv[b], c < 4 ? peq[c][b] : 0UL, h, b == NB - 1 ? hlast : 63u);
    return h;
}

