/*
 * The model build's sequential loops, compiled: matching each thread's duration events into slices with a
 * stack (core/trace/slices.py), the LOD pyramid's per-bucket reductions (core/trace/lod.py) and the
 * overview's density histogram (core/trace/model.py).
 *
 * Why C: numpy does each of these in many passes over every event (a stable sort of the markers by
 * (thread, level), gathers, cumulative sums, reduceat per level), each pass allocating an event-sized
 * temporary. A stack replay is one pass with a few bytes a stack entry; a pyramid level is one pass over
 * the slices in lane order. The GIL is released while they run.
 *
 * The numpy paths stay the reference (FXSCOPE_NO_COMPILED=1 forces them; the tests compare both on
 * whole tables). Every index read from a buffer is bounds-checked: an out-of-range row, lane or thread
 * raises ValueError (the callers then take the numpy path), never a read outside a buffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* boxes of one colour merged from this many (lane_item.merge_touching's threshold) */
#define MERGE_FROM 32
/* box_rects sorts colours spanning fewer values than this by counting */
#define COUNTING_SORT_SPAN 1024

enum { K_BEGIN = 2, K_END = 3, K_COMPLETE = 4 };
enum { FLAG_UNMATCHED_END = 1, FLAG_UNCLOSED = 2 };

static int check_buffer(Py_buffer *b, Py_ssize_t itemsize, const char *what)
{
    if (b->len % itemsize != 0 || ((uintptr_t)b->buf) % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: buffer length or alignment does not fit %zd-byte items", what,
                     itemsize);
        return -1;
    }
    return 0;
}

/* A thread value of a 2- or 4-byte thread column. */
static inline int64_t thread_at(const void *thread, int wide, int64_t i)
{
    return wide ? (int64_t)((const int32_t *)thread)[i] : (int64_t)((const int16_t *)thread)[i];
}

/* ------------------------------------------------------------------ grouping duration events by thread */

PyDoc_STRVAR(duration_threads_doc,
"duration_threads(kind, thread, wide[, k_lo, k_hi]) -> (n_sel, n_end, lo, hi)\n\n"
"The duration events (kinds k_lo..k_hi, by default 2..4: begin, end, complete) of the uint8 kind column:\n"
"their number, the number of ends (kind 3) among them, and the smallest and largest thread value among them\n"
"(int16 threads, int32 when wide; lo > hi when there are none).");

static PyObject *duration_threads(PyObject *self, PyObject *args)
{
    Py_buffer kb, tb;
    int wide, k_lo = K_BEGIN, k_hi = K_COMPLETE;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*p|ii", &kb, &tb, &wide, &k_lo, &k_hi))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t tsz = wide ? 4 : 2;
    if (check_buffer(&tb, tsz, "thread") < 0)
        goto done;
    if (tb.len / tsz != kb.len) {
        PyErr_SetString(PyExc_ValueError, "duration_threads: kind and thread lengths differ");
        goto done;
    }
    {
        const uint8_t *kind = (const uint8_t *)kb.buf;
        const int64_t n = kb.len;
        int64_t n_sel = 0, n_end = 0, lo = INT64_MAX, hi = INT64_MIN;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t i = 0; i < n; i++) {
            const uint8_t k = kind[i];
            if (k < k_lo || k > k_hi)
                continue;
            n_sel++;
            n_end += k == K_END;
            const int64_t t = thread_at(tb.buf, wide, i);
            if (t < lo)
                lo = t;
            if (t > hi)
                hi = t;
        }
        Py_END_ALLOW_THREADS
        result = Py_BuildValue("LLLL", (long long)n_sel, (long long)n_end, (long long)lo, (long long)hi);
    }
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&tb);
    return result;
}

/* A key of a 1-, 2- or 4-byte key column (uint8 codes of a one-byte code column, else int16/int32 threads). */
static inline int64_t key_at(const void *keys, int width, int64_t i)
{
    return width == 1 ? (int64_t)((const uint8_t *)keys)[i]
                      : (width == 2 ? (int64_t)((const int16_t *)keys)[i] : (int64_t)((const int32_t *)keys)[i]);
}

PyDoc_STRVAR(thread_counts_doc,
"thread_counts(kind, keys, width, lo, ptr, cptr) -> (n_sel, n_end)\n\n"
"Where each thread's duration events (kinds 2..4) go when grouped by thread: keys (one a row of the uint8\n"
"kind column; width 1: uint8, 2: int16, 4: int32) minus lo are the thread keys 0..len(ptr) - 2; ptr[k] is\n"
"the first position of key k's duration events (int64, exclusive prefix sums: ptr[-1] the duration events),\n"
"cptr[k] that of its complete events. Returns the duration events and the ends (kind 3) among them. Raises\n"
"ValueError for a key out of range.");

static PyObject *thread_counts(PyObject *self, PyObject *args)
{
    Py_buffer kb, tb, pb, cpb;
    int width;
    long long lo;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*iLw*w*", &kb, &tb, &width, &lo, &pb, &cpb))
        return NULL;
    PyObject *result = NULL;
    if ((width != 1 && width != 2 && width != 4) || check_buffer(&tb, width, "keys") < 0 ||
        check_buffer(&pb, 8, "ptr") < 0 || check_buffer(&cpb, 8, "cptr") < 0)
        goto bad_width;
    if (tb.len / width != kb.len || pb.len / 8 < 1 || cpb.len != pb.len) {
        PyErr_SetString(PyExc_ValueError, "thread_counts: bad column lengths");
        goto done;
    }
    {
        const uint8_t *kind = (const uint8_t *)kb.buf;
        const int64_t n = kb.len, n_keys = pb.len / 8 - 1;
        int64_t *ptr = (int64_t *)pb.buf, *cptr = (int64_t *)cpb.buf;
        int64_t n_sel = 0, n_end = 0;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        memset(ptr, 0, (size_t)(n_keys + 1) * 8);
        memset(cptr, 0, (size_t)(n_keys + 1) * 8);
        for (int64_t i = 0; i < n; i++) {
            const uint8_t k = kind[i];
            if (k < K_BEGIN || k > K_COMPLETE)
                continue;
            const int64_t key = key_at(tb.buf, width, i) - lo;
            if (key < 0 || key >= n_keys) {
                bad = 1;
                break;
            }
            ptr[key + 1]++;
            cptr[key + 1] += k == K_COMPLETE;
            n_end += k == K_END;
        }
        for (int64_t k = 0; k < n_keys && !bad; k++) {
            ptr[k + 1] += ptr[k];
            cptr[k + 1] += cptr[k];
        }
        n_sel = ptr[n_keys];
        Py_END_ALLOW_THREADS
        if (bad)
            PyErr_SetString(PyExc_ValueError, "thread_counts: a thread key out of range");
        else
            result = Py_BuildValue("LL", (long long)n_sel, (long long)n_end);
    }
    goto done;
bad_width:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "thread_counts: width must be 1, 2 or 4");
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&cpb);
    return result;
}

PyDoc_STRVAR(scatter_threads_doc,
"scatter_threads(kind, keys, width, lo, start, ts, crow, cend, j, next, cnext, order, ts_g, kind_g, cend_g) -> j\n\n"
"The duration events of rows start..start + len(ts) - 1 (kind and keys: whole columns as thread_counts\n"
"took them; ts: those rows' int64 times) grouped by thread, a block of rows at a time (a stable counting sort:\n"
"file order within a thread when the blocks come in row order): each goes to position next[key] (then\n"
"incremented) of order (its row, int32), ts_g (its time) and kind_g (its kind); a complete event's end\n"
"cend[j] (crow[j], int32 ascending, must be its row) to position cnext[key] of cend_g. next and cnext start as\n"
"thread_counts' ptr and cptr without their last item; returns j past the block's complete events. Raises\n"
"ValueError for a key, position or complete event out of range (nothing is read or written outside a buffer).");

static PyObject *scatter_threads(PyObject *self, PyObject *args)
{
    Py_buffer kb, tb, tsb, crb, ceb, nb, cnb, ob, tgb, kgb, cgb;
    int width;
    long long lo, start, j0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*iLLy*y*y*Lw*w*w*w*w*w*", &kb, &tb, &width, &lo, &start, &tsb, &crb, &ceb, &j0,
                          &nb, &cnb, &ob, &tgb, &kgb, &cgb))
        return NULL;
    PyObject *result = NULL;
    if (width != 1 && width != 2 && width != 4) {
        PyErr_SetString(PyExc_ValueError, "scatter_threads: width must be 1, 2 or 4");
        goto done;
    }
    if (check_buffer(&tb, width, "keys") < 0 || check_buffer(&tsb, 8, "ts") < 0 || check_buffer(&crb, 4, "crow") < 0 ||
        check_buffer(&ceb, 8, "cend") < 0 || check_buffer(&nb, 8, "next") < 0 || check_buffer(&cnb, 8, "cnext") < 0 ||
        check_buffer(&ob, 4, "order") < 0 || check_buffer(&tgb, 8, "ts_g") < 0 || check_buffer(&cgb, 8, "cend_g") < 0)
        goto done;
    if (tb.len / width != kb.len || kb.len > INT32_MAX || start < 0 || start + tsb.len / 8 > kb.len ||
        crb.len / 4 != ceb.len / 8 || cnb.len != nb.len || tgb.len / 8 != ob.len / 4 || kgb.len != ob.len / 4 ||
        j0 < 0 || j0 > crb.len / 4) {
        PyErr_SetString(PyExc_ValueError, "scatter_threads: bad column lengths");
        goto done;
    }
    {
        const uint8_t *kind = (const uint8_t *)kb.buf;
        const int64_t *ts = (const int64_t *)tsb.buf, *cend = (const int64_t *)ceb.buf;
        const int32_t *crow = (const int32_t *)crb.buf;
        const int64_t n_keys = nb.len / 8, n_order = ob.len / 4, nc = crb.len / 4, n_cg = cgb.len / 8;
        const int64_t stop = start + tsb.len / 8;
        int64_t *next = (int64_t *)nb.buf, *cnext = (int64_t *)cnb.buf, *ts_g = (int64_t *)tgb.buf;
        int64_t *cend_g = (int64_t *)cgb.buf;
        int32_t *order = (int32_t *)ob.buf;
        uint8_t *kind_g = (uint8_t *)kgb.buf;
        int64_t j = j0;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t i = start; i < stop; i++) {
            const uint8_t k = kind[i];
            if (k < K_BEGIN || k > K_COMPLETE)
                continue;
            const int64_t key = key_at(tb.buf, width, i) - lo;
            if (key < 0 || key >= n_keys || next[key] < 0 || next[key] >= n_order) {
                bad = 1;
                break;
            }
            const int64_t at = next[key]++;
            order[at] = (int32_t)i;
            ts_g[at] = ts[i - start];
            kind_g[at] = k;
            if (k == K_COMPLETE) {
                if (j >= nc || crow[j] != i || cnext[key] < 0 || cnext[key] >= n_cg) {
                    bad = 1;
                    break;
                }
                cend_g[cnext[key]++] = cend[j++];
            }
        }
        Py_END_ALLOW_THREADS
        if (bad)
            PyErr_SetString(PyExc_ValueError, "scatter_threads: a thread key or position out of range, or complete "
                                              "ends not those of the complete events");
        else
            result = PyLong_FromLongLong((long long)j);
    }
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&tsb);
    PyBuffer_Release(&crb);
    PyBuffer_Release(&ceb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&cnb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&tgb);
    PyBuffer_Release(&kgb);
    PyBuffer_Release(&cgb);
    return result;
}

/* ------------------------------------------------------------------ stable merge sorts of int32 indexes */

/* Sort idx[0:n] stably by key1[idx] (int64), then key2[idx] (int32, may be NULL); tmp holds n. */
static void merge_sort(int32_t *idx, int32_t *tmp, int64_t n, const int64_t *key1, const int32_t *key2)
{
    /* bottom-up: runs of width w merged pairwise, ping-ponging between idx and tmp */
    int32_t *src = idx, *dst = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t a = 0; a < n; a += 2 * w) {
            int64_t m = a + w < n ? a + w : n, e = a + 2 * w < n ? a + 2 * w : n;
            int64_t i = a, j = m, o = a;
            while (i < m && j < e) {
                const int32_t x = src[i], y = src[j];
                int take_right = key1[y] < key1[x] || (key2 && key1[y] == key1[x] && key2[y] < key2[x]);
                dst[o++] = take_right ? src[j++] : src[i++];
            }
            while (i < m)
                dst[o++] = src[i++];
            while (j < e)
                dst[o++] = src[j++];
        }
        int32_t *s = src;
        src = dst;
        dst = s;
    }
    if (src != idx)
        memcpy(idx, src, (size_t)n * 4);
}

/* ------------------------------------------------------------------ matching one thread's slices */

typedef struct {
    int64_t end;
    int32_t row;
} Pending; /* a complete event's end marker, waiting in a min-heap by (end, row) */

static inline int pending_less(Pending a, Pending b)
{
    return a.end < b.end || (a.end == b.end && a.row < b.row);
}

static void heap_push(Pending *h, int64_t *n, Pending v)
{
    int64_t i = (*n)++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!pending_less(v, h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static Pending heap_pop(Pending *h, int64_t *n)
{
    Pending top = h[0], v = h[--(*n)];
    int64_t i = 0, m = *n;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && pending_less(h[c + 1], h[c]))
            c++;
        if (!pending_less(h[c], v))
            break;
        h[i] = h[c];
        i = c;
    }
    if (m)
        h[i] = v;
    return top;
}

typedef struct {
    /* the thread's events (grouped by thread_counts and scatter_threads): rows, times, kinds, complete events' ends */
    const int32_t *row;
    const int64_t *ts;
    const uint8_t *kind;
    const int64_t *cend;
    int64_t unclosed_end; /* max(trace_end, 0) */
    /* outputs (capacity cap rows) */
    int64_t *o_ts, *o_dur;
    uint16_t *o_depth;
    int32_t *o_event;
    uint8_t *o_flags;
    int32_t *o_parent;
    int64_t cap;
    /* scratch, sized for the largest thread */
    int32_t *ev, *sort_tmp, *stack, *level, *perm, *cpos;
    int64_t *col_tmp;
    Pending *heap;
    int32_t *best_row; /* per level: the parent candidate (a slice of the thread) */
    int64_t *best_ts, *best_end;
    int64_t best_cap;
} Ctx;

/* One replay of the thread's markers (its events ev[0:e], positions in the thread's group, in time order;
   the complete events' ends merged in); with u_total the number of ends that find the stack empty (0 on
   the first replay: found by it), writing the begins' slices at base + 0.. and the unmatched ends' at
   base + n_begins + ... Returns the number of unmatched ends. */
static int64_t replay(Ctx *c, int64_t e, int64_t base, int64_t n_begins, int64_t u_total)
{
    const int32_t *ev = c->ev;
    int64_t depth = 0, u = 0, k = 0, nh = 0;
    const int64_t first_ts = c->ts[ev[0]];
    int64_t *o_ts = c->o_ts + base, *o_end = c->o_dur + base;
    int32_t *o_event = c->o_event + base, *level = c->level;
    uint8_t *o_flags = c->o_flags + base;
#define END_MARKER(T, ROW)                                                                                         \
    do {                                                                                                           \
        if (depth == 0) {                                                                                          \
            if (u_total) {                                                                                         \
                int64_t s = n_begins + u;                                                                          \
                o_ts[s] = first_ts;                                                                                \
                o_end[s] = (T);                                                                                    \
                level[s] = (int32_t)(u_total - 1 - u);                                                             \
                o_event[s] = (ROW);                                                                                \
                o_flags[s] = FLAG_UNMATCHED_END;                                                                   \
            }                                                                                                      \
            u++;                                                                                                   \
        } else {                                                                                                   \
            int32_t s = c->stack[--depth];                                                                         \
            o_end[s] = (T);                                                                                        \
            o_flags[s] = 0;                                                                                        \
        }                                                                                                          \
    } while (0)
    for (int64_t i = 0; i < e; i++) {
        const int32_t p = ev[i], row = c->row[p];
        const int64_t t = c->ts[p];
        while (nh && c->heap[0].end <= t) {
            Pending q = heap_pop(c->heap, &nh);
            END_MARKER(q.end, q.row);
        }
        const uint8_t kd = c->kind[p];
        if (kd == K_END) {
            END_MARKER(t, row);
            continue;
        }
        int opens = 1;
        if (kd == K_COMPLETE) {
            const int64_t ce = c->cend[c->cpos[p]];
            if (ce > t)
                heap_push(c->heap, &nh, (Pending){ce, row});
            else
                opens = 0;
        }
        /* a begin (or complete event) opens a slice at the stack's level; one of zero length closes itself */
        o_ts[k] = t;
        o_end[k] = t;
        level[k] = (int32_t)(depth + (u_total - u));
        o_event[k] = row;
        o_flags[k] = opens ? FLAG_UNCLOSED : 0;
        if (opens)
            c->stack[depth++] = (int32_t)k;
        k++;
    }
    while (nh) {
        Pending q = heap_pop(c->heap, &nh);
        END_MARKER(q.end, q.row);
    }
#undef END_MARKER
    while (depth)
        o_end[c->stack[--depth]] = c->unclosed_end;
    for (int64_t s = 0; s < n_begins; s++)
        if (o_end[s] < o_ts[s])
            o_end[s] = o_ts[s];
    return u;
}

/* Permute the thread's rows (and their levels) by perm (old index of each new position). */
#define PERMUTE(TYPE, COL)                                                                                          \
    do {                                                                                                           \
        TYPE *tmp_ = (TYPE *)c->col_tmp;                                                                           \
        for (int64_t i = 0; i < s; i++)                                                                            \
            tmp_[i] = (COL)[perm[i]];                                                                              \
        memcpy((COL), tmp_, (size_t)s * sizeof(TYPE));                                                             \
    } while (0)

/* The thread whose e events are c->row/ts/kind[0:e] (its n_complete complete events' ends c->cend[0:]):
   0 done (*need: its slices); 1: the output needs *need rows of capacity from base; -1: its kinds or
   complete events do not add up; -2: no memory. */
static int match_thread(Ctx *c, int64_t e, int64_t n_complete, int64_t base, int64_t *need)
{
    int64_t n_begins = 0, nc = 0;
    int in_order = 1;
    for (int64_t i = 0; i < e; i++) {
        const uint8_t kd = c->kind[i];
        if (kd < K_BEGIN || kd > K_COMPLETE)
            return -1;
        n_begins += kd != K_END;
        c->cpos[i] = (int32_t)nc; /* (a complete event's end is cend[cpos]) */
        nc += kd == K_COMPLETE;
        c->ev[i] = (int32_t)i;
        if (i && c->ts[i] < c->ts[i - 1])
            in_order = 0;
    }
    if (nc != n_complete)
        return -1;
    if (base + n_begins > c->cap) {
        *need = n_begins;
        return 1;
    }
    if (!in_order)
        merge_sort(c->ev, c->sort_tmp, e, c->ts, NULL);
    int64_t u = replay(c, e, base, n_begins, 0);
    if (u) {
        if (base + n_begins + u > c->cap) {
            *need = n_begins + u;
            return 1;
        }
        replay(c, e, base, n_begins, u);
    }
    const int64_t s = n_begins + u;
    int64_t *o_ts = c->o_ts + base, *o_end = c->o_dur + base;
    int32_t *level = c->level;
    /* rows by (start, level), ties in this order: the begins in marker order are by start; resorted only
       when unmatched ends were added or a shallower slice follows a deeper one of the same start */
    int sort = u != 0;
    for (int64_t i = 1; i < s && !sort; i++)
        sort = o_ts[i] == o_ts[i - 1] && level[i] < level[i - 1];
    if (sort) {
        int32_t *perm = c->perm;
        for (int64_t i = 0; i < s; i++)
            perm[i] = (int32_t)i;
        merge_sort(perm, c->sort_tmp, s, o_ts, level);
        PERMUTE(int64_t, o_ts);
        PERMUTE(int64_t, o_end);
        PERMUTE(int32_t, c->o_event + base);
        PERMUTE(uint8_t, c->o_flags + base);
        PERMUTE(int32_t, level);
    }
    /* parents: per level, the last slice so far (the longest of those starting with it, the last on a tie) */
    int64_t top = 0;
    for (int64_t i = 0; i < s; i++)
        if (level[i] > top)
            top = level[i];
    if (top + 1 > c->best_cap) {
        int64_t want = top + 1;
        int32_t *r = realloc(c->best_row, (size_t)want * 4);
        if (r)
            c->best_row = r;
        int64_t *bt = realloc(c->best_ts, (size_t)want * 8);
        if (bt)
            c->best_ts = bt;
        int64_t *be = realloc(c->best_end, (size_t)want * 8);
        if (be)
            c->best_end = be;
        if (!r || !bt || !be)
            return -2;
        c->best_cap = want;
    }
    for (int64_t d = 0; d <= top; d++)
        c->best_row[d] = -1;
    int32_t *o_parent = c->o_parent + base;
    uint16_t *o_depth = c->o_depth + base;
    int64_t *o_dur = c->o_dur + base;
    for (int64_t i = 0; i < s; i++) {
        const int32_t d = level[i];
        const int64_t t = o_ts[i], en = o_end[i];
        o_parent[i] = d > 0 && c->best_row[d - 1] >= 0 ? (int32_t)(base + c->best_row[d - 1]) : -1;
        if (c->best_row[d] < 0 || c->best_ts[d] != t || en >= c->best_end[d]) {
            c->best_row[d] = (int32_t)i;
            c->best_ts[d] = t;
            c->best_end[d] = en;
        }
        o_depth[i] = (uint16_t)d;
        o_dur[i] = (int64_t)((uint64_t)en - (uint64_t)t);
    }
    *need = s;
    return 0;
}

/* Bytes of match_threads' scratch for threads of at most e1 events (each array 16-byte aligned). */
static size_t match_scratch_bytes(size_t e1)
{
    return e1 * (4 + 4 + 4) + 2 * e1 * (4 + 4 + 4 + 8) + e1 * sizeof(Pending) + 8 * 16;
}

PyDoc_STRVAR(match_scratch_doc,
"match_scratch(largest) -> int\n\n"
"The bytes of a scratch buffer that match_threads takes for threads of at most largest events.");

static PyObject *match_scratch(PyObject *self, PyObject *args)
{
    long long largest;
    (void)self;
    if (!PyArg_ParseTuple(args, "L", &largest))
        return NULL;
    if (largest < 0 || largest > (1LL << 40)) {
        PyErr_SetString(PyExc_ValueError, "match_scratch: largest out of range");
        return NULL;
    }
    return PyLong_FromSize_t(match_scratch_bytes((size_t)(largest ? largest : 1)));
}

PyDoc_STRVAR(match_threads_doc,
"match_threads(order, ptr, ts_g, kind_g, cend_g, cptr, key, key_end, trace_end, ts_out, dur_out, depth_out,\n"
"              event_out, flags_out, parent_out, n_out[, scratch]) -> (n_out, key, need)\n\n"
"Slices of the threads key..key_end - 1 (their duration events as scatter_threads grouped them), matched as\n"
"core/trace/slices.py's numpy path does, written from row n_out of the outputs (int64 ts, int64 dur, uint16\n"
"depth, int32 event, uint8 flags, int32 parent: rows of the outputs). Stops at the first thread whose slices\n"
"do not fit the outputs: returns where it stopped and the rows that thread needs (need 0 when all were done).\n"
"scratch: a writable buffer of at least match_scratch(largest thread) bytes, reused across calls (else, or\n"
"when smaller, the scratch is allocated for the call).");

static PyObject *match_threads(PyObject *self, PyObject *args)
{
    Py_buffer ob, pb, tgb, kgb, cgb, cpb, o1, o2, o3, o4, o5, o6, sb = {0};
    long long key, key_end, trace_end, n_out;
    PyObject *scratch_obj = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*LLLw*w*w*w*w*w*L|O", &ob, &pb, &tgb, &kgb, &cgb, &cpb, &key, &key_end,
                          &trace_end, &o1, &o2, &o3, &o4, &o5, &o6, &n_out, &scratch_obj))
        return NULL;
    PyObject *result = NULL;
    Ctx c;
    memset(&c, 0, sizeof c);
    int own_scratch = 1; /* (0: the scratch arrays are carved from the caller's buffer, not malloc'd) */
    if (scratch_obj != Py_None && PyObject_GetBuffer(scratch_obj, &sb, PyBUF_WRITABLE) < 0) {
        scratch_obj = Py_None;
        goto done;
    }
    if (check_buffer(&ob, 4, "order") < 0 || check_buffer(&pb, 8, "ptr") < 0 || check_buffer(&tgb, 8, "ts_g") < 0 ||
        check_buffer(&cgb, 8, "cend_g") < 0 || check_buffer(&cpb, 8, "cptr") < 0 || check_buffer(&o1, 8, "ts_out") < 0 ||
        check_buffer(&o2, 8, "dur_out") < 0 || check_buffer(&o3, 2, "depth_out") < 0 ||
        check_buffer(&o4, 4, "event_out") < 0 || check_buffer(&o6, 4, "parent_out") < 0)
        goto done;
    {
        const int64_t n_order = ob.len / 4, n_keys = pb.len / 8 - 1, n_cg = cgb.len / 8;
        const int64_t cap = o1.len / 8;
        if (tgb.len / 8 != n_order || kgb.len != n_order || cpb.len != pb.len || o2.len / 8 != cap ||
            o3.len / 2 != cap || o4.len / 4 != cap || o5.len != cap || o6.len / 4 != cap || cap > INT32_MAX ||
            key < 0 || key_end > n_keys || key > key_end || n_out < 0 || n_out > cap) {
            PyErr_SetString(PyExc_ValueError, "match_threads: bad buffer sizes or ranges");
            goto done;
        }
        const int64_t *ptr = (const int64_t *)pb.buf, *cptr = (const int64_t *)cpb.buf;
        /* the threads' extents checked before anything is read through them */
        int64_t largest = 0;
        for (int64_t k = key; k < key_end; k++) {
            if (ptr[k] < 0 || ptr[k + 1] < ptr[k] || ptr[k + 1] > n_order || cptr[k] < 0 || cptr[k + 1] < cptr[k] ||
                cptr[k + 1] > n_cg) {
                PyErr_SetString(PyExc_ValueError, "match_threads: ptr or cptr out of range");
                goto done;
            }
            if (ptr[k + 1] - ptr[k] > largest)
                largest = ptr[k + 1] - ptr[k];
        }
        c.unclosed_end = trace_end > 0 ? trace_end : 0;
        c.o_ts = (int64_t *)o1.buf;
        c.o_dur = (int64_t *)o2.buf;
        c.o_depth = (uint16_t *)o3.buf;
        c.o_event = (int32_t *)o4.buf;
        c.o_flags = (uint8_t *)o5.buf;
        c.o_parent = (int32_t *)o6.buf;
        c.cap = cap;
        /* a thread of e events makes at most 2e slices (a complete event and its unmatched end) */
        const size_t e1 = (size_t)(largest ? largest : 1), e2 = 2 * e1;
        if (scratch_obj != Py_None && (size_t)sb.len >= match_scratch_bytes(e1)) {
            /* the caller's buffer, reused from one call to the next: scratch of the largest thread's size
               (~70 bytes an event) malloc'd at each call is a fresh mapping each time (past glibc's mmap
               threshold), faulted in again page by page (at 100M events, 15 calls: ~2 s of system time) */
            char *at = (char *)sb.buf;
#define CARVE(PTR, BYTES)                                                                                          \
    do {                                                                                                           \
        at = (char *)(((uintptr_t)at + 15) & ~(uintptr_t)15);                                                      \
        (PTR) = (void *)at;                                                                                        \
        at += (BYTES);                                                                                             \
    } while (0)
            CARVE(c.ev, e1 * 4);
            CARVE(c.cpos, e1 * 4);
            CARVE(c.sort_tmp, e2 * 4);
            CARVE(c.stack, e1 * 4);
            CARVE(c.level, e2 * 4);
            CARVE(c.perm, e2 * 4);
            CARVE(c.col_tmp, e2 * 8);
            CARVE(c.heap, e1 * sizeof(Pending));
#undef CARVE
            own_scratch = 0;
        } else {
            c.ev = malloc(e1 * 4);
            c.cpos = malloc(e1 * 4);
            c.sort_tmp = malloc(e2 * 4);
            c.stack = malloc(e1 * 4);
            c.level = malloc(e2 * 4);
            c.perm = malloc(e2 * 4);
            c.col_tmp = malloc(e2 * 8);
            c.heap = malloc(e1 * sizeof(Pending));
        }
        if (!c.ev || !c.cpos || !c.sort_tmp || !c.stack || !c.level || !c.perm || !c.col_tmp || !c.heap) {
            PyErr_NoMemory();
            goto done;
        }
        int status = 0;
        int64_t need = 0, out = n_out, k = key;
        Py_BEGIN_ALLOW_THREADS
        for (; k < key_end; k++) {
            const int64_t a = ptr[k], e = ptr[k + 1] - a;
            if (!e)
                continue;
            c.row = (const int32_t *)ob.buf + a;
            c.ts = (const int64_t *)tgb.buf + a;
            c.kind = (const uint8_t *)kgb.buf + a;
            c.cend = (const int64_t *)cgb.buf + cptr[k];
            status = match_thread(&c, e, cptr[k + 1] - cptr[k], out, &need);
            if (status)
                break;
            out += need;
            need = 0;
        }
        Py_END_ALLOW_THREADS
        if (status == -1)
            PyErr_SetString(PyExc_ValueError, "match_threads: a kind that is not a duration event, or complete "
                                              "events not those of cptr");
        else if (status == -2)
            PyErr_NoMemory();
        else
            result = Py_BuildValue("LLL", (long long)out, (long long)k, (long long)(status == 1 ? need : 0));
    }
done:
    if (own_scratch) {
        free(c.ev);
        free(c.cpos);
        free(c.sort_tmp);
        free(c.stack);
        free(c.level);
        free(c.perm);
        free(c.col_tmp);
        free(c.heap);
    }
    if (scratch_obj != Py_None)
        PyBuffer_Release(&sb);
    free(c.best_row);
    free(c.best_ts);
    free(c.best_end);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&tgb);
    PyBuffer_Release(&kgb);
    PyBuffer_Release(&cgb);
    PyBuffer_Release(&cpb);
    PyBuffer_Release(&o1);
    PyBuffer_Release(&o2);
    PyBuffer_Release(&o3);
    PyBuffer_Release(&o4);
    PyBuffer_Release(&o5);
    PyBuffer_Release(&o6);
    return result;
}

/* ------------------------------------------------------------------ instant events by thread and time */

PyDoc_STRVAR(group_by_thread_time_doc,
"group_by_thread_time(kind, ts, thread, wide, kind_value, lo, n_keys, event, ts_out, thread_out) -> None\n\n"
"The events of kind kind_value (uint8 kind column) sorted by (thread, time), ties in file order (a counting\n"
"sort by thread value - lo, n_keys values, then each thread's run sorted by time unless it is already): their\n"
"rows into event (int32), times into ts_out (int64), threads into thread_out (int32). The outputs hold\n"
"exactly those events. Raises ValueError for a thread out of range or outputs of the wrong size.");

static PyObject *group_by_thread_time(PyObject *self, PyObject *args)
{
    Py_buffer kb, tsb, tb, eb, ob, hb;
    int wide, kind_value;
    long long lo, n_keys;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*piLLw*w*w*", &kb, &tsb, &tb, &wide, &kind_value, &lo, &n_keys, &eb, &ob, &hb))
        return NULL;
    PyObject *result = NULL;
    int64_t *ptr = NULL;
    int32_t *perm = NULL, *tmp = NULL;
    int64_t *col = NULL;
    if (check_buffer(&tsb, 8, "ts") < 0 || check_buffer(&tb, wide ? 4 : 2, "thread") < 0 ||
        check_buffer(&eb, 4, "event") < 0 || check_buffer(&ob, 8, "ts_out") < 0 || check_buffer(&hb, 4, "thread_out") < 0)
        goto done;
    {
        const int64_t n = kb.len, m = eb.len / 4;
        if (tsb.len / 8 != n || tb.len / (wide ? 4 : 2) != n || n > INT32_MAX || ob.len / 8 != m || hb.len / 4 != m ||
            n_keys < 0 || n_keys > (1LL << 30)) {
            PyErr_SetString(PyExc_ValueError, "group_by_thread_time: bad buffer sizes");
            goto done;
        }
        ptr = calloc((size_t)n_keys + 1, sizeof(int64_t));
        if (!ptr) {
            PyErr_NoMemory();
            goto done;
        }
        const uint8_t *kind = (const uint8_t *)kb.buf;
        const int64_t *ts = (const int64_t *)tsb.buf;
        int32_t *event = (int32_t *)eb.buf, *thread_out = (int32_t *)hb.buf;
        int64_t *ts_out = (int64_t *)ob.buf;
        int bad = 0, nomem = 0;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t i = 0; i < n && !bad; i++) {
            if (kind[i] != kind_value)
                continue;
            const int64_t key = thread_at(tb.buf, wide, i) - lo;
            if (key < 0 || key >= n_keys)
                bad = 1;
            else
                ptr[key + 1]++;
        }
        for (int64_t k = 0; k < n_keys && !bad; k++)
            ptr[k + 1] += ptr[k];
        if (!bad && ptr[n_keys] != m)
            bad = 1;
        for (int64_t i = 0; i < n && !bad; i++) {
            if (kind[i] != kind_value)
                continue;
            const int64_t t = thread_at(tb.buf, wide, i), at = ptr[t - lo]++;
            event[at] = (int32_t)i;
            ts_out[at] = ts[i];
            thread_out[at] = (int32_t)t;
        }
        /* each thread's run (now ptr[k - 1]..ptr[k]) by time, stably, unless it is in order already */
        int64_t largest = 0;
        for (int64_t k = 0; k < n_keys && !bad; k++) {
            const int64_t a = k ? ptr[k - 1] : 0, len = ptr[k] - a;
            int sorted = 1;
            for (int64_t j = a + 1; j < a + len && sorted; j++)
                sorted = ts_out[j - 1] <= ts_out[j];
            if (sorted)
                continue;
            if (len > largest) {
                free(perm);
                free(tmp);
                free(col);
                perm = malloc((size_t)len * 4);
                tmp = malloc((size_t)len * 4);
                col = malloc((size_t)len * 8);
                largest = len;
                if (!perm || !tmp || !col) {
                    nomem = 1;
                    break;
                }
            }
            for (int64_t j = 0; j < len; j++)
                perm[j] = (int32_t)j;
            merge_sort(perm, tmp, len, ts_out + a, NULL);
            for (int64_t j = 0; j < len; j++)
                col[j] = ts_out[a + perm[j]];
            memcpy(ts_out + a, col, (size_t)len * 8);
            int32_t *c32 = (int32_t *)col;
            for (int64_t j = 0; j < len; j++)
                c32[j] = event[a + perm[j]];
            memcpy(event + a, c32, (size_t)len * 4);
            /* (a run's threads are all one value: nothing to permute) */
        }
        Py_END_ALLOW_THREADS
        if (bad)
            PyErr_SetString(PyExc_ValueError, "group_by_thread_time: a thread out of range or outputs of the wrong size");
        else if (nomem)
            PyErr_NoMemory();
        else
            result = Py_NewRef(Py_None);
    }
done:
    free(ptr);
    free(perm);
    free(tmp);
    free(col);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&tsb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&hb);
    return result;
}

/* ------------------------------------------------------------------ the slices' lanes */

PyDoc_STRVAR(lane_rows_doc,
"lane_rows(ev_thread, width, event, depth, rows, starts) -> n_lanes\n\n"
"The slice rows by (thread, depth), each lane's rows in row order (a stable counting sort by depth of each\n"
"thread's rows: the slices are by thread), into rows (int32), and where each lane starts in them into\n"
"starts (int64, as many as the slices at most). A slice's thread is ev_thread[event[row]]: its key, of width\n"
"1 (uint8: a one-byte code column's codes, whose values ascend with the code), 2 (int16) or 4 (int32) bytes;\n"
"depth is uint16. Raises ValueError for an event out of range or threads not ascending.");

static PyObject *lane_rows(PyObject *self, PyObject *args)
{
    Py_buffer tb, eb, db, rb, sb;
    int width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*w*", &tb, &width, &eb, &db, &rb, &sb))
        return NULL;
    PyObject *result = NULL;
    int64_t *count = NULL;
    if (width != 1 && width != 2 && width != 4) {
        PyErr_SetString(PyExc_ValueError, "lane_rows: the thread width is 1, 2 or 4 bytes");
        goto done;
    }
    if (check_buffer(&tb, width, "ev_thread") < 0 || check_buffer(&eb, 4, "event") < 0 ||
        check_buffer(&db, 2, "depth") < 0 || check_buffer(&rb, 4, "rows") < 0 || check_buffer(&sb, 8, "starts") < 0)
        goto done;
    {
        const int64_t n = eb.len / 4, n_ev = tb.len / width;
        if (db.len / 2 != n || rb.len / 4 != n || sb.len / 8 < n || n > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "lane_rows: bad buffer sizes");
            goto done;
        }
        count = malloc((65536 + 1) * sizeof(int64_t));
        if (!count) {
            PyErr_NoMemory();
            goto done;
        }
        const int32_t *event = (const int32_t *)eb.buf;
        const uint16_t *depth = (const uint16_t *)db.buf;
        int32_t *rows = (int32_t *)rb.buf;
        int64_t *starts = (int64_t *)sb.buf;
        int64_t n_lanes = 0;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        int64_t a = 0, prev_thread = INT64_MIN;
        while (a < n && !bad) {
            if (event[a] < 0 || event[a] >= n_ev) {
                bad = 1;
                break;
            }
            const int64_t t = key_at(tb.buf, width, event[a]);
            if (t < prev_thread) {
                bad = 1;
                break;
            }
            prev_thread = t;
            int64_t b = a + 1, top = depth[a];
            while (b < n) {
                if (event[b] < 0 || event[b] >= n_ev) {
                    bad = 1;
                    break;
                }
                if (key_at(tb.buf, width, event[b]) != t)
                    break;
                if (depth[b] > top)
                    top = depth[b];
                b++;
            }
            if (bad)
                break;
            memset(count, 0, (size_t)(top + 1) * sizeof(int64_t));
            for (int64_t i = a; i < b; i++)
                count[depth[i]]++;
            int64_t at = a;
            for (int64_t d = 0; d <= top; d++) {
                const int64_t c = count[d];
                count[d] = at;
                if (c)
                    starts[n_lanes++] = at;
                at += c;
            }
            for (int64_t i = a; i < b; i++)
                rows[count[depth[i]]++] = (int32_t)i;
            a = b;
        }
        Py_END_ALLOW_THREADS
        if (bad)
            PyErr_SetString(PyExc_ValueError, "lane_rows: an event out of range or threads not ascending");
        else
            result = PyLong_FromLongLong((long long)n_lanes);
    }
done:
    free(count);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&db);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&sb);
    return result;
}

/* ------------------------------------------------------------------ the LOD pyramid's bucket summaries */

#define MAX_LEVELS 64
#define LONG_BUCKETS 64

typedef struct {
    const void *order;
    int order_wide;
    const int64_t *ts, *dur_a, *dur_b; /* dur = dur_a[row] - dur_b[row] when dur_b, else dur_a[row] */
    const int32_t *lane;
    int64_t n_rows, n_lanes;
    uint64_t origin;
    int n_levels;
    int64_t shift[MAX_LEVELS];
} PyrIn;

static inline int64_t order_at(const PyrIn *p, int64_t i)
{
    return p->order_wide ? ((const int64_t *)p->order)[i] : (int64_t)((const int32_t *)p->order)[i];
}

/* Per level, one entry per run of equal (lane, bucket) among the slices shorter than LONG_BUCKETS buckets,
   in order: its number of slices, and its first longest slice. State per level (STATE int64s): entries and
   long slices so far, the largest count, the next lane of lane_ptr to set, and for filling the offsets of
   the level's entries in bucket/row, of its counts in count16 or count32 (wide: 1), of its long slices in
   longpos. Counting (o NULL) updates the first three; filling writes the outputs, each write bounds-checked.
   Returns -1 for a row or lane out of range, lanes not ascending or an output overrun. */
enum { S_ENTRIES, S_LONGS, S_MAXCOUNT, S_NEXT_LANE, S_ENTRY_OFF, S_COUNT_OFF, S_WIDE, S_LONG_OFF, STATE };

typedef struct {
    int32_t *bucket, *row, *count32;
    uint16_t *count16;
    int64_t *longpos, *lane_ptr; /* lane_ptr: n_levels * (n_lanes + 1) */
    int64_t n_entries, n16, n32, n_long;
} PyrOut;

/* Each level's counters and output offsets, in locals while a pass runs (no store through `state` a slice):
   loaded from state, written back at the end. */
typedef struct {
    int64_t thresh[MAX_LEVELS], n_ent[MAX_LEVELS], n_long[MAX_LEVELS], max_count[MAX_LEVELS];
    int64_t next_lane[MAX_LEVELS], e_off[MAX_LEVELS], c_off[MAX_LEVELS], l_off[MAX_LEVELS], c_cap[MAX_LEVELS];
    int wide[MAX_LEVELS], never_long[MAX_LEVELS];
} Levels;

static void levels_load(Levels *v, const PyrIn *p, const int64_t *state, const PyrOut *o)
{
    for (int l = 0; l < p->n_levels; l++) {
        const int64_t *st = state + STATE * l;
        v->never_long[l] = p->shift[l] >= 57; /* LONG_BUCKETS << shift passes int64: no duration reaches it */
        v->thresh[l] = v->never_long[l] ? INT64_MAX : ((int64_t)LONG_BUCKETS << p->shift[l]);
        v->n_ent[l] = st[S_ENTRIES];
        v->n_long[l] = st[S_LONGS];
        v->max_count[l] = st[S_MAXCOUNT];
        v->next_lane[l] = st[S_NEXT_LANE];
        v->e_off[l] = st[S_ENTRY_OFF];
        v->c_off[l] = st[S_COUNT_OFF];
        v->l_off[l] = st[S_LONG_OFF];
        v->wide[l] = st[S_WIDE] != 0;
        v->c_cap[l] = o ? (v->wide[l] ? o->n32 : o->n16) : 0;
    }
}

static void levels_store(const Levels *v, const PyrIn *p, int64_t *state)
{
    for (int l = 0; l < p->n_levels; l++) {
        int64_t *st = state + STATE * l;
        st[S_ENTRIES] = v->n_ent[l];
        st[S_LONGS] = v->n_long[l];
        st[S_MAXCOUNT] = v->max_count[l];
        st[S_NEXT_LANE] = v->next_lane[l];
    }
}

/* A long slice at level l: its position recorded (filling); 0, or -1 past the outputs. */
static inline int record_long(Levels *v, int l, int64_t i, const PyrOut *o)
{
    if (o) {
        const int64_t at = v->l_off[l] + v->n_long[l];
        if (at < 0 || at >= o->n_long)
            return -1;
        o->longpos[at] = i;
    }
    v->n_long[l]++;
    return 0;
}

/* A new entry of level l for a slice of lane `lane` in bucket bk: its bucket and lane_ptr written (filling);
   its entry and count positions in *e / *ce; 0, or -1 past the outputs. */
static inline int open_entry(Levels *v, int l, int64_t lane, int64_t bk, const PyrIn *p, const PyrOut *o, int64_t *e,
                             int64_t *ce)
{
    *e = v->e_off[l] + v->n_ent[l];
    *ce = v->c_off[l] + v->n_ent[l];
    if (o) {
        if (*e < 0 || *e >= o->n_entries || *ce < 0 || *ce >= v->c_cap[l] || v->next_lane[l] < 0)
            return -1;
        o->bucket[*e] = (int32_t)bk;
        int64_t *ptr = o->lane_ptr + l * (p->n_lanes + 1);
        while (v->next_lane[l] <= lane)
            ptr[v->next_lane[l]++] = v->n_ent[l];
    }
    v->n_ent[l]++;
    return 0;
}

static int pyramid_pass(const PyrIn *p, int64_t a, int64_t b, int64_t *state, const PyrOut *o)
{
    Levels v;
    levels_load(&v, p, state, o);
    int64_t cur_lane[MAX_LEVELS], cur_b[MAX_LEVELS], cur_long[MAX_LEVELS], cur_count[MAX_LEVELS];
    int64_t cur_e[MAX_LEVELS], cur_c[MAX_LEVELS];
    const int n_levels = p->n_levels;
    for (int l = 0; l < n_levels; l++) {
        cur_lane[l] = -1;
        cur_b[l] = cur_long[l] = cur_count[l] = 0;
        cur_e[l] = cur_c[l] = -1;
    }
    int64_t prev_lane = -1;
    for (int64_t i = a; i < b; i++) {
        const int64_t row = order_at(p, i);
        if (row < 0 || row >= p->n_rows)
            return -1;
        const int64_t lane = p->lane[row];
        if (lane < 0 || lane >= p->n_lanes || lane < prev_lane)
            return -1;
        prev_lane = lane;
        const int64_t d = p->dur_b ? (int64_t)((uint64_t)p->dur_a[row] - (uint64_t)p->dur_b[row]) : p->dur_a[row];
        const uint64_t rel = (uint64_t)p->ts[row] - p->origin;
        for (int l = 0; l < n_levels; l++) {
            if (!v.never_long[l] && d >= v.thresh[l]) {
                if (record_long(&v, l, i, o) < 0)
                    return -1;
                continue;
            }
            const int64_t bk = (int64_t)(rel >> p->shift[l]);
            if (lane == cur_lane[l] && bk == cur_b[l]) {
                const int64_t c = ++cur_count[l];
                if (o) {
                    if (d > cur_long[l])
                        o->row[cur_e[l]] = (int32_t)row;
                    if (v.wide[l])
                        o->count32[cur_c[l]] = (int32_t)c;
                    else
                        o->count16[cur_c[l]] = (uint16_t)c;
                }
                if (d > cur_long[l])
                    cur_long[l] = d;
                continue;
            }
            if (cur_count[l] > v.max_count[l])
                v.max_count[l] = cur_count[l];
            cur_lane[l] = lane;
            cur_b[l] = bk;
            cur_long[l] = d;
            cur_count[l] = 1;
            if (open_entry(&v, l, lane, bk, p, o, &cur_e[l], &cur_c[l]) < 0)
                return -1;
            if (o) {
                o->row[cur_e[l]] = (int32_t)row;
                if (v.wide[l])
                    o->count32[cur_c[l]] = 1;
                else
                    o->count16[cur_c[l]] = 1;
            }
        }
    }
    for (int l = 0; l < n_levels; l++)
        if (cur_count[l] > v.max_count[l])
            v.max_count[l] = cur_count[l];
    levels_store(&v, p, state);
    return 0;
}

/* pyramid_pass's results with less work a slice, where each lane's starts are ascending (then a bucket of
   level l + 1 is a run of whole buckets of level l, since the shifts ascend): each level keeps one open
   entry, and a slice is added to the finest level where it is short only (long slices are recorded at the
   levels where they are long); a level's entry, when it closes, is merged into the next level's open one
   (its parent: that bucket holds it). A slice that joins its finest short level's open entry costs one
   level; one that starts new buckets closes the open entries below the level whose entry it joins (no
   later slice can join them: starts ascend) and opens the new ones. Counts add up, and the longest slice
   is the first of the longest by position, as pyramid_pass finds it. Returns 1, having written nothing to
   state, when a lane's starts are not ascending (the caller then runs pyramid_pass). */
static int pyramid_pass_nested(const PyrIn *p, int64_t a, int64_t b, int64_t *state, const PyrOut *o)
{
    const int L = p->n_levels;
    Levels v;
    levels_load(&v, p, state, o);
    /* the open entry of each level (the open levels are always m..L-1 for some m) */
    int open[MAX_LEVELS];
    int64_t o_lane[MAX_LEVELS], o_b[MAX_LEVELS], o_count[MAX_LEVELS], o_long[MAX_LEVELS], o_pick[MAX_LEVELS];
    int64_t o_e[MAX_LEVELS], o_c[MAX_LEVELS];
    int32_t o_row[MAX_LEVELS];
    for (int l = 0; l < L; l++) {
        open[l] = 0;
        o_lane[l] = o_b[l] = o_count[l] = o_long[l] = o_pick[l] = o_e[l] = o_c[l] = 0;
        o_row[l] = 0;
    }
#define CLOSE(l)                                                                                                   \
    do {                                                                                                           \
        const int l_ = (l);                                                                                        \
        if (o_count[l_] > v.max_count[l_])                                                                         \
            v.max_count[l_] = o_count[l_];                                                                         \
        if (o) {                                                                                                   \
            o->row[o_e[l_]] = o_row[l_];                                                                           \
            if (v.wide[l_])                                                                                        \
                o->count32[o_c[l_]] = (int32_t)o_count[l_];                                                        \
            else                                                                                                   \
                o->count16[o_c[l_]] = (uint16_t)o_count[l_];                                                       \
        }                                                                                                          \
        if (l_ + 1 < L && o_count[l_]) {                                                                           \
            const int q_ = l_ + 1;                                                                                 \
            if (!o_count[q_] || o_long[l_] > o_long[q_] || (o_long[l_] == o_long[q_] && o_pick[l_] < o_pick[q_])) { \
                o_long[q_] = o_long[l_];                                                                           \
                o_pick[q_] = o_pick[l_];                                                                           \
                o_row[q_] = o_row[l_];                                                                             \
            }                                                                                                      \
            o_count[q_] += o_count[l_];                                                                            \
        }                                                                                                          \
        open[l_] = 0;                                                                                              \
    } while (0)
    int64_t prev_lane = -1;
    uint64_t prev_rel = 0;
    for (int64_t i = a; i < b; i++) {
        const int64_t row = order_at(p, i);
        if (row < 0 || row >= p->n_rows)
            return -1;
        const int64_t lane = p->lane[row];
        if (lane < 0 || lane >= p->n_lanes || lane < prev_lane)
            return -1;
        const int64_t d = p->dur_b ? (int64_t)((uint64_t)p->dur_a[row] - (uint64_t)p->dur_b[row]) : p->dur_a[row];
        const uint64_t rel = (uint64_t)p->ts[row] - p->origin;
        if (lane == prev_lane && rel < prev_rel)
            return 1; /* not nested: pyramid_pass */
        prev_lane = lane;
        prev_rel = rel;
        int j = 0;
        for (; j < L && !v.never_long[j] && d >= v.thresh[j]; j++)
            if (record_long(&v, j, i, o) < 0)
                return -1;
        if (j == L)
            continue;
        int k = j;
        while (k < L && !(open[k] && o_lane[k] == lane && o_b[k] == (int64_t)(rel >> p->shift[k])))
            k++;
        if (k == j) { /* joins its finest short level's entry (it comes after every slice there: ties keep theirs) */
            if (!o_count[j] || d > o_long[j]) {
                o_long[j] = d;
                o_pick[j] = i;
                o_row[j] = (int32_t)row;
            }
            o_count[j]++;
            continue;
        }
        for (int l = 0; l < k; l++)
            if (open[l])
                CLOSE(l);
        for (int l = j; l < k; l++) {
            const int64_t bk = (int64_t)(rel >> p->shift[l]);
            if (open_entry(&v, l, lane, bk, p, o, &o_e[l], &o_c[l]) < 0)
                return -1;
            open[l] = 1;
            o_lane[l] = lane;
            o_b[l] = bk;
            o_count[l] = 0;
        }
        o_count[j] = 1;
        o_long[j] = d;
        o_pick[j] = i;
        o_row[j] = (int32_t)row;
    }
    for (int l = 0; l < L; l++)
        if (open[l])
            CLOSE(l);
#undef CLOSE
    levels_store(&v, p, state);
    return 0;
}

PyDoc_STRVAR(pyramid_doc,
"pyramid(order, order_wide, ts, dur_a, dur_b, lane, n_lanes, origin, shifts, a, b, state[, bucket, row,\n"
"        count16, count32, longpos, lane_ptr]) -> None\n\n"
"The bucket summaries of core/trace/lod.py at every level (shifts: int64), over the slices order[a:b] (rows,\n"
"int32 or int64 when order_wide; by lane, then start; each lane whole). dur is dur_a[row] - dur_b[row], or\n"
"dur_a[row] when dur_b is None. state: int64, 8 per level (see pyramid_pass). Without the outputs it counts;\n"
"with them it fills each level's bucket/row (int32) and counts (uint16 count16 or int32 count32) from its\n"
"offsets, longpos (int64 positions in order of the long slices) and lane_ptr (n_levels rows of n_lanes + 1:\n"
"a lane's first entry, from the level's start; the caller sets those past the last lane). Raises ValueError\n"
"for a row or lane out of range, lanes not ascending or outputs too small.");

static PyObject *pyramid(PyObject *self, PyObject *args)
{
    Py_buffer ob, tsb, dab, db = {0}, lb, sb, stb;
    Py_buffer bb = {0}, rb = {0}, c16 = {0}, c32 = {0}, lpb = {0}, ptb = {0};
    PyObject *dur_b_obj;
    int order_wide;
    long long n_lanes, a, b;
    unsigned long long origin;
    (void)self;
    const int fill = PyTuple_GET_SIZE(args) > 12;
    if (!PyArg_ParseTuple(args, "y*py*y*Oy*LKy*LLw*|w*w*w*w*w*w*", &ob, &order_wide, &tsb, &dab, &dur_b_obj, &lb,
                          &n_lanes, &origin, &sb, &a, &b, &stb, &bb, &rb, &c16, &c32, &lpb, &ptb))
        return NULL;
    PyObject *result = NULL;
    int have_db = 0;
    if (dur_b_obj != Py_None) {
        if (PyObject_GetBuffer(dur_b_obj, &db, PyBUF_SIMPLE) < 0)
            goto done;
        have_db = 1;
    }
    if (check_buffer(&ob, order_wide ? 8 : 4, "order") < 0 || check_buffer(&tsb, 8, "ts") < 0 ||
        check_buffer(&dab, 8, "dur_a") < 0 || (have_db && check_buffer(&db, 8, "dur_b") < 0) ||
        check_buffer(&lb, 4, "lane") < 0 || check_buffer(&sb, 8, "shifts") < 0 || check_buffer(&stb, 8, "state") < 0)
        goto done;
    PyrIn p;
    p.order = ob.buf;
    p.order_wide = order_wide;
    p.ts = (const int64_t *)tsb.buf;
    p.dur_a = (const int64_t *)dab.buf;
    p.dur_b = have_db ? (const int64_t *)db.buf : NULL;
    p.lane = (const int32_t *)lb.buf;
    p.n_rows = tsb.len / 8;
    p.n_lanes = n_lanes;
    p.origin = (uint64_t)origin;
    p.n_levels = (int)(sb.len / 8);
    const int64_t n_order = ob.len / (order_wide ? 8 : 4);
    if (dab.len / 8 != p.n_rows || (have_db && db.len / 8 != p.n_rows) || lb.len / 4 != p.n_rows ||
        p.n_rows > INT32_MAX || p.n_levels > MAX_LEVELS || stb.len / 8 != STATE * p.n_levels || a < 0 || b < a ||
        b > n_order || n_lanes < 0) {
        PyErr_SetString(PyExc_ValueError, "pyramid: bad buffer sizes or ranges");
        goto done;
    }
    for (int l = 0; l < p.n_levels; l++) {
        p.shift[l] = ((const int64_t *)sb.buf)[l];
        if (p.shift[l] < 0 || p.shift[l] > 63) {
            PyErr_SetString(PyExc_ValueError, "pyramid: shift out of range");
            goto done;
        }
    }
    int64_t *state = (int64_t *)stb.buf;
    PyrOut o, *out = NULL;
    if (fill) {
        if (PyTuple_GET_SIZE(args) != 18 || check_buffer(&bb, 4, "bucket") < 0 || check_buffer(&rb, 4, "row") < 0 ||
            check_buffer(&c16, 2, "count16") < 0 || check_buffer(&c32, 4, "count32") < 0 ||
            check_buffer(&lpb, 8, "longpos") < 0 || check_buffer(&ptb, 8, "lane_ptr") < 0)
            goto done;
        if (rb.len != bb.len || ptb.len / 8 != p.n_levels * (n_lanes + 1)) {
            PyErr_SetString(PyExc_ValueError, "pyramid: bad output sizes");
            goto done;
        }
        for (int l = 0; l < p.n_levels; l++) {
            const int64_t next = state[STATE * l + S_NEXT_LANE];
            if (next < 0 || next > n_lanes + 1) {
                PyErr_SetString(PyExc_ValueError, "pyramid: bad state");
                goto done;
            }
        }
        o.bucket = (int32_t *)bb.buf;
        o.row = (int32_t *)rb.buf;
        o.count16 = (uint16_t *)c16.buf;
        o.count32 = (int32_t *)c32.buf;
        o.longpos = (int64_t *)lpb.buf;
        o.lane_ptr = (int64_t *)ptb.buf;
        o.n_entries = bb.len / 4;
        o.n16 = c16.len / 2;
        o.n32 = c32.len / 4;
        o.n_long = lpb.len / 8;
        out = &o;
    }
    {
        int status, ascending = 1;
        for (int l = 1; l < p.n_levels; l++)
            ascending &= p.shift[l] > p.shift[l - 1];
        Py_BEGIN_ALLOW_THREADS
        status = ascending ? pyramid_pass_nested(&p, a, b, state, out) : 1;
        if (status == 1)
            status = pyramid_pass(&p, a, b, state, out);
        Py_END_ALLOW_THREADS
        if (status < 0)
            PyErr_SetString(PyExc_ValueError,
                            "pyramid: a row or lane out of range, lanes not ascending, or outputs too small");
        else
            result = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&ob);
    PyBuffer_Release(&tsb);
    PyBuffer_Release(&dab);
    if (have_db)
        PyBuffer_Release(&db);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&stb);
    if (fill) {
        PyBuffer_Release(&bb);
        PyBuffer_Release(&rb);
        PyBuffer_Release(&c16);
        PyBuffer_Release(&c32);
        PyBuffer_Release(&lpb);
        PyBuffer_Release(&ptb);
    }
    return result;
}

/* ------------------------------------------------------------------ the overview's density */

#define DENSITY_BLOCK 64

/* The bin of time t: int64((t - start) * scale) clipped to 0..bins - 1, t - start wrapping as numpy's int64
   does; -1 for a float out of int64's range (NaN too), which numpy's astype on x86 reads as the most negative
   int64: bin 0 (the caller's). */
static inline int64_t density_bin(int64_t t, int64_t start, double scale, int64_t bins)
{
    const double x = (double)(int64_t)((uint64_t)t - (uint64_t)start) * scale;
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
        return -1;
    const int64_t bin = (int64_t)x;
    return bin < 0 ? 0 : (bin > bins - 1 ? bins - 1 : bin);
}

PyDoc_STRVAR(density_doc,
"density(ts, start, scale, counts) -> None\n\n"
"counts[bin] += 1 per int64 timestamp, bin = int64((ts - start) * scale) clipped to the counts (ts - start\n"
"wrapping as numpy's int64 does, the float conversion of a value out of int64's range reading as the most\n"
"negative int64, as numpy's astype does on x86): core/trace/model.py's _density, one pass.");

static PyObject *density(PyObject *self, PyObject *args)
{
    Py_buffer tsb, cb;
    long long start;
    double scale;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*Ldw*", &tsb, &start, &scale, &cb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&tsb, 8, "ts") < 0 || check_buffer(&cb, 8, "counts") < 0)
        goto done;
    {
        const int64_t *ts = (const int64_t *)tsb.buf;
        int64_t *counts = (int64_t *)cb.buf;
        const int64_t n = tsb.len / 8, bins = cb.len / 8;
        if (bins < 1) {
            PyErr_SetString(PyExc_ValueError, "density: no bins");
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        /* events come mostly in time order, and the bin is monotonic in the time where ts - start does not
           wrap and the float stays in int64's range: a block of ascending times whose first and last share
           a bin is all in it (counted at once) */
        int64_t i = 0;
        while (i < n) {
            const int64_t e = i + DENSITY_BLOCK;
            if (e <= n) {
                int sorted = 1;
                for (int64_t j = i + 1; j < e; j++)
                    sorted &= ts[j - 1] <= ts[j];
                int64_t d0, d1;
                if (sorted && !__builtin_sub_overflow(ts[i], start, &d0) &&
                    !__builtin_sub_overflow(ts[e - 1], start, &d1) && d0 >= 0) {
                    const int64_t b0 = density_bin(ts[i], start, scale, bins);
                    if (b0 >= 0 && b0 == density_bin(ts[e - 1], start, scale, bins)) {
                        counts[b0] += DENSITY_BLOCK;
                        i = e;
                        continue;
                    }
                }
            }
            const int64_t stop = e < n ? e : n;
            for (; i < stop; i++) {
                const int64_t b = density_bin(ts[i], start, scale, bins);
                counts[b < 0 ? 0 : b]++;
            }
        }
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&tsb);
    PyBuffer_Release(&cb);
    return result;
}


/* ------------------------------------------------------------------ a timeline picture's rectangles */

/* NaN-aware order of doubles as numpy sorts them (NaN after every number, NaNs equal). */
static inline int cmp_double(double a, double b)
{
    if (a != a)
        return b != b ? 0 : 1;
    if (b != b)
        return -1;
    return a < b ? -1 : (a > b ? 1 : 0);
}

/* The larger of two doubles as np.maximum gives it (a NaN in either is the result). */
static inline double max_nan(double a, double b)
{
    if (a != a || b != b)
        return a != a ? a : b;
    return a > b ? a : b;
}

/* A stable merge sort of idx[0:n] (tmp: n scratch) by colour, or by (y, x) when colour is NULL. */
static void box_sort(int64_t *idx, int64_t *tmp, int64_t n, const int64_t *colour, const double *y, const double *x)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            const int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int c;
                if (colour)
                    c = colour[idx[j]] < colour[idx[i]] ? -1 : 0;
                else {
                    c = cmp_double(y[idx[j]], y[idx[i]]);
                    if (c == 0)
                        c = cmp_double(x[idx[j]], x[idx[i]]);
                }
                tmp[k++] = c < 0 ? idx[j++] : idx[i++];  /* equal: the left (earlier) one first */
            }
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
    }
}

/* fmin(fmax(v, -1e6), 1e7) as rect_buffer's np.fmin/np.fmax give it (NaN: -1e6), without libm's calls */
static inline double clip_rect(double v)
{
    return v != v ? -1e6 : (v < -1e6 ? -1e6 : (v > 1e7 ? 1e7 : v));
}

static inline void put_rect(double *out, int64_t m, double x, double y, double w, double h)
{
    out[4 * m] = clip_rect(x);
    out[4 * m + 1] = clip_rect(y);
    out[4 * m + 2] = clip_rect(w);
    out[4 * m + 3] = clip_rect(h);
}

/* One colour's boxes g[0:n] (indices into x, y, w) as rectangles from out[m]: touching ones on a row
   merged as app/timeline/lane_item.py merge_touching does (from 32 boxes), clipped as rect_buffer does.
   Returns the new m. */
static int64_t merge_group(int64_t *g, int64_t *tmp, int64_t n, const double *x, const double *y, const double *w,
                           double h, double *out, int64_t m)
{
    if (n < MERGE_FROM) {
        for (int64_t i = 0; i < n; i++)
            put_rect(out, m++, x[g[i]], y[g[i]], w[g[i]], h);
        return m;
    }
    int sorted = 1;
    for (int64_t i = 1; i < n && sorted; i++) {
        const double ya = y[g[i - 1]], yb = y[g[i]];
        if (!(yb >= ya) || (yb == ya && !(x[g[i]] >= x[g[i - 1]])))
            sorted = 0;
    }
    if (!sorted)
        box_sort(g, tmp, n, NULL, y, x);
    /* one pass: the running right edge as the numpy path computes it (np.maximum.accumulate over the rows
       shifted 4e7 apart, shifted back; on one row the shift is 0.0, which changes no comparison), kept as
       it goes; a run starts at a new row or past the running edge of the boxes before it on its row */
    double row = 0.0, acc = x[g[0]] + w[g[0]] + 0.0, run_max = x[g[0]] + w[g[0]];
    double edge = acc - 0.0;  /* the running right edge up to the box before i */
    int64_t s = 0;
    for (int64_t i = 1; i <= n; i++) {
        int first = 1;
        double right = 0.0, next_edge = edge;
        if (i < n) {
            right = x[g[i]] + w[g[i]];
            if (y[g[i]] == y[g[i - 1]])
                first = x[g[i]] > edge + 0.5;
            else
                row += 1.0;
            const double off = row * 4e7;
            acc = max_nan(acc, right + off);
            next_edge = acc - off;
        }
        if (first) {
            const double left = x[g[s]];
            put_rect(out, m++, left, y[g[s]], run_max - left, h);
            if (i < n) {
                s = i;
                run_max = right;
            }
        } else {
            run_max = max_nan(run_max, right);
        }
        edge = next_edge;
    }
    return m;
}

PyDoc_STRVAR(box_rects_doc,
"box_rects(left, top, width, colour, height, rects, groups) -> (m, g)\n\n"
"A box track picture's fills (app/timeline/box_track.py BoxPicture.build): the boxes (float64 left, top,\n"
"width; int64 colour) grouped by colour (ascending, each group in the boxes' order), each group's touching\n"
"boxes on a row merged as lane_item.merge_touching does, every rectangle clipped as rect_buffer does; written\n"
"to rects (float64, 4 a box: x, y, w, h) and groups (int64, 2 a box: colour, end of its rectangles).\n"
"Returns the number of rectangles and of groups.");

static PyObject *box_rects(PyObject *self, PyObject *args)
{
    Py_buffer xb, yb, wb, cb, rb, gb;
    double h;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*dw*w*", &xb, &yb, &wb, &cb, &h, &rb, &gb))
        return NULL;
    PyObject *result = NULL;
    int64_t *idx = NULL, *tmp = NULL;
    if (check_buffer(&xb, 8, "left") < 0 || check_buffer(&yb, 8, "top") < 0 || check_buffer(&wb, 8, "width") < 0 ||
        check_buffer(&cb, 8, "colour") < 0 || check_buffer(&rb, 8, "rects") < 0 || check_buffer(&gb, 8, "groups") < 0)
        goto done;
    const int64_t n = xb.len / 8;
    if (yb.len / 8 != n || wb.len / 8 != n || cb.len / 8 != n || rb.len / 32 < n || gb.len / 16 < n) {
        PyErr_SetString(PyExc_ValueError, "box_rects: bad buffer sizes");
        goto done;
    }
    idx = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    tmp = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!idx || !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t m = 0, g = 0;
    {
        const double *x = xb.buf, *y = yb.buf, *w = wb.buf;
        const int64_t *colour = cb.buf;
        double *out = rb.buf;
        int64_t *groups = gb.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t lo = n ? colour[0] : 0, hi = lo;
        for (int64_t i = 0; i < n; i++) {
            idx[i] = i;
            lo = colour[i] < lo ? colour[i] : lo;
            hi = colour[i] > hi ? colour[i] : hi;
        }
        /* colours are palette indices (a few dozen values): a stable counting sort, one pass; the merge sort
           (log n passes of indirect compares: ~0.5 ms a track of tens of thousands of boxes) for any other
           range. The same order either way. */
        if (hi > lo && (uint64_t)hi - (uint64_t)lo < COUNTING_SORT_SPAN) {
            int64_t start[COUNTING_SORT_SPAN + 1] = {0};
            for (int64_t i = 0; i < n; i++)
                start[colour[i] - lo + 1]++;
            for (int64_t c = 1; c <= hi - lo; c++)
                start[c] += start[c - 1];
            for (int64_t i = 0; i < n; i++)
                idx[start[colour[i] - lo]++] = i;
        } else if (hi > lo) {
            box_sort(idx, tmp, n, colour, NULL, NULL);
        }
        for (int64_t a = 0; a < n;) {
            int64_t b = a + 1;
            while (b < n && colour[idx[b]] == colour[idx[a]])
                b++;
            m = merge_group(idx + a, tmp, b - a, x, y, w, h, out, m);
            groups[2 * g] = colour[idx[a]];
            groups[2 * g + 1] = m;
            g++;
            a = b;
        }
        Py_END_ALLOW_THREADS
    }
    result = Py_BuildValue("LL", (long long)m, (long long)g);
done:
    free(idx);
    free(tmp);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&yb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&gb);
    return result;
}


PyDoc_STRVAR(box_geometry_doc,
"box_geometry(start, end, row, count, colour, origin, offset, scale, right_edge, row_height, merged_in_grey,\n"
"             left, top, width, labelled) -> n_labelled\n\n"
"A box track picture's pixel geometry (app/timeline/box_track.py BoxPicture.build, one pass instead of ~17\n"
"numpy calls a track at every zoom step): for each box (int64 start, end ns; int64 row in the track; int64\n"
"count), x = ((double)(uint64)(t - origin) - offset) * scale of its start and its end, each clipped to\n"
"[-10, right_edge]; left = x of the start, width = max(x of the end - left, 1), top = row * row_height; the\n"
"colour (int64, in place) -1 where count > 1 when merged_in_grey; labelled (int64) the boxes wider than 24\n"
"pixels that stand for one slice, ascending. The same doubles as the numpy path's.");

static PyObject *box_geometry(PyObject *self, PyObject *args)
{
    Py_buffer sb, eb, rb, cb, kb, lb, tb, wb, ob;
    unsigned long long origin;
    double offset, scale, right_edge, row_height;
    int grey;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*Kddddpw*w*w*w*", &sb, &eb, &rb, &cb, &kb, &origin, &offset, &scale,
                          &right_edge, &row_height, &grey, &lb, &tb, &wb, &ob))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&sb, 8, "start") < 0 || check_buffer(&eb, 8, "end") < 0 || check_buffer(&rb, 8, "row") < 0 ||
        check_buffer(&cb, 8, "count") < 0 || check_buffer(&kb, 8, "colour") < 0 || check_buffer(&lb, 8, "left") < 0 ||
        check_buffer(&tb, 8, "top") < 0 || check_buffer(&wb, 8, "width") < 0 || check_buffer(&ob, 8, "labelled") < 0)
        goto done;
    const int64_t n = sb.len / 8;
    if (eb.len / 8 != n || rb.len / 8 != n || cb.len / 8 != n || kb.len / 8 != n || lb.len / 8 != n ||
        tb.len / 8 != n || wb.len / 8 != n || ob.len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "box_geometry: bad buffer sizes");
        goto done;
    }
    int64_t m = 0;
    {
        const int64_t *start = sb.buf, *end = eb.buf, *row = rb.buf, *count = cb.buf;
        int64_t *colour = kb.buf, *labelled = ob.buf;
        double *left = lb.buf, *top = tb.buf, *width = wb.buf;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t i = 0; i < n; i++) {
            const double a = ((double)((uint64_t)start[i] - (uint64_t)origin) - offset) * scale;
            const double b = ((double)((uint64_t)end[i] - (uint64_t)origin) - offset) * scale;
            /* np.clip: np.minimum(np.maximum(v, -10), right_edge) */
            const double l = a < -10.0 ? -10.0 : (a > right_edge ? right_edge : a);
            const double r = b < -10.0 ? -10.0 : (b > right_edge ? right_edge : b);
            const double w = max_nan(r - l, 1.0);
            left[i] = l;
            width[i] = w;
            top[i] = (double)row[i] * row_height;
            if (grey && count[i] > 1)
                colour[i] = -1;
            if (w > 24.0 && count[i] == 1)
                labelled[m++] = i;
        }
        Py_END_ALLOW_THREADS
    }
    result = PyLong_FromLongLong(m);
done:
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&ob);
    return result;
}


/* ------------------------------------------------------------------ a frame's query of the pyramid */

/* entries a query reads ahead of the one it computes (prefetching their slices' columns) */
#define QUERY_AHEAD 12

/* First position in keys[lo:hi] (ascending int32) whose key is > v (right) or >= v (left). */
static inline int64_t search_i32(const int32_t *keys, int64_t lo, int64_t hi, int32_t v, int right)
{
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (right ? keys[mid] <= v : keys[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First position in v[lo:hi] (ascending int64) whose value is > k (right) or >= k (left). */
static inline int64_t search_i64(const int64_t *v, int64_t lo, int64_t hi, int64_t k, int right)
{
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (right ? v[mid] <= k : v[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many entries a query of lanes ptr[0..n_ptr) reads (those with a bucket in [lo_key, hi_key]), after
   checking lane_ptr against the level's entries; -1 with ValueError set when it is out of range. */
static int64_t query_entries(const char *what, const int64_t *ptr, int64_t n_ptr, int64_t n_entries,
                             const int32_t *bucket, int32_t lo_key, int32_t hi_key)
{
    for (int64_t k = 0; k < n_ptr; k++) {
        if (ptr[k] < 0 || ptr[k] > n_entries || (k && ptr[k] < ptr[k - 1])) {
            PyErr_Format(PyExc_ValueError, "%s: lane_ptr out of range", what);
            return -1;
        }
    }
    int64_t read = 0;
    for (int64_t k = 0; k + 1 < n_ptr; k++) {
        const int64_t a = search_i32(bucket, ptr[k], ptr[k + 1], lo_key, 0);
        const int64_t b = search_i32(bucket, ptr[k], ptr[k + 1], hi_key, 1);
        read += b > a ? b - a : 0;
    }
    return read;
}

PyDoc_STRVAR(pyramid_query_doc,
"pyramid_query(bucket, row, count, count_wide, lane_ptr, ts, dur_a, dur_b, origin, shift, lo_key, hi_key,\n"
"              t0, t1, out) -> n\n\n"
"The boxes of a pyramid level's lanes (core/trace/lod.py SlicePyramid.query_lanes, its bucket entries; not\n"
"the long slices): lane_ptr (int64, n_lanes + 1) delimits each lane's entries of the level's int32 bucket\n"
"and row columns and its counts (uint16, int32 when count_wide); each lane's entries with a bucket in\n"
"[lo_key, hi_key] are read: a lone slice or one at least a bucket (2**shift ns) long as itself (its start\n"
"ts[row], its duration dur_a[row] (- dur_b[row] when dur_b is not None)), else a box over its bucket (from\n"
"origin + bucket << shift) reaching its longest slice's end; those overlapping [t0, t1) are written to out\n"
"(int64, 5 rows: slice row, lane from 0, count, start, end), lane by lane. Without out (None), returns how\n"
"many entries are read (out's row length must be at least that); with it, how many boxes were written.\n"
"A row or lane_ptr out of range raises ValueError.");

static PyObject *pyramid_query(PyObject *self, PyObject *args)
{
    Py_buffer bb, rb, cb, lpb, tsb, dab, db = {0}, ob = {0};
    int count_wide, shift;
    PyObject *dur_b_obj, *out_obj;
    unsigned long long origin;
    int lo_key, hi_key;
    long long t0, t1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*py*y*y*OKiiiLLO", &bb, &rb, &cb, &count_wide, &lpb, &tsb, &dab, &dur_b_obj,
                          &origin, &shift, &lo_key, &hi_key, &t0, &t1, &out_obj))
        return NULL;
    PyObject *result = NULL;
    int have_db = 0, have_out = 0;
    if (dur_b_obj != Py_None) {
        if (PyObject_GetBuffer(dur_b_obj, &db, PyBUF_SIMPLE) < 0)
            goto done;
        have_db = 1;
    }
    if (out_obj != Py_None) {
        if (PyObject_GetBuffer(out_obj, &ob, PyBUF_WRITABLE) < 0)
            goto done;
        have_out = 1;
    }
    if (check_buffer(&bb, 4, "bucket") < 0 || check_buffer(&rb, 4, "row") < 0 ||
        check_buffer(&cb, count_wide ? 4 : 2, "count") < 0 || check_buffer(&lpb, 8, "lane_ptr") < 0 ||
        check_buffer(&tsb, 8, "ts") < 0 || check_buffer(&dab, 8, "dur_a") < 0 ||
        (have_db && check_buffer(&db, 8, "dur_b") < 0) || (have_out && check_buffer(&ob, 8, "out") < 0))
        goto done;
    const int64_t n_entries = bb.len / 4, n_rows = tsb.len / 8, n_ptr = lpb.len / 8;
    if (rb.len / 4 != n_entries || cb.len / (count_wide ? 4 : 2) != n_entries || dab.len / 8 != n_rows ||
        (have_db && db.len / 8 != n_rows) || n_ptr < 1 || shift < 0 || shift > 62) {
        PyErr_SetString(PyExc_ValueError, "pyramid_query: bad buffer sizes");
        goto done;
    }
    const int64_t *ptr = lpb.buf;
    const int32_t *bucket = bb.buf, *row = rb.buf;
    const int64_t read = query_entries("pyramid_query", ptr, n_ptr, n_entries, bucket, (int32_t)lo_key, (int32_t)hi_key);
    if (read < 0)
        goto done;
    if (!have_out) {
        result = PyLong_FromLongLong(read);
        goto done;
    }
    const int64_t cap = ob.len / 40;
    if (cap < read) {
        PyErr_SetString(PyExc_ValueError, "pyramid_query: out too small");
        goto done;
    }
    int64_t *o_row = ob.buf, *o_lane = o_row + cap, *o_count = o_lane + cap, *o_start = o_count + cap,
            *o_end = o_start + cap;
    const int64_t *ts = tsb.buf, *da = dab.buf, *dbv = have_db ? db.buf : NULL;
    const uint16_t *c16 = cb.buf;
    const int32_t *c32 = cb.buf;
    const int64_t size = (int64_t)1 << shift;
    int64_t m = 0, bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t k = 0; k + 1 < n_ptr && !bad; k++) {
        const int64_t a = search_i32(bucket, ptr[k], ptr[k + 1], (int32_t)lo_key, 0);
        const int64_t b = search_i32(bucket, ptr[k], ptr[k + 1], (int32_t)hi_key, 1);
        for (int64_t e = a; e < b; e++) {
            /* the slices an entry names are far apart in big columns (a cache miss or two each, most of
               the query's time on a large trace): fetched a few entries ahead, their misses overlap */
            if (e + QUERY_AHEAD < b) {
                const int64_t ra = row[e + QUERY_AHEAD];
                if (ra >= 0 && ra < n_rows) {
                    __builtin_prefetch(ts + ra);
                    __builtin_prefetch(da + ra);
                    if (dbv)
                        __builtin_prefetch(dbv + ra);
                }
            }
            const int64_t r = row[e];
            if (r < 0 || r >= n_rows) {
                bad = 1;
                break;
            }
            const int64_t cnt = count_wide ? (int64_t)c32[e] : (int64_t)c16[e];
            const int64_t s_ts = ts[r];
            const int64_t s_dur = (int64_t)((uint64_t)da[r] - (dbv ? (uint64_t)dbv[r] : 0));
            const int64_t s_end = (int64_t)((uint64_t)s_ts + (uint64_t)s_dur);
            int64_t start, end, c;
            if (cnt == 1 || s_dur >= size) {
                start = s_ts, end = s_end, c = 1;
            } else {
                start = (int64_t)((uint64_t)origin + ((uint64_t)(int64_t)bucket[e] << shift));
                const int64_t b_end = (int64_t)((uint64_t)start + (uint64_t)size);
                end = b_end > s_end ? b_end : s_end;
                c = cnt;
            }
            if (end > t0 && start < t1) {
                o_row[m] = r, o_lane[m] = k, o_count[m] = c, o_start[m] = start, o_end[m] = end;
                m++;
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "pyramid_query: row out of range");
        goto done;
    }
    result = PyLong_FromLongLong(m);
done:
    PyBuffer_Release(&bb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&lpb);
    PyBuffer_Release(&tsb);
    PyBuffer_Release(&dab);
    if (have_db)
        PyBuffer_Release(&db);
    if (have_out)
        PyBuffer_Release(&ob);
    return result;
}


PyDoc_STRVAR(pyramid_query_boxes_doc,
"pyramid_query_boxes(bucket, row, box, box_count, lane_ptr, n_rows, lo_key, hi_key, t0, t1, out) -> n\n\n"
"pyramid_query's boxes from a level's stored boxes (core/trace/lod.py Level.box: a coarse level's box of each\n"
"entry, int64 start and end pairs, and box_count, int32: 1 for a box that is its slice), in the order of\n"
"its entries: one contiguous read an entry instead of its slice's start and duration, far apart in big\n"
"columns (a cache miss each: at 100M events most of a zoomed-out frame's query). The same arguments and out\n"
"otherwise; a row outside [0, n_rows) or lane_ptr out of range raises ValueError.");

static PyObject *pyramid_query_boxes(PyObject *self, PyObject *args)
{
    Py_buffer bb, rb, xb, cb, lpb, ob = {0};
    long long n_rows, t0, t1;
    int lo_key, hi_key;
    PyObject *out_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*LiiLLO", &bb, &rb, &xb, &cb, &lpb, &n_rows, &lo_key, &hi_key, &t0, &t1,
                          &out_obj))
        return NULL;
    PyObject *result = NULL;
    int have_out = 0;
    if (out_obj != Py_None) {
        if (PyObject_GetBuffer(out_obj, &ob, PyBUF_WRITABLE) < 0)
            goto done;
        have_out = 1;
    }
    if (check_buffer(&bb, 4, "bucket") < 0 || check_buffer(&rb, 4, "row") < 0 || check_buffer(&xb, 16, "box") < 0 ||
        check_buffer(&cb, 4, "box_count") < 0 || check_buffer(&lpb, 8, "lane_ptr") < 0 ||
        (have_out && check_buffer(&ob, 8, "out") < 0))
        goto done;
    const int64_t n_entries = bb.len / 4, n_ptr = lpb.len / 8;
    if (rb.len / 4 != n_entries || xb.len / 16 != n_entries || cb.len / 4 != n_entries || n_ptr < 1) {
        PyErr_SetString(PyExc_ValueError, "pyramid_query_boxes: bad buffer sizes");
        goto done;
    }
    const int64_t *ptr = lpb.buf;
    const int32_t *bucket = bb.buf, *row = rb.buf, *bcount = cb.buf;
    const int64_t *box = xb.buf;
    const int64_t read = query_entries("pyramid_query_boxes", ptr, n_ptr, n_entries, bucket, (int32_t)lo_key, (int32_t)hi_key);
    if (read < 0)
        goto done;
    if (!have_out) {
        result = PyLong_FromLongLong(read);
        goto done;
    }
    const int64_t cap = ob.len / 40;
    if (cap < read) {
        PyErr_SetString(PyExc_ValueError, "pyramid_query_boxes: out too small");
        goto done;
    }
    int64_t *o_row = ob.buf, *o_lane = o_row + cap, *o_count = o_lane + cap, *o_start = o_count + cap,
            *o_end = o_start + cap;
    int64_t m = 0, bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t k = 0; k + 1 < n_ptr && !bad; k++) {
        const int64_t a = search_i32(bucket, ptr[k], ptr[k + 1], (int32_t)lo_key, 0);
        const int64_t b = search_i32(bucket, ptr[k], ptr[k + 1], (int32_t)hi_key, 1);
        for (int64_t e = a; e < b; e++) {
            const int64_t r = row[e];
            if (r < 0 || r >= n_rows) {
                bad = 1;
                break;
            }
            const int64_t start = box[2 * e], end = box[2 * e + 1];
            if (end > t0 && start < t1) {
                o_row[m] = r, o_lane[m] = k, o_count[m] = bcount[e], o_start[m] = start, o_end[m] = end;
                m++;
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "pyramid_query_boxes: row out of range");
        goto done;
    }
    result = PyLong_FromLongLong(m);
done:
    PyBuffer_Release(&bb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&lpb);
    if (have_out)
        PyBuffer_Release(&ob);
    return result;
}

/* ------------------------------------------------------------------ a lane's slices merged per pixel */

/* Whether double v converts to int64 exactly as numpy's astype does for in-range values. */
static inline int in_int64(double v)
{
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}

PyDoc_STRVAR(pixel_buckets_doc,
"pixel_buckets(rows, rows_wide, ts, dur_a, dur_b, t0, bucket, depth, out, m) -> m\n\n"
"One depth's slices merged per pixel past the pyramid's finest level (core/trace/lod.py merged_per_pixel):\n"
"rows (int32, int64 when rows_wide) are the depth's slices in the window, by start; a slice's duration is\n"
"dur_a[row] (- dur_b[row] when dur_b is not None). The slices shorter than bucket ns (a double) grouped by\n"
"floor((start - t0) / bucket) as runs of equal keys, each run one box: its first longest slice, its count,\n"
"from t0 + key * bucket to that + bucket (float, truncated); then the others as themselves (count 1). Written\n"
"to out (int64, 5 rows: slice row, depth, count, start, end) from column m; returns the new m. A row out of\n"
"range, a key or time past int64 or too small an out raise ValueError (the numpy path then decides).");

static PyObject *pixel_buckets(PyObject *self, PyObject *args)
{
    Py_buffer rb, tsb, dab, db = {0}, ob;
    int rows_wide, depth;
    PyObject *dur_b_obj;
    long long t0_arg, m0;
    double bucket;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*py*y*OLdiw*L", &rb, &rows_wide, &tsb, &dab, &dur_b_obj, &t0_arg, &bucket, &depth,
                          &ob, &m0))
        return NULL;
    PyObject *result = NULL;
    int have_db = 0;
    int64_t *wide_at = NULL;
    if (dur_b_obj != Py_None) {
        if (PyObject_GetBuffer(dur_b_obj, &db, PyBUF_SIMPLE) < 0)
            goto done;
        have_db = 1;
    }
    if (check_buffer(&rb, rows_wide ? 8 : 4, "rows") < 0 || check_buffer(&tsb, 8, "ts") < 0 ||
        check_buffer(&dab, 8, "dur_a") < 0 || (have_db && check_buffer(&db, 8, "dur_b") < 0) ||
        check_buffer(&ob, 8, "out") < 0)
        goto done;
    const int64_t n = rb.len / (rows_wide ? 8 : 4), n_rows = tsb.len / 8, cap = ob.len / 40;
    if (dab.len / 8 != n_rows || (have_db && db.len / 8 != n_rows) || m0 < 0 || m0 > cap || cap - m0 < n) {
        PyErr_SetString(PyExc_ValueError, "pixel_buckets: bad buffer sizes");
        goto done;
    }
    wide_at = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!wide_at) {
        PyErr_NoMemory();
        goto done;
    }
    const int32_t *r32 = rb.buf;
    const int64_t *r64 = rb.buf, *ts = tsb.buf, *da = dab.buf, *dbv = have_db ? db.buf : NULL;
    int64_t *o_row = ob.buf, *o_depth = o_row + cap, *o_count = o_depth + cap, *o_start = o_count + cap,
            *o_end = o_start + cap;
    const int64_t t0 = t0_arg;
    int64_t m = m0, n_wide = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t g_key = 0, g_count = 0, g_longest = 0, g_row = 0;
    for (int64_t i = 0; i <= n; i++) {
        int64_t r = 0, dur = 0, key = 0;
        if (i < n) {
            if (i + QUERY_AHEAD < n) {  /* (a depth's rows are spread over the thread's: fetched ahead) */
                const int64_t ra = rows_wide ? r64[i + QUERY_AHEAD] : (int64_t)r32[i + QUERY_AHEAD];
                if (ra >= 0 && ra < n_rows) {
                    __builtin_prefetch(ts + ra);
                    __builtin_prefetch(da + ra);
                    if (dbv)
                        __builtin_prefetch(dbv + ra);
                }
            }
            r = rows_wide ? r64[i] : (int64_t)r32[i];
            if (r < 0 || r >= n_rows) {
                bad = 1;
                break;
            }
            dur = (int64_t)((uint64_t)da[r] - (dbv ? (uint64_t)dbv[r] : 0));
            if ((double)dur >= bucket) {  /* at least a pixel: drawn as itself, after the merged ones */
                wide_at[n_wide++] = i;
                continue;
            }
            /* as numpy: floor((start - t0) / bucket) of the int64 difference (wrapping) as a double */
            const double kf = floor((double)(int64_t)((uint64_t)ts[r] - (uint64_t)t0) / bucket);
            if (!in_int64(kf)) {
                bad = 2;
                break;
            }
            key = (int64_t)kf;
            if (g_count && key == g_key) {
                g_count++;
                if (dur > g_longest)  /* (the first of the longest) */
                    g_longest = dur, g_row = r;
                continue;
            }
        }
        if (g_count) {  /* the run before this slice (or the last run) as one box */
            const double start = (double)t0 + (double)g_key * bucket, end = start + bucket;
            if (!in_int64(start) || !in_int64(end)) {
                bad = 2;
                break;
            }
            o_row[m] = g_row, o_depth[m] = depth, o_count[m] = g_count;
            o_start[m] = (int64_t)start, o_end[m] = (int64_t)end;
            m++;
        }
        if (i < n)
            g_key = key, g_count = 1, g_longest = dur, g_row = r;
    }
    for (int64_t k = 0; k < n_wide && !bad; k++) {
        const int64_t i = wide_at[k], r = rows_wide ? r64[i] : (int64_t)r32[i];
        const int64_t dur = (int64_t)((uint64_t)da[r] - (dbv ? (uint64_t)dbv[r] : 0));
        o_row[m] = r, o_depth[m] = depth, o_count[m] = 1, o_start[m] = ts[r];
        o_end[m] = (int64_t)((uint64_t)ts[r] + (uint64_t)dur);
        m++;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "pixel_buckets: row out of range" : "pixel_buckets: past int64");
        goto done;
    }
    result = PyLong_FromLongLong(m);
done:
    free(wide_at);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&tsb);
    PyBuffer_Release(&dab);
    if (have_db)
        PyBuffer_Release(&db);
    PyBuffer_Release(&ob);
    return result;
}

/* ------------------------------------------------------------------ searches of ascending keys */

PyDoc_STRVAR(search_ascending_doc,
"search_ascending(values, keys, out) -> None\n\n"
"np.searchsorted(values, keys, side='left') of int64 values (ascending) into out (int64, one a key), for\n"
"keys that mostly ascend (a frame's pixel edges): each search gallops from the previous key's position\n"
"moved on by the step before it (up or down), a few reads near it instead of a binary search of the whole\n"
"column (~20 cache misses a key on a column of millions); a key below the previous one searches from the\n"
"start. The same result for any keys.");

/* keys (pixel edges) ahead whose values a search asks the memory for (search_ascending, range_min_max_blocks) */
#define PREFETCH_KEYS 8

/* search_ascending's loop: out[j] = np.searchsorted(v[:n], key[j], 'left') for the m keys (see its doc) */
static void search_ascending_run(const int64_t *v, int64_t n, const int64_t *key, int64_t m, int64_t *out)
{
    int64_t at = 0;  /* the previous key's position: every value before it is < that key */
    int64_t stride = 0;  /* how far the previous key's position was from the one before it */
    for (int64_t j = 0; j < m; j++) {
        const int64_t k = key[j];
        if (j && k < key[j - 1])
            at = 0, stride = 0;
        int64_t lo = at, hi = at;  /* the answer is in [lo, hi], and v[hi] >= k unless hi == n */
        if (stride > 0 && at + stride < n) {
            /* evenly spaced keys (a frame's pixel edges) over evenly spread values land about one
               stride further: gallop from there, up or down, a few reads near the answer instead of
               ~2 log2(stride) far apart from the previous position (a cache miss each, big columns) */
            const int64_t g = at + stride;
            int64_t step = 1;
            if (v[g] < k) {
                lo = g + 1, hi = g + 1;
                while (hi < n && v[hi] < k) {
                    lo = hi + 1;
                    hi = g + 1 + step;
                    step *= 2;
                }
                if (hi > n)
                    hi = n;
            } else {
                hi = g;
                int64_t l = g - 1;
                while (l > at && v[l] >= k) {
                    hi = l;
                    step *= 2;
                    l = g - step;
                }
                lo = l > at ? l + 1 : at;
            }
        } else {
            /* gallop: the first step past at whose value is >= k bounds the search */
            int64_t step = 1;
            while (hi < n && v[hi] < k) {
                lo = hi + 1;
                hi += step;
                step *= 2;
            }
            if (hi > n)
                hi = n;
        }
        const int64_t before = at;
        out[j] = at = search_i64(v, lo, hi, k, 0);
        stride = at - before;
        /* where the key PREFETCH_KEYS on will land if the spacing holds: its cache line requested now,
           so that the misses of several keys overlap (one after the other, a zoomed-out frame's edges
           in a column of millions waited on ~2 misses a key) */
        if (stride > 0) {
            const int64_t ahead = at + PREFETCH_KEYS * stride;
            if (ahead < n)
                __builtin_prefetch(&v[ahead]);
        }
    }
}

/* rows ahead of a sampled search (search_sampled_run) whose group of values is asked of the memory */
#define PREFETCH_GROUPS 16

/* out[j] = np.searchsorted(v[:n], key[j], 'left') for the m keys (ascending or not), through every S-th
   value of v (sample[i] = v[i * S], ceil(n / S) of them): each key is placed among the samples first (a
   galloping search of an array S times smaller, whose reads move forward a little at a time as the keys
   do: the hardware's prefetch streams it), then among the S values of its group, which are asked of the
   memory PREFETCH_GROUPS keys ahead (their addresses known from the first pass). A frame's pixel edges in a
   column of hundreds of thousands of values each landed on a cold cache line (and a TLB miss) of v that
   the galloping search's guess ahead missed by a few lines: ~240 ns a key with cold caches. */
static void search_sampled_run(const int64_t *v, int64_t n, const int64_t *sample, int64_t S, const int64_t *key,
                               int64_t m, int64_t *out)
{
    const int64_t ns = (n + S - 1) / S;
    search_ascending_run(sample, ns, key, m, out); /* out[j]: the first sample >= key[j] */
    for (int64_t j = 0; j < m && j < PREFETCH_GROUPS; j++)
        if (out[j] > 0)
            __builtin_prefetch(&v[(out[j] - 1) * S + 1]), __builtin_prefetch(&v[out[j] * S - 1 < n ? out[j] * S - 1 : n - 1]);
    for (int64_t j = 0; j < m; j++) {
        if (j + PREFETCH_GROUPS < m) {
            const int64_t g = out[j + PREFETCH_GROUPS];
            if (g > 0) {
                const int64_t first = (g - 1) * S + 1, last = g * S - 1 < n ? g * S - 1 : n - 1;
                __builtin_prefetch(&v[first]);
                __builtin_prefetch(&v[last]);
            }
        }
        const int64_t g = out[j], k = key[j];
        if (g == 0) { /* key <= v[0] */
            out[j] = 0;
            continue;
        }
        /* v[(g - 1) * S] < k, and v[g * S] >= k (or g * S >= n): the answer is in ((g - 1) * S, min(g * S, n)] */
        out[j] = search_i64(v, (g - 1) * S + 1, g * S < n ? g * S : n, k, 0);
    }
}

PyDoc_STRVAR(search_sampled_doc,
"search_sampled(values, sample, step, keys, out) -> None\n\n"
"search_ascending through a sample of the values: np.searchsorted(values, keys, side='left') of int64\n"
"values (ascending) into out (int64, one a key), where sample is values[::step] (int64, ceil(len(values) /\n"
"step) of them): each key placed among the samples, then among its step values (fewer cache misses in a\n"
"big column with cold caches; the same result for any keys). A step < 1 or a sample of another length\n"
"raise ValueError.");

static PyObject *search_sampled(PyObject *self, PyObject *args)
{
    Py_buffer vb, sb, kb, ob;
    Py_ssize_t step;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*ny*w*", &vb, &sb, &step, &kb, &ob))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&vb, 8, "values") < 0 || check_buffer(&sb, 8, "sample") < 0 || check_buffer(&kb, 8, "keys") < 0 ||
        check_buffer(&ob, 8, "out") < 0)
        goto done;
    if (step < 1 || sb.len / 8 != (vb.len / 8 + step - 1) / step || ob.len != kb.len) {
        PyErr_SetString(PyExc_ValueError, "search_sampled: bad step, sample or out length");
        goto done;
    }
    {
        const int64_t *v = vb.buf, *sample = sb.buf, *key = kb.buf;
        int64_t *out = ob.buf;
        const int64_t n = vb.len / 8, m = kb.len / 8;
        Py_BEGIN_ALLOW_THREADS
        search_sampled_run(v, n, sample, step, key, m, out);
        Py_END_ALLOW_THREADS
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&ob);
    return result;
}

static PyObject *search_ascending(PyObject *self, PyObject *args)
{
    Py_buffer vb, kb, ob;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*", &vb, &kb, &ob))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&vb, 8, "values") < 0 || check_buffer(&kb, 8, "keys") < 0 || check_buffer(&ob, 8, "out") < 0)
        goto done;
    if (ob.len != kb.len) {
        PyErr_SetString(PyExc_ValueError, "search_ascending: keys and out lengths differ");
        goto done;
    }
    {
        const int64_t *v = vb.buf, *key = kb.buf;
        int64_t *out = ob.buf;
        const int64_t n = vb.len / 8, m = kb.len / 8;
        Py_BEGIN_ALLOW_THREADS
        search_ascending_run(v, n, key, m, out);
        Py_END_ALLOW_THREADS
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&ob);
    return result;
}


/* ------------------------------------------------------------------ search matches' outlines */

/* The first pixel at or after device coordinate v as Qt's raster engine fills a stroke's outline
   (app/timeline/lane_item.py stroke_pixels: snapped to 1/64 pixel, rounding half to even as np.round). */
static inline double stroke_pixel(double v)
{
    double r = nearbyint(v * 64.0);
    r /= 64.0;
    r -= 0.5;
    return floor(r) + 1.0;
}

PyDoc_STRVAR(match_outlines_doc,
"match_outlines(x, y, w, h, tx, ty, solid, rings) -> (n_solid, n_rings)\n\n"
"app/timeline/lane_item.py outline_rects' rectangles for boxes (float64 x, y, w; height h) drawn translated\n"
"by (tx, ty): the pixels of a 2-pixel stroke of each box's outline, as a solid rectangle where the ring has\n"
"no inside (touching ones on a row merged when all are the same height) into solid (float64, 4 a box), and\n"
"as four rectangles otherwise into rings (float64, 16 a box: every top, then every bottom, left, right).\n"
"Returns the number of solid rectangles and of ring boxes (4 rectangles each).");

static PyObject *match_outlines(PyObject *self, PyObject *args)
{
    Py_buffer xb, yb, wb, sb, rb;
    double h, tx, ty;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*dddw*w*", &xb, &yb, &wb, &h, &tx, &ty, &sb, &rb))
        return NULL;
    PyObject *result = NULL;
    double *sx = NULL, *sy = NULL, *sw = NULL, *sh = NULL;
    int64_t *g = NULL, *tmp = NULL;
    if (check_buffer(&xb, 8, "x") < 0 || check_buffer(&yb, 8, "y") < 0 || check_buffer(&wb, 8, "w") < 0 ||
        check_buffer(&sb, 8, "solid") < 0 || check_buffer(&rb, 8, "rings") < 0)
        goto done;
    const int64_t n = xb.len / 8;
    if (yb.len / 8 != n || wb.len / 8 != n || sb.len / 32 < n || rb.len / 128 < n) {
        PyErr_SetString(PyExc_ValueError, "match_outlines: bad buffer sizes");
        goto done;
    }
    const size_t cells = (size_t)(n ? n : 1);
    sx = malloc(cells * sizeof(double)), sy = malloc(cells * sizeof(double)), sw = malloc(cells * sizeof(double));
    sh = malloc(cells * sizeof(double));
    g = malloc(cells * sizeof(int64_t)), tmp = malloc(cells * sizeof(int64_t));
    if (!sx || !sy || !sw || !sh || !g || !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t ns = 0, nr = 0;
    {
        const double *x = xb.buf, *y = yb.buf, *w = wb.buf;
        double *solid = sb.buf, *rings = rb.buf;
        Py_BEGIN_ALLOW_THREADS
        /* ring boxes first counted: their four rectangles go to four runs of nr */
        for (int64_t i = 0; i < n; i++) {
            const double xd = x[i] + tx, yd = y[i] + ty;
            const double e3 = xd + w[i], e7 = yd + h;
            const double x1 = stroke_pixel(xd + 1.0), x2 = stroke_pixel(e3 - 1.0);
            const double y1 = stroke_pixel(yd + 1.0), y2 = stroke_pixel(e7 - 1.0);
            nr += !((x2 <= x1) || (y2 <= y1));
        }
        int64_t k = 0;
        int same_height = 1;
        for (int64_t i = 0; i < n; i++) {
            const double xd = x[i] + tx, yd = y[i] + ty;
            const double e3 = xd + w[i], e7 = yd + h;
            const double x0 = stroke_pixel(xd - 1.0), x1 = stroke_pixel(xd + 1.0);
            const double x2 = stroke_pixel(e3 - 1.0), x3 = stroke_pixel(e3 + 1.0);
            const double y0 = stroke_pixel(yd - 1.0), y1 = stroke_pixel(yd + 1.0);
            const double y2 = stroke_pixel(e7 - 1.0), y3 = stroke_pixel(e7 + 1.0);
            if ((x2 <= x1) || (y2 <= y1)) {
                const double a = x0 < -1e6 ? -1e6 : (x0 > 1e7 ? 1e7 : x0);  /* np.clip */
                const double b = x3 < -1e6 ? -1e6 : (x3 > 1e7 ? 1e7 : x3);
                sx[ns] = a, sy[ns] = y0, sw[ns] = b - a, sh[ns] = y3 - y0;
                same_height &= sh[ns] == sh[0];
                ns++;
            } else {
                put_rect(rings, k, x0, y0, x3 - x0, y1 - y0);
                put_rect(rings, nr + k, x0, y2, x3 - x0, y3 - y2);
                put_rect(rings, 2 * nr + k, x0, y1, x1 - x0, y2 - y1);
                put_rect(rings, 3 * nr + k, x2, y1, x3 - x2, y2 - y1);
                k++;
            }
        }
        if (ns > 1 && same_height) {
            for (int64_t i = 0; i < ns; i++)
                g[i] = i;
            ns = merge_group(g, tmp, ns, sx, sy, sw, sh[0], solid, 0);
        } else {
            for (int64_t i = 0; i < ns; i++)
                put_rect(solid, i, sx[i], sy[i], sw[i], sh[i]);
        }
        Py_END_ALLOW_THREADS
    }
    result = Py_BuildValue("LL", (long long)ns, (long long)nr);
done:
    free(sx), free(sy), free(sw), free(sh), free(g), free(tmp);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&yb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&rb);
    return result;
}


/* ------------------------------------------------------------------ a counter frame's per-pixel min and max */

static inline void scan_min_max(const double *v, int64_t p, int64_t q, double *lo, double *hi, int *nan)
{
    double l = *lo, h = *hi;
    int bad = *nan;
#ifdef __SSE2__
    /* minpd/maxpd over four independent lanes: a compare and select a value compiled to a branch each (a
       counter's values are noise to the branch predictor: ~2.3 ns a sample, a zoomed-out counter's pixels
       read ~50 samples each); minpd(x, l) is exactly x < l ? x : l. A NaN is flagged apart (the caller's
       result is NaN then); the same min and max, 0.0 and -0.0 aside, which compare equal */
    if (q - p >= 8) {
        __m128d l0 = _mm_set1_pd(l), l1 = l0, h0 = _mm_set1_pd(h), h1 = h0, u = _mm_setzero_pd();
        int64_t i = p;
        for (; i + 4 <= q; i += 4) {
            const __m128d x0 = _mm_loadu_pd(v + i), x1 = _mm_loadu_pd(v + i + 2);
            l0 = _mm_min_pd(x0, l0), l1 = _mm_min_pd(x1, l1);
            h0 = _mm_max_pd(x0, h0), h1 = _mm_max_pd(x1, h1);
            u = _mm_or_pd(u, _mm_or_pd(_mm_cmpunord_pd(x0, x0), _mm_cmpunord_pd(x1, x1)));
        }
        double ls[4], hs[4];
        _mm_storeu_pd(ls, l0), _mm_storeu_pd(ls + 2, l1), _mm_storeu_pd(hs, h0), _mm_storeu_pd(hs + 2, h1);
        for (int j = 0; j < 4; j++) {
            l = ls[j] < l ? ls[j] : l;
            h = hs[j] > h ? hs[j] : h;
        }
        bad |= _mm_movemask_pd(u) != 0;
        p = i;
    }
#endif
    for (int64_t i = p; i < q; i++) {
        const double x = v[i];
        l = x < l ? x : l;
        h = x > h ? x : h;
        bad |= x != x;
    }
    *lo = l, *hi = h, *nan = bad;
}

PyDoc_STRVAR(block_bounds_doc,
"block_bounds(v, block, bmin, bmax) -> None\n\n"
"The min and max of each block of `block` values of v (float64; the last block may be shorter) into bmin,\n"
"bmax (float64, ceil(len(v) / block) each), NaN both where the block holds a NaN: np.min / np.max of\n"
"v.reshape(-1, block) along its rows in one pass (numpy's reductions along rows of 8 took ~15 ns a value,\n"
"a counter's fine bounds, core/trace/counters.py CounterSeries.fine_bounds). A block < 1 or outputs of\n"
"another length raise ValueError.");

static PyObject *block_bounds(PyObject *self, PyObject *args)
{
    Py_buffer vb, nb, xb;
    Py_ssize_t block;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nw*w*", &vb, &block, &nb, &xb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&vb, 8, "v") < 0 || check_buffer(&nb, 8, "bmin") < 0 || check_buffer(&xb, 8, "bmax") < 0)
        goto done;
    const int64_t n = vb.len / 8;
    if (block < 1 || nb.len / 8 != (n + block - 1) / block || xb.len != nb.len) {
        PyErr_SetString(PyExc_ValueError, "block_bounds: bad block or buffer sizes");
        goto done;
    }
    {
        const double *v = vb.buf;
        double *bmin = nb.buf, *bmax = xb.buf;
        const int64_t nb_ = nb.len / 8;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t j = 0; j < nb_; j++) {
            const int64_t p = j * block, q = p + block < n ? p + block : n;
            double lo = INFINITY, hi = -INFINITY;
            int nan = 0;
            scan_min_max(v, p, q, &lo, &hi, &nan);
            bmin[j] = nan ? NAN : lo, bmax[j] = nan ? NAN : hi;
        }
        Py_END_ALLOW_THREADS
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&xb);
    return result;
}

PyDoc_STRVAR(range_min_max_doc,
"range_min_max(v, first, stop, vmin, vmax) -> None\n\n"
"The min and max of v[first[k]:stop[k]] (v float64; first, stop int64, one a bucket) into vmin, vmax\n"
"(float64, one a bucket), as np.minimum / np.maximum reduce them (a NaN in the range gives NaN): a counter's\n"
"pixel buckets (core/trace/counters.py CounterSet.lod) in one pass over the window's samples, both at once,\n"
"instead of two numpy reduceats. A bucket with stop <= first gets NaN (its caller drops it). A first or stop\n"
"outside [0, len(v)] raises ValueError (nothing is read outside v).");

static PyObject *range_min_max(PyObject *self, PyObject *args)
{
    Py_buffer vb, fb, sb, nb, xb;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*", &vb, &fb, &sb, &nb, &xb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&vb, 8, "v") < 0 || check_buffer(&fb, 8, "first") < 0 || check_buffer(&sb, 8, "stop") < 0 ||
        check_buffer(&nb, 8, "vmin") < 0 || check_buffer(&xb, 8, "vmax") < 0)
        goto done;
    const int64_t n = vb.len / 8, n_px = fb.len / 8;
    if (sb.len / 8 != n_px || nb.len / 8 != n_px || xb.len / 8 != n_px) {
        PyErr_SetString(PyExc_ValueError, "range_min_max: bad buffer sizes");
        goto done;
    }
    const double *v = vb.buf;
    const int64_t *first = fb.buf, *stop = sb.buf;
    double *vmin = nb.buf, *vmax = xb.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t k = 0; k < n_px; k++) {
        const int64_t a = first[k], b = stop[k];
        if (a < 0 || a > n || b < 0 || b > n) {
            bad = 1;
            break;
        }
        if (b <= a) {
            vmin[k] = vmax[k] = NAN;
            continue;
        }
        double lo = INFINITY, hi = -INFINITY;
        int nan = 0;
        scan_min_max(v, a, b, &lo, &hi, &nan);
        vmin[k] = nan ? NAN : lo, vmax[k] = nan ? NAN : hi;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "range_min_max: first or stop out of range");
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&xb);
    return result;
}

/* lo, hi widened to v[p:q] (a NaN compares false: noted in nan instead) */

/* The min and max of v[a:b] (b > a) into *out_min, *out_max (NaN both when one is NaN), whole blocks of B
   values read from their bounds bmin, bmax when B > 0 (range_min_max_blocks), every value when B is 0. */
/* runs shorter than this many blocks are scanned value by value, not through the block bounds: with the
   vector scan, a run of a few blocks reads its values faster than its bounds and the ends they leave open (a
   zoomed-out counter's strip with cold caches, ~50 samples a pixel: 0.57 -> 0.41 ms; ~180: 1.27 -> 1.18 ms) */
#ifndef BOUNDS_FROM_BLOCKS
#define BOUNDS_FROM_BLOCKS 8
#endif

/* Runs at least this many fine blocks long read their fine blocks' bounds (fine_min_max), shorter ones every value */
#ifndef FINE_FROM_BLOCKS
#define FINE_FROM_BLOCKS 3
#endif

/* The min and max of v[p:q) folded into *lo, *hi (*nan set by a NaN), reading the fine blocks that lie inside
   [p, q) from their bounds (fmin, fmax: of each block of F values; F 0: none, every value read) and the parts
   of blocks at its ends only where their block's bounds reach past what is known (as bounded_min_max's
   coarse blocks: a NaN bound compares false, and is read). The same min and max as scan_min_max. */
static inline void fine_min_max(const double *v, int64_t p, int64_t q, int64_t F, const double *fmin,
                                const double *fmax, double *lo, double *hi, int *nan)
{
    if (F <= 0 || q - p < FINE_FROM_BLOCKS * F) {
        scan_min_max(v, p, q, lo, hi, nan);
        return;
    }
    const int64_t j0 = (p + F - 1) / F, j1 = q / F; /* fine blocks j0..j1-1 lie inside [p, q) (j1 > j0) */
    double l = *lo, h = *hi;
    int bad = *nan;
    for (int64_t j = j0; j < j1; j++) {
        const double x = fmin[j], y = fmax[j];
        l = x < l ? x : l;
        h = y > h ? y : h;
        bad |= x != x;
    }
    *lo = l, *hi = h, *nan = bad;
    if (bad)
        return;
    if (p < j0 * F && !(fmin[j0 - 1] >= *lo && fmax[j0 - 1] <= *hi))
        scan_min_max(v, p, j0 * F, lo, hi, nan);
    if (j1 * F < q && !*nan && !(fmin[j1] >= *lo && fmax[j1] <= *hi))
        scan_min_max(v, j1 * F, q, lo, hi, nan);
}

/* The min and max of v[a:b) (NaN when it holds a NaN) from the bounds of its blocks of B values (bmin, bmax;
   B 0: none) and of its fine blocks of F values (fmin, fmax; F 0: none; B a multiple of F): whole blocks
   from their bounds, the parts of blocks at the run's ends from their fine blocks' bounds, and values only
   at the ends of those, each only where its block's bounds reach past what the rest has. Zoomed out over
   a large trace a pixel is hundreds of samples: with the coarse blocks alone, a run shorter than
   BOUNDS_FROM_BLOCKS of them read every value (at 100M events a counter's pixel, ~440 samples, read them all:
   the whole series streamed from memory each frame, ~0.75 ms a counter); with the fine ones it reads a few
   of them. */
static inline void bounded_min_max2(const double *v, int64_t a, int64_t b, int64_t B, const double *bmin,
                                    const double *bmax, int64_t F, const double *fmin, const double *fmax,
                                    double *out_min, double *out_max)
{
    double lo = INFINITY, hi = -INFINITY;
    int nan = 0;
    /* (with fine blocks, a run of two blocks reads its whole one from its bounds: its ends then cost a few fine
       blocks, not up to a block of values each) */
    const int64_t from = F > 0 ? 2 : BOUNDS_FROM_BLOCKS;
    if (B <= 0 || b - a < from * B) { /* (a run of two blocks or more holds a whole one) */
        fine_min_max(v, a, b, F, fmin, fmax, &lo, &hi, &nan);
        *out_min = nan ? NAN : lo, *out_max = nan ? NAN : hi;
        return;
    }
    const int64_t j0 = (a + B - 1) / B, j1 = b / B; /* blocks j0..j1-1 lie inside [a, b) */
    for (int64_t j = j0; j < j1; j++) {
        const double x = bmin[j], y = bmax[j];
        lo = x < lo ? x : lo;
        hi = y > hi ? y : hi;
        nan |= x != x;
    }
    /* the two ends, [a, j0 * B) in block j0 - 1 and [j1 * B, b) in block j1: read only where the
       block's bounds reach past lo..hi (a NaN bound compares false: read); the first value (the one
       carried into a pixel) is one of them, so a pixel whose ends are within its blocks' range
       reads no value at all */
    const int64_t ends[2][3] = {{a, j0 * B, j0 - 1}, {j1 * B, b, j1}};
    for (int e = 0; e < 2 && !nan; e++) {
        const int64_t p = ends[e][0], q = ends[e][1], j = ends[e][2];
        if (q <= p || (bmin[j] >= lo && bmax[j] <= hi))
            continue;
        fine_min_max(v, p, q, F, fmin, fmax, &lo, &hi, &nan);
    }
    *out_min = nan ? NAN : lo, *out_max = nan ? NAN : hi;
}

static inline void bounded_min_max(const double *v, int64_t a, int64_t b, int64_t B, const double *bmin,
                                   const double *bmax, double *out_min, double *out_max)
{
    bounded_min_max2(v, a, b, B, bmin, bmax, 0, NULL, NULL, out_min, out_max);
}

/* A run ahead (v[offset + first : offset + stop]): its first block's bounds and its ends' values asked of
   the memory now (nothing for a run outside v) */
static inline void prefetch_run(const double *v, int64_t n, int64_t offset, int64_t B, const double *bmin,
                                const double *bmax, int64_t first, int64_t stop)
{
    const int64_t a = offset + first, b = offset + stop;
    if (first < 0 || a >= n || b <= a || b > n)
        return;
    if (B > 0) {
        __builtin_prefetch(&bmin[a / B]);
        __builtin_prefetch(&bmax[a / B]);
    }
    __builtin_prefetch(&v[a]);
    __builtin_prefetch(&v[b - 1]);
}

#ifndef PREFETCH_PIXELS
#define PREFETCH_PIXELS 16
#endif

/* prefetch_run, and the fine blocks' bounds at the run's two ends (F > 0) */
static inline void prefetch_run_fine(const double *v, int64_t n, int64_t offset, int64_t B, const double *bmin,
                                     const double *bmax, int64_t F, const double *fmin, const double *fmax,
                                     int64_t first, int64_t stop)
{
    prefetch_run(v, n, offset, B, bmin, bmax, first, stop);
    const int64_t a = offset + first, b = offset + stop;
    if (F <= 0 || first < 0 || a >= n || b <= a || b > n)
        return;
    __builtin_prefetch(&fmin[a / F]);
    __builtin_prefetch(&fmax[a / F]);
    __builtin_prefetch(&fmin[(b - 1) / F]);
    __builtin_prefetch(&fmax[(b - 1) / F]);
}

PyDoc_STRVAR(range_min_max_blocks_doc,
"range_min_max_blocks(v, offset, block, bmin, bmax, first, stop, vmin, vmax) -> None\n\n"
"range_min_max over v[offset:] (first, stop index it from offset), reading whole blocks of v from their\n"
"summaries: bmin[j], bmax[j] are the min and max of v[j*block:(j+1)*block] (float64, ceil(len(v)/block)\n"
"of them, NaN where the block holds a NaN). A run's blocks inside it are read from the summaries, then the\n"
"parts of blocks at its ends are read only where their block's bounds reach past what its whole blocks have\n"
"(the bounds of a whole block bound any part of it): a zoomed-out counter's pixel is a run of hundreds of\n"
"samples, of which a few dozen are then read (a frame at 100M events read every sample of every counter\n"
"shown: tens of MB). The results equal range_min_max's (a NaN in the run gives NaN). A first or stop\n"
"outside [0, len(v) - offset], an offset outside [0, len(v)], a block < 1 or summaries of another length\n"
"raise ValueError (nothing is read outside the buffers).");

static PyObject *range_min_max_blocks(PyObject *self, PyObject *args)
{
    Py_buffer vb, nb0, xb0, fb, sb, nb, xb;
    Py_ssize_t offset, block;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nny*y*y*y*w*w*", &vb, &offset, &block, &nb0, &xb0, &fb, &sb, &nb, &xb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&vb, 8, "v") < 0 || check_buffer(&nb0, 8, "bmin") < 0 || check_buffer(&xb0, 8, "bmax") < 0 ||
        check_buffer(&fb, 8, "first") < 0 || check_buffer(&sb, 8, "stop") < 0 || check_buffer(&nb, 8, "vmin") < 0 ||
        check_buffer(&xb, 8, "vmax") < 0)
        goto done;
    const int64_t n = vb.len / 8, n_px = fb.len / 8;
    if (block < 1 || offset < 0 || offset > n || nb0.len / 8 != (n + block - 1) / block || xb0.len != nb0.len ||
        sb.len / 8 != n_px || nb.len / 8 != n_px || xb.len / 8 != n_px) {
        PyErr_SetString(PyExc_ValueError, "range_min_max_blocks: bad buffer sizes");
        goto done;
    }
    const double *v = vb.buf, *bmin = nb0.buf, *bmax = xb0.buf;
    const int64_t *first = fb.buf, *stop = sb.buf;
    double *vmin = nb.buf, *vmax = xb.buf;
    const int64_t B = block, m = n - offset;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t k = 0; k < n_px; k++) {
        if (first[k] < 0 || first[k] > m || stop[k] < 0 || stop[k] > m) {
            bad = 1;
            break;
        }
        const int64_t a = offset + first[k], b = offset + stop[k];
        if (k + PREFETCH_KEYS < n_px)
            prefetch_run(v, n, offset, B, bmin, bmax, first[k + PREFETCH_KEYS], stop[k + PREFETCH_KEYS]);
        if (b <= a) {
            vmin[k] = vmax[k] = NAN;
            continue;
        }
        bounded_min_max(v, a, b, B, bmin, bmax, &vmin[k], &vmax[k]);
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "range_min_max_blocks: first or stop out of range");
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb0);
    PyBuffer_Release(&xb0);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&xb);
    return result;
}

PyDoc_STRVAR(paint_columns_doc,
"paint_columns(x1, x2, value, row) -> None\n\n"
"row[x1[i]:x2[i]] = value[i] for each i in order (int64 x1, x2; uint32 value, row), each range cut to the\n"
"row: a single-row box lane's rectangles as pixel columns, a later rectangle over an earlier one as Qt fills\n"
"them one after the other (app/timeline/lane_image.py).");

static PyObject *paint_columns(PyObject *self, PyObject *args)
{
    Py_buffer ab, bb, vb, rb;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &ab, &bb, &vb, &rb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&ab, 8, "x1") < 0 || check_buffer(&bb, 8, "x2") < 0 || check_buffer(&vb, 4, "value") < 0 ||
        check_buffer(&rb, 4, "row") < 0)
        goto done;
    const int64_t n = ab.len / 8, w = rb.len / 4;
    if (bb.len / 8 != n || vb.len / 4 != n) {
        PyErr_SetString(PyExc_ValueError, "paint_columns: bad buffer sizes");
        goto done;
    }
    {
        const int64_t *x1 = ab.buf, *x2 = bb.buf;
        const uint32_t *value = vb.buf;
        uint32_t *row = rb.buf;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t i = 0; i < n; i++) {
            const int64_t a = x1[i] < 0 ? 0 : x1[i], b = x2[i] > w ? w : x2[i];
            for (int64_t c = a; c < b; c++)
                row[c] = value[i];
        }
        Py_END_ALLOW_THREADS
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&ab);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&rb);
    return result;
}

PyDoc_STRVAR(raster_rect_spans_doc,
"raster_rect_spans(rects, dx, dy, clip_left, clip_top, clip_right, clip_bottom, spans) -> None\n\n"
"The pixels Qt's raster engine fills for each rectangle (rects: float64, 4 a rectangle: x, y, w, h) painted\n"
"without antialiasing under a transform that moves by (dx, dy) into a clip rectangle (ints, inclusive):\n"
"QRasterPaintEngine::drawRects hands each one to QRasterizer::rasterizeLine as a line from the middle of\n"
"its left edge to the middle of its right edge with a width, which clips the line and turns it into\n"
"spans; the same double arithmetic in the same order here (an edge on a pixel's centre comes out as Qt's,\n"
"its rounding noise included). spans (int64, 4 a rectangle): first and last column, first and last row,\n"
"inclusive; an empty rectangle's last column is below its first (app/timeline/lane_image.py).");

static PyObject *raster_rect_spans(PyObject *self, PyObject *args)
{
    Py_buffer rb, sb;
    double dx, dy;
    int cl, ct, cr, cb;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ddiiiiw*", &rb, &dx, &dy, &cl, &ct, &cr, &cb, &sb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&rb, 8, "rects") < 0 || check_buffer(&sb, 8, "spans") < 0)
        goto done;
    if (sb.len != rb.len || rb.len % 32 != 0) {
        PyErr_SetString(PyExc_ValueError, "raster_rect_spans: bad buffer sizes");
        goto done;
    }
    {
        const double *r = rb.buf;
        int64_t *out = sb.buf;
        const int64_t n = rb.len / 32;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t i = 0; i < n; i++) {
            int64_t *o = out + 4 * i;
            o[0] = 0, o[1] = -1, o[2] = 0, o[3] = -1; /* (nothing) */
            double x = r[4 * i], y = r[4 * i + 1], w = r[4 * i + 2], h = r[4 * i + 3];
            if (w < 0) /* QRectF::normalized */
                x += w, w = -w;
            if (h < 0)
                y += h, h = -h;
            if (!(w > 0) || !(h > 0) || cr < cl || cb < ct) /* (isEmpty; an empty clip) */
                continue;
            /* a = map((topLeft + bottomLeft) * 0.5), b = map((topRight + bottomRight) * 0.5) */
            const double my = (y + (y + h)) * 0.5;
            const double ax = ((x + x) * 0.5) + dx, ay = my + dy;
            const double bx = (((x + w) + (x + w)) * 0.5) + dx, by = my + dy;
            double width = h / w;
            if ((ax == bx && ay == by) || !(width > 0.0))
                continue;
            /* the clip, widened by the line's half width across it */
            const double ox = (fabs(by - ay) * width) * 0.5, oy = (fabs(bx - ax) * width) * 0.5;
            const double xp = (double)cl - ox, yp = (double)ct - oy;
            const double xmin = xp, xmax = xp + (((double)(cr + 1) + ox) - xp);
            const double ymin = yp, ymax = yp + (((double)(cb + 1) + oy) - yp);
            double x1 = ax, y1 = ay, x2 = bx, y2 = by;
            if (!isfinite(x1) || !isfinite(y1) || !isfinite(x2) || !isfinite(y2))
                continue;
            int gone = 0;
            if (x1 < xmin) {
                if (x2 <= xmin)
                    gone = 1;
                else
                    y1 += (y2 - y1) / (x2 - x1) * (xmin - x1), x1 = xmin;
            } else if (x1 > xmax) {
                if (x2 >= xmax)
                    gone = 1;
                else
                    y1 += (y2 - y1) / (x2 - x1) * (xmax - x1), x1 = xmax;
            }
            if (gone)
                continue;
            if (x2 < xmin)
                y2 += (y2 - y1) / (x2 - x1) * (xmin - x2), x2 = xmin;
            else if (x2 > xmax)
                y2 += (y2 - y1) / (x2 - x1) * (xmax - x2), x2 = xmax;
            if (y1 < ymin) {
                if (y2 <= ymin)
                    continue;
                x1 += (x2 - x1) / (y2 - y1) * (ymin - y1), y1 = ymin;
            } else if (y1 > ymax) {
                if (y2 >= ymax)
                    continue;
                x1 += (x2 - x1) / (y2 - y1) * (ymax - y1), y1 = ymax;
            }
            if (y2 < ymin)
                x2 += (x2 - x1) / (y2 - y1) * (ymin - y2), y2 = ymin;
            else if (y2 > ymax)
                x2 += (x2 - x1) / (y2 - y1) * (ymax - y2), y2 = ymax;
            {
                const double d0x = ax - bx, d0y = ay - by, d1x = x1 - x2, d1y = y1 - y2;
                const double w0 = d0x * d0x + d0y * d0y, w1 = d1x * d1x + d1y * d1y;
                if (w1 == 0)
                    continue;
                width *= sqrt(w0 / w1);
            }
            double pax = x1, pay = y1, pbx = x2, pby = y2;
            if ((int)((pby - pay) * 64.) == 0) { /* horizontal: the same as a vertical line */
                const double X = (pax + pbx) * 0.5, DX = fabs(pbx - pax) * 0.5, Y = pay, DY = width * DX;
                pax = X, pay = Y - DY, pbx = X, pby = Y + DY;
                width = 1 / width;
            }
            if ((int)((pbx - pax) * 64.) != 0)
                continue; /* (a slanted line: never a rectangle's) */
            if (pay > pby) {
                double t = pax; pax = pbx; pbx = t;
                t = pay; pay = pby; pby = t;
            }
            const double dyy = pby - pay, half = 0.5 * width * dyy;
            double left = pax - half, right = pax + half;
            const double L = cl, R = (double)cr + 1, T = ct, B = (double)cb + 1;
            left = left > R ? R : left, left = left < L ? L : left;
            right = right > R ? R : right, right = right < L ? L : right;
            pay = pay > B ? B : pay, pay = pay < T ? T : pay;
            pby = pby > B ? B : pby, pby = pby < T ? T : pby;
            if ((int)((right - left) * 64.) == 0 || (int)((pby - pay) * 64.) == 0)
                continue;
            o[2] = (int)(pay + 0.5);
            o[3] = pby < 0.5 ? -1 : (int)(pby - 0.5);
            o[0] = (int)(left + 0.5);
            o[1] = right < 0.5 ? -1 : (int)(right - 0.5);
        }
        Py_END_ALLOW_THREADS
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&rb);
    PyBuffer_Release(&sb);
    return result;
}

PyDoc_STRVAR(area_pixels_doc,
"area_pixels(left, width, y_max, y_min, zero, y0, pixels) -> None\n\n"
"A counter picture's pixels (app/timeline/counter_picture.py area_pixels, its numpy path the reference): for\n"
"each pixel column of pixels (uint8, rows x columns, zeroed by the caller) the entry over its centre (left\n"
"ascending; float64 left, width, y_max, y_min, one an entry), 1 over its area between the band's edge nearest\n"
"zero and the zero line, 2 over its band from y_max down (at least a pixel), rows from y0, pixels taken by\n"
"their centres. A NaN edge counts as row 0 (as numpy's cast of it).");

static inline int64_t area_row(double y, int64_t y0, int64_t rows)
{
    double r = ceil(y - 0.5) - (double)y0;
    if (r != r)
        return 0;
    return r < 0 ? 0 : r > (double)rows ? rows : (int64_t)r;
}

static PyObject *area_pixels(PyObject *self, PyObject *args)
{
    Py_buffer lb, wb, xb, nb, pb;
    double zero;
    Py_ssize_t y0, rows, columns;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*dnnnw*", &lb, &wb, &xb, &nb, &zero, &y0, &rows, &columns, &pb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&lb, 8, "left") < 0 || check_buffer(&wb, 8, "width") < 0 || check_buffer(&xb, 8, "y_max") < 0 ||
        check_buffer(&nb, 8, "y_min") < 0)
        goto done;
    const int64_t n = lb.len / 8;
    if (wb.len / 8 != n || xb.len / 8 != n || nb.len / 8 != n || rows < 0 || columns < 0 || pb.len != rows * columns) {
        PyErr_SetString(PyExc_ValueError, "area_pixels: bad buffer sizes");
        goto done;
    }
    {
        const double *left = lb.buf, *width = wb.buf, *ymax = xb.buf, *ymin = nb.buf;
        uint8_t *px = pb.buf;
        Py_BEGIN_ALLOW_THREADS
        int64_t e = -1; /* the last entry whose left is at or before the column's centre */
        for (int64_t c = 0; c < columns; c++) {
            const double centre = (double)c + 0.5;
            while (e + 1 < n && left[e + 1] <= centre)
                e++;
            if (e < 0)
                continue;
            const double right = left[e] + (width[e] > 1.0 ? width[e] : 1.0);
            if (!(centre < right))
                continue;
            const double hi = ymax[e], lo = ymin[e];
            const double near = lo > zero ? hi : lo;
            const double gap = lo - hi;
            const double band_bottom = hi + (gap > 1.0 ? gap : (gap != gap ? gap : 1.0));
            const int64_t at = area_row(near < zero ? near : zero, y0, rows);
            const int64_t ab = area_row(near > zero ? near : zero, y0, rows);
            const int64_t bt = area_row(hi, y0, rows), be = area_row(band_bottom, y0, rows);
            for (int64_t r = at; r < ab; r++)
                px[r * columns + c] |= 1;
            for (int64_t r = bt; r < be; r++)
                px[r * columns + c] |= 2;
        }
        Py_END_ALLOW_THREADS
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&lb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    return result;
}

PyDoc_STRVAR(lod_runs_doc,
"lod_runs(v, offset, block, bmin, bmax, first, stop, idx, vmin, vmax, last) -> m\n\n"
"A counter window's pixel entries (core/trace/counters.py CounterSet.lod, its numpy path the reference): of\n"
"the buckets k whose samples v[offset + first[k] : offset + stop[k]] are not empty, their min and max (as\n"
"range_min_max_blocks reads them, whole blocks from the bounds bmin, bmax; block 0: every value, no\n"
"bounds) and the last sample, each bucket kept when one of the three differs (!=) from the previous such\n"
"bucket's: written to idx (int64: k), vmin, vmax, last (float64), m of them. One pass instead of a dozen\n"
"numpy calls over the pixels a counter a frame. A first or stop outside [0, len(v) - offset], a bad\n"
"offset, block or bounds length raise ValueError.");

static PyObject *lod_runs(PyObject *self, PyObject *args)
{
    Py_buffer vb, nb0, xb0, fb, sb, ib, nb, xb, lb;
    Py_ssize_t offset, block;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nny*y*y*y*w*w*w*w*", &vb, &offset, &block, &nb0, &xb0, &fb, &sb, &ib, &nb, &xb, &lb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&vb, 8, "v") < 0 || check_buffer(&nb0, 8, "bmin") < 0 || check_buffer(&xb0, 8, "bmax") < 0 ||
        check_buffer(&fb, 8, "first") < 0 || check_buffer(&sb, 8, "stop") < 0 || check_buffer(&ib, 8, "idx") < 0 ||
        check_buffer(&nb, 8, "vmin") < 0 || check_buffer(&xb, 8, "vmax") < 0 || check_buffer(&lb, 8, "last") < 0)
        goto done;
    const int64_t n = vb.len / 8, n_px = fb.len / 8;
    if (block < 0 || offset < 0 || offset > n || (block > 0 && (nb0.len / 8 != (n + block - 1) / block || xb0.len != nb0.len)) ||
        sb.len / 8 != n_px || ib.len / 8 < n_px || nb.len / 8 < n_px || xb.len / 8 < n_px || lb.len / 8 < n_px) {
        PyErr_SetString(PyExc_ValueError, "lod_runs: bad buffer sizes");
        goto done;
    }
    const double *v = vb.buf, *bmin = nb0.buf, *bmax = xb0.buf;
    const int64_t *first = fb.buf, *stop = sb.buf;
    int64_t *idx = ib.buf;
    double *vmin = nb.buf, *vmax = xb.buf, *last = lb.buf;
    const int64_t m_max = n - offset;
    int64_t m = 0;
    int bad = 0, seen = 0;
    double p_lo = 0, p_hi = 0, p_la = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t k = 0; k < n_px; k++) {
        if (first[k] < 0 || first[k] > m_max || stop[k] < 0 || stop[k] > m_max) {
            bad = 1;
            break;
        }
        if (k + PREFETCH_KEYS < n_px)
            prefetch_run(v, n, offset, block, bmin, bmax, first[k + PREFETCH_KEYS], stop[k + PREFETCH_KEYS]);
        const int64_t a = offset + first[k], b = offset + stop[k];
        if (b <= a)
            continue;
        double lo, hi;
        bounded_min_max(v, a, b, block, bmin, bmax, &lo, &hi);
        const double la = v[b - 1];
        /* compared with the previous non-empty bucket (kept or not), as numpy's neighbours; a kept entry
           keeps its own values (-0.0 and 0.0 compare equal) */
        const int same = seen && !(lo != p_lo || hi != p_hi || la != p_la);
        p_lo = lo, p_hi = hi, p_la = la, seen = 1;
        if (same)
            continue;
        idx[m] = k, vmin[m] = lo, vmax[m] = hi, last[m] = la;
        m++;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "lod_runs: first or stop out of range");
        goto done;
    }
    result = PyLong_FromLongLong(m);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb0);
    PyBuffer_Release(&xb0);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&lb);
    return result;
}

PyDoc_STRVAR(counter_strip_doc,
"counter_strip(ts, v, block, bmin, bmax, fblock, fmin, fmax, tsample, anchor, origin, w0, w1, bucket, sx,\n"
"              lo, hi, full, left, width, y_max, y_min) -> m\n\n"
"A counter picture's strip in one call (app/timeline/counter_track.py CounterTrackItem._strip, whose\n"
"reference is CounterTrackItem.bands over CounterSet.lod with an anchor): the entries of the window\n"
"[w0, w1) on the pixel grid anchor + k * bucket ns, of the series ts (int64, ascending), v (float64; block,\n"
"bmin, bmax: its block bounds as lod_runs reads them; fblock, fmin, fmax: those of its fine blocks, read at\n"
"the ends of a pixel's whole blocks, fblock 0 for none, block a multiple of fblock; tsample: ts[::fblock],\n"
"through which the pixel edges are searched: search_sampled), as pixels from w0 at sx pixels a second (left, width,\n"
"clipped to [-10, 1e7]) and as y on a scale lo..hi drawn full pixels high from the lane's top (y_max, y_min).\n"
"The same float and integer operations in the same order as the numpy path, so that the pixels are its\n"
"own; the galloping searches of the pixel edges and the runs of equal pixels in one pass (the numpy glue\n"
"around lod_runs was ~0.25 ms a counter a frame: a dozen counters on every pan and zoom). Returns the\n"
"number m of entries written (the outputs hold at least the window's pixels + 1), or -1 where the numpy\n"
"path must answer: a window whose offsets from the anchor do not fit the exact integer case (a corrupt\n"
"trace's span past 2**53 ns), or more pixels than the outputs hold.");

static PyObject *counter_strip(PyObject *self, PyObject *args)
{
    Py_buffer tb, vb, nb0, xb0, fb0, gb0, sb0, lb, wb, yb, zb;
    Py_ssize_t block, fblock;
    long long anchor, origin, w0, w1;
    double bucket, sx, scale_lo, scale_hi, full;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*ny*y*y*LLLLdddddw*w*w*w*", &tb, &vb, &block, &nb0, &xb0, &fblock, &fb0, &gb0,
                          &sb0, &anchor, &origin, &w0, &w1, &bucket, &sx, &scale_lo, &scale_hi, &full, &lb, &wb, &yb,
                          &zb))
        return NULL;
    PyObject *result = NULL;
    int64_t *carry = NULL;
    if (check_buffer(&tb, 8, "ts") < 0 || check_buffer(&vb, 8, "v") < 0 || check_buffer(&nb0, 8, "bmin") < 0 ||
        check_buffer(&xb0, 8, "bmax") < 0 || check_buffer(&fb0, 8, "fmin") < 0 || check_buffer(&gb0, 8, "fmax") < 0 ||
        check_buffer(&sb0, 8, "tsample") < 0 ||
        check_buffer(&lb, 8, "left") < 0 || check_buffer(&wb, 8, "width") < 0 ||
        check_buffer(&yb, 8, "y_max") < 0 || check_buffer(&zb, 8, "y_min") < 0)
        goto done;
    const int64_t n = tb.len / 8, cap = lb.len / 8;
    if (vb.len != tb.len || block < 0 || (block > 0 && (nb0.len / 8 != (n + block - 1) / block || xb0.len != nb0.len)) ||
        fblock < 0 || (fblock > 0 && (block % fblock != 0 || fb0.len / 8 != (n + fblock - 1) / fblock ||
                                      gb0.len != fb0.len || sb0.len != fb0.len)) ||
        wb.len / 8 != cap || yb.len / 8 != cap || zb.len / 8 != cap) {
        PyErr_SetString(PyExc_ValueError, "counter_strip: bad buffer sizes");
        goto done;
    }
    if (!(bucket >= 1.0) || !isfinite(bucket) || !(sx > 0) || w1 <= w0) {
        result = PyLong_FromLong(-1);
        goto done;
    }
    {
        const int64_t *ts = tb.buf;
        const double *v = vb.buf, *bmin = nb0.buf, *bmax = xb0.buf, *fmin = fb0.buf, *fmax = gb0.buf;
        const int64_t *tsample = sb0.buf;
        double *left = lb.buf, *width = wb.buf, *ymax = yb.buf, *ymin = zb.buf;
        int64_t d0, d1, dorigin;
        /* (lod's offsets from the anchor, in Python's integers: outside int64 is the numpy path's) */
        if (__builtin_sub_overflow((int64_t)w0, (int64_t)anchor, &d0) ||
            __builtin_sub_overflow((int64_t)w1, (int64_t)anchor, &d1) ||
            __builtin_sub_overflow((int64_t)w0, (int64_t)origin, &dorigin) || d1 >= ((int64_t)1 << 53)) {
            result = PyLong_FromLong(-1);
            goto done;
        }
        const double k0d = floor((double)d0 / bucket);
        const double n_raw = ceil((double)d1 / bucket) - k0d;
        if (!(fabs(k0d) < 9.0e15) || !(n_raw < (double)cap)) {
            result = PyLong_FromLong(-1);
            goto done;
        }
        const int64_t k0 = (int64_t)k0d, n_px = n_raw > 1 ? (int64_t)n_raw : 1;
        const double e0 = ((double)0 + (double)k0) * bucket;
        const double f0 = floor(e0);
        /* first_raw = anchor + floor(edges[0]) must be first_ns (not clamped) and w1 + 2 * bucket below 2**63 - 1 */
        int64_t first_ns;
        if (!(fabs(f0) < 9.0e18) || __builtin_add_overflow((int64_t)anchor, (int64_t)f0, &first_ns) ||
            first_ns == INT64_MIN || !((double)w1 + 2 * bucket < 9223372036854775808.0)) {
            result = PyLong_FromLong(-1);
            goto done;
        }
        /* carry, stop: n_px each; edge_key, at_edge: n_px + 1 each */
        carry = PyMem_Malloc(sizeof(int64_t) * (size_t)(4 * n_px + 2));
        if (carry == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        int64_t *stop = carry + n_px, *edge_key = carry + 2 * n_px, *at_edge = carry + 3 * n_px + 1;
        int64_t m = 0;
        Py_BEGIN_ALLOW_THREADS
        /* a = max(searchsorted(ts, first_ns, "right") - 1, 0); b = searchsorted(ts, w1, "left") */
        const int64_t after_first = search_i64(ts, 0, n, first_ns, 1); /* side right: the first value > first_ns */
        const int64_t a = after_first - 1 > 0 ? after_first - 1 : 0, b = search_i64(ts, 0, n, (int64_t)w1, 0);
        if (b > a) {
            /* the buckets' samples in force, indices from a: carry (the last at or before the bucket's start) and
               stop (the first at or after its end), as lod's exact case: keys anchor + floor(e) + 1, anchor + ceil(e)
               of the bucket's edges e. The two keys of one edge differ only where e is a whole number (ceil(e) is
               then e, floor(e) + 1 is e + 1): the edges are searched once, at anchor + ceil(e), and the carry of
               an edge that is a whole number moves past the samples at exactly that time (a second search of every
               edge, cache misses in a big series: ten strips of 1,920 pixels, alternating in one process, 0.53 ->
               0.45 ms a strip at ~54 samples a pixel, 0.97 -> 0.84 ms at ~180) */
            const int64_t *run = ts + a, len = b - a;
            for (int64_t j = 0; j <= n_px; j++)
                edge_key[j] = (int64_t)anchor + (int64_t)ceil(((double)j + (double)k0) * bucket);
            if (fblock > 0) { /* (the whole column's positions, then the run's: clamped to it) */
                search_sampled_run(ts, n, tsample, fblock, edge_key, n_px + 1, at_edge);
                for (int64_t j = 0; j <= n_px; j++)
                    at_edge[j] = at_edge[j] < a ? 0 : at_edge[j] > b ? len : at_edge[j] - a;
            } else {
                search_ascending_run(run, len, edge_key, n_px + 1, at_edge);
            }
            for (int64_t k = 0; k < n_px; k++) {
                const double ea = ((double)k + (double)k0) * bucket;
                int64_t c = at_edge[k];
                if (floor(ea) == ea) /* (keys anchor + e + 1 and anchor + e: past the samples at e) */
                    while (c < len && run[c] == edge_key[k])
                        c++;
                carry[k] = c - 1;
                stop[k] = at_edge[k + 1];
            }
            const double half_span = scale_hi * 0.5 - scale_lo * 0.5, lo_half = scale_lo * 0.5;
            const double to_px = sx / 1e9, offset = (double)dorigin;
            double p_lo = 0, p_hi = 0, p_la = 0;
            int seen = 0;
            for (int64_t k = 0; k < n_px; k++) {
                const int64_t f = carry[k] > 0 ? carry[k] : 0;
                if (k + PREFETCH_PIXELS < n_px)
                    prefetch_run_fine(v, n, a, block, bmin, bmax, fblock, fmin, fmax,
                                      carry[k + PREFETCH_PIXELS] > 0 ? carry[k + PREFETCH_PIXELS] : 0,
                                      stop[k + PREFETCH_PIXELS]);
                const int64_t ra = a + f, rb = a + stop[k];
                if (rb <= ra)
                    continue;
                double lo, hi;
                bounded_min_max2(v, ra, rb, block, bmin, bmax, fblock, fmin, fmax, &lo, &hi);
                const double la = v[rb - 1];
                const int same = seen && !(lo != p_lo || hi != p_hi || la != p_la);
                p_lo = lo, p_hi = hi, p_la = la, seen = 1;
                if (same)
                    continue;
                const double ek = ((double)k + (double)k0) * bucket;
                int64_t start = (int64_t)anchor + (int64_t)ceil(ek);
                if (m == 0 && start < ts[a])
                    start = ts[a];
                const uint64_t rel = (uint64_t)start - (uint64_t)origin;
                double x = (dorigin ? ((double)rel - offset) * to_px : (double)rel * to_px) + 0.0;
                left[m] = x < -10.0 ? -10.0 : x > 1e7 ? 1e7 : x;
                ymax[m] = full - (hi * 0.5 - lo_half) / half_span * full;
                ymin[m] = full - (lo * 0.5 - lo_half) / half_span * full;
                m++;
            }
            if (m) {
                double end = (double)((int64_t)w1 - (int64_t)w0) / 1e9 * sx + 0.0;
                end = end < -10.0 ? -10.0 : end > 1e7 ? 1e7 : end;
                for (int64_t j = 0; j < m; j++) {
                    const double r = j + 1 < m ? left[j + 1] : end, d = r - left[j];
                    width[j] = d > 0.0 ? d : (d != d ? d : 0.0);
                }
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromLongLong(m);
    }
done:
    PyMem_Free(carry);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&nb0);
    PyBuffer_Release(&xb0);
    PyBuffer_Release(&fb0);
    PyBuffer_Release(&gb0);
    PyBuffer_Release(&sb0);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&yb);
    PyBuffer_Release(&zb);
    return result;
}

PyDoc_STRVAR(colour_codes_doc,
"colour_codes(codes, lut, out, column) -> None\n\n"
"A counter picture's pixel codes in colour (app/timeline/counter_picture.py): codes (uint8, rows x w, C order)\n"
"mapped through lut (uint32, 4 colours: a code's two bits index it) into columns column .. column + w of out\n"
"(uint32, rows x its width, C order: the picture's buffer, wider than the strip). One pass, where numpy's\n"
"gather into the strided columns cost ~0.1 ms a strip, every pan of every counter.");

static PyObject *colour_codes(PyObject *self, PyObject *args)
{
    Py_buffer cb, lb, ob;
    Py_ssize_t rows, w, width, column;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nny*w*nn", &cb, &rows, &w, &lb, &ob, &width, &column))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&lb, 4, "lut") < 0 || check_buffer(&ob, 4, "out") < 0)
        goto done;
    if (rows < 0 || w < 0 || width < 0 || column < 0 || column + w > width || cb.len != rows * w ||
        lb.len != 16 || ob.len != rows * width * 4) {
        PyErr_SetString(PyExc_ValueError, "colour_codes: bad buffer sizes");
        goto done;
    }
    {
        const uint8_t *codes = cb.buf;
        const uint32_t *lut = lb.buf;
        uint32_t *out = ob.buf;
        for (Py_ssize_t r = 0; r < rows; r++) {
            const uint8_t *src = codes + r * w;
            uint32_t *dst = out + r * width + column;
            for (Py_ssize_t c = 0; c < w; c++)
                dst[c] = lut[src[c] & 3];
        }
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&cb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&ob);
    return result;
}


PyDoc_STRVAR(row_pixels_doc,
"row_pixels(spans, rgba, row) -> (c0, c1, y1, y2) or None\n\n"
"A single-row picture's pixels from its rectangles' spans (raster_rect_spans' output, int64, 4 a rectangle;\n"
"rgba: uint32, a colour each; app/timeline/lane_image.py RowFills.paint, its numpy path the reference): None\n"
"when the drawn rectangles do not all cover the same rows (not one row of pixels); else their columns c0..c1\n"
"(exclusive) and rows y1..y2 (exclusive), (0, 0, 0, 0) when none is drawn, and row[0 : c1 - c0] (uint32,\n"
"cleared here) painted as paint_columns paints, each rectangle's columns in order, a later one over an earlier\n"
"one. One pass for the dozen numpy calls a CPU lane's frame made over its thousands of spans. A row shorter\n"
"than c1 - c0 raises ValueError.");

static PyObject *row_pixels(PyObject *self, PyObject *args)
{
    Py_buffer sb, vb, rb;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*", &sb, &vb, &rb))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&sb, 8, "spans") < 0 || check_buffer(&vb, 4, "rgba") < 0 || check_buffer(&rb, 4, "row") < 0)
        goto done;
    const int64_t n = sb.len / 32, cap = rb.len / 4;
    if (sb.len % 32 != 0 || vb.len / 4 != n) {
        PyErr_SetString(PyExc_ValueError, "row_pixels: bad buffer sizes");
        goto done;
    }
    {
        const int64_t *sp = sb.buf;
        const uint32_t *rgba = vb.buf;
        uint32_t *row = rb.buf;
        int64_t c0 = 0, c1 = 0, y1 = 0, y2 = 0;
        int any = 0, one_row = 1;
        for (int64_t i = 0; i < n; i++) {
            const int64_t *o = sp + 4 * i;
            if (!(o[1] >= o[0] && o[3] >= o[2]))
                continue;
            if (!any) {
                any = 1, c0 = o[0], c1 = o[1] + 1, y1 = o[2], y2 = o[3] + 1;
                continue;
            }
            if (o[2] != y1 || o[3] + 1 != y2) {
                one_row = 0;
                break;
            }
            c0 = o[0] < c0 ? o[0] : c0;
            c1 = o[1] + 1 > c1 ? o[1] + 1 : c1;
        }
        if (!one_row) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (!any) {
            result = Py_BuildValue("(LLLL)", 0LL, 0LL, 0LL, 0LL);
            goto done;
        }
        const int64_t w = c1 - c0;
        if (w > cap) {
            PyErr_SetString(PyExc_ValueError, "row_pixels: the row is shorter than the columns drawn");
            goto done;
        }
        memset(row, 0, (size_t)w * 4);
        for (int64_t i = 0; i < n; i++) {
            const int64_t *o = sp + 4 * i;
            if (!(o[1] >= o[0] && o[3] >= o[2]))
                continue;
            const int64_t a = o[0] - c0 < 0 ? 0 : o[0] - c0, b = o[1] + 1 - c0 > w ? w : o[1] + 1 - c0;
            for (int64_t c = a; c < b; c++)
                row[c] = rgba[i];
        }
        result = Py_BuildValue("(LLLL)", (long long)c0, (long long)c1, (long long)y1, (long long)y2);
    }
done:
    PyBuffer_Release(&sb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&rb);
    return result;
}


static PyMethodDef methods[] = {
    {"duration_threads", duration_threads, METH_VARARGS, duration_threads_doc},
    {"thread_counts", thread_counts, METH_VARARGS, thread_counts_doc},
    {"scatter_threads", scatter_threads, METH_VARARGS, scatter_threads_doc},
    {"match_threads", match_threads, METH_VARARGS, match_threads_doc},
    {"match_scratch", match_scratch, METH_VARARGS, match_scratch_doc},
    {"group_by_thread_time", group_by_thread_time, METH_VARARGS, group_by_thread_time_doc},
    {"lane_rows", lane_rows, METH_VARARGS, lane_rows_doc},
    {"pyramid", pyramid, METH_VARARGS, pyramid_doc},
    {"density", density, METH_VARARGS, density_doc},
    {"box_rects", box_rects, METH_VARARGS, box_rects_doc},
    {"box_geometry", box_geometry, METH_VARARGS, box_geometry_doc},
    {"pyramid_query", pyramid_query, METH_VARARGS, pyramid_query_doc},
    {"pyramid_query_boxes", pyramid_query_boxes, METH_VARARGS, pyramid_query_boxes_doc},
    {"pixel_buckets", pixel_buckets, METH_VARARGS, pixel_buckets_doc},
    {"search_ascending", search_ascending, METH_VARARGS, search_ascending_doc},
    {"search_sampled", search_sampled, METH_VARARGS, search_sampled_doc},
    {"counter_strip", counter_strip, METH_VARARGS, counter_strip_doc},
    {"block_bounds", block_bounds, METH_VARARGS, block_bounds_doc},
    {"colour_codes", colour_codes, METH_VARARGS, colour_codes_doc},
    {"row_pixels", row_pixels, METH_VARARGS, row_pixels_doc},
    {"match_outlines", match_outlines, METH_VARARGS, match_outlines_doc},
    {"range_min_max", range_min_max, METH_VARARGS, range_min_max_doc},
    {"range_min_max_blocks", range_min_max_blocks, METH_VARARGS, range_min_max_blocks_doc},
    {"paint_columns", paint_columns, METH_VARARGS, paint_columns_doc},
    {"lod_runs", lod_runs, METH_VARARGS, lod_runs_doc},
    {"area_pixels", area_pixels, METH_VARARGS, area_pixels_doc},
    {"raster_rect_spans", raster_rect_spans, METH_VARARGS, raster_rect_spans_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "slice_kernels",
    "The model build's sequential loops (slice matching, pyramid summaries, density), compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit_slice_kernels(void)
{
    return PyModule_Create(&module);
}
