/*
 * The model's per-event state machines over flow events, compiled: binding each flow event to the slice
 * enclosing it, and chaining the flow events of a key into links, written as the flow table (sorted by
 * source slice, with its order by destination slice: counting sorts by slice, not argsorts of the links).
 *
 * Why C: in numpy each is a dozen passes over the events (a pair search, a walk up the ancestors one level
 * at a time, sorts by key, forward and backward fills per key) where one walk in time order with a cursor
 * per thread, or a hash table of the active flows, does it. The GIL is released while they run.
 *
 * Every kernel reads only the buffers it is given, every index it reads is bounds checked, and a kernel
 * that finds its input outside what it handles (a table not sorted as promised, a parent row out of range,
 * a cycle) returns a status that sends the caller to its numpy path (or raises, for input no caller
 * makes), which stays the reference for what the result is (core/trace/flows.py; the tests compare them).
 */
#define PY_SSIZE_T_CLEAN
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KIND_FILL_AVX2 1 /* kind_rows' int32 fill 32 rows a step where the CPU has AVX2 (checked at run time) */
#endif
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* status codes returned to Python (0: done) */
#define ST_OK 0
#define ST_FALLBACK 1 /* the input is outside what the kernel handles: take the numpy path */

static int check_items(Py_buffer *b, Py_ssize_t itemsize, const char *what)
{
    if (b->len % itemsize != 0 || ((uintptr_t)b->buf) % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: buffer length or alignment does not fit %zd-byte items", what,
                     itemsize);
        return -1;
    }
    return 0;
}

/* A signed integer of a 1-, 2-, 4- or 8-byte column. */
static inline int64_t int_at(const void *buf, int isz, Py_ssize_t i)
{
    switch (isz) {
    case 1:
        return ((const int8_t *)buf)[i];
    case 2:
        return ((const int16_t *)buf)[i];
    case 4:
        return ((const int32_t *)buf)[i];
    default:
        return ((const int64_t *)buf)[i];
    }
}

static int int_size_ok(Py_buffer *b, int isz, const char *what)
{
    if (isz != 1 && isz != 2 && isz != 4 && isz != 8) {
        PyErr_Format(PyExc_ValueError, "%s: item size %d is not 1, 2, 4 or 8", what, isz);
        return -1;
    }
    return check_items(b, isz, what);
}

/* First index in [lo, hi) of sorted v whose value is > key (hi if none), galloping from hint (the answer
   of the thread's previous query: queries in time order find it a few steps away). */
static Py_ssize_t upper_gallop(const int64_t *v, Py_ssize_t lo, Py_ssize_t hi, int64_t key, Py_ssize_t hint)
{
    Py_ssize_t a, b, step = 1;
    if (hint < lo)
        hint = lo;
    if (hint > hi)
        hint = hi;
    if (hint == lo || v[hint - 1] <= key) { /* the answer is >= hint */
        a = b = hint;
        while (b < hi && v[b] <= key) {
            a = b + 1;
            b = (hi - b > step) ? b + step : hi;
            step <<= 1;
        }
    } else { /* v[hint - 1] > key: the answer is < hint */
        b = hint - 1;
        a = b;
        while (a > lo && v[a - 1] > key) {
            b = a - 1;
            a = (a - lo > step) ? a - step : lo;
            step <<= 1;
        }
    }
    while (a < b) { /* v[a - 1] <= key (or a == lo), and b == hi or v[b] > key */
        Py_ssize_t mid = a + (b - a) / 2;
        if (v[mid] <= key)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

PyDoc_STRVAR(bind_to_slices_doc,
"bind_to_slices(s_ts, s_dur, s_event, s_parent, th, th_size, q_thread, q_ts, q_event, q_size, out[, thread_by_event]) -> status\n\n"
"Slice row of the innermost slice open on each query's thread at its timestamp, or -1: what\n"
"fxscope.core.trace.flows.bind_to_slices computes with numpy. The slices (s_ts, s_dur int64, s_event,\n"
"s_parent int32) are sorted by (thread, ts), a slice's thread being th[s_event[i]] (th: integers of th_size\n"
"bytes, the reader's ev_thread); the queries are (q_thread of th_size bytes, q_ts int64, q_event of q_size\n"
"bytes); out is int64 or int32. Per query: the last slice of its thread starting at or before it (not one starting\n"
"at the same time whose event row is later), then up the parents while that one ended before it. Returns\n"
"With thread_by_event, q_thread is the whole thread column and a query's thread is q_thread[q_event] (no\n"
"gathered copy; a query's event row outside the column is a ValueError).\n"
"0, or 1 when the slices are not sorted, an event or parent row is out of range, a parent chain does not\n"
"end, or the threads span too wide a range (the caller then takes its numpy path).");

static PyObject *bind_to_slices(PyObject *self, PyObject *args)
{
    Py_buffer sts, sdur, sev, spar, th, qth, qts, qev, out;
    int th_size, q_size, thread_by_event = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*iy*y*y*iw*|p", &sts, &sdur, &sev, &spar, &th, &th_size, &qth, &qts,
                          &qev, &q_size, &out, &thread_by_event))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *lo = NULL, *hi = NULL, *cur = NULL;
    if (check_items(&sts, 8, "s_ts") < 0 || check_items(&sdur, 8, "s_dur") < 0 ||
        check_items(&sev, 4, "s_event") < 0 || check_items(&spar, 4, "s_parent") < 0 ||
        int_size_ok(&th, th_size, "th") < 0 || int_size_ok(&qth, th_size, "q_thread") < 0 ||
        check_items(&qts, 8, "q_ts") < 0 || int_size_ok(&qev, q_size, "q_event") < 0 ||
        check_items(&out, 4, "out") < 0)
        goto done;
    {
        const Py_ssize_t n = sts.len / 8, m = qts.len / 8, nth = th.len / th_size;
        /* out: int64, or int32 (4 bytes a query fewer; the slices' rows are int32 anyway) */
        const int wide_out = out.len != 4 * m;
        const Py_ssize_t n_qth = qth.len / th_size;
        if (sdur.len / 8 != n || sev.len / 4 != n || spar.len / 4 != n || (!thread_by_event && n_qth != m) ||
            qev.len / q_size != m || (wide_out && out.len != 8 * m)) {
            PyErr_SetString(PyExc_ValueError, "bind_to_slices: columns differ in length");
            goto done;
        }
        if (!wide_out && n >= (Py_ssize_t)1 << 31) {
            PyErr_SetString(PyExc_ValueError, "bind_to_slices: int32 rows of 2**31 slices or more");
            goto done;
        }
        const int64_t *s_ts = (const int64_t *)sts.buf, *s_dur = (const int64_t *)sdur.buf;
        const int32_t *s_ev = (const int32_t *)sev.buf, *s_par = (const int32_t *)spar.buf;
        int64_t *o = wide_out ? (int64_t *)out.buf : NULL;
        int32_t *o32 = wide_out ? NULL : (int32_t *)out.buf;
        int status = ST_OK;
        int64_t tmin = 0, tmax = -1;
        /* the threads' value range, and every slice's event row in range (one-byte threads, a code
           column's: their whole range, 256 values, not read here: a walk over the codes fewer) */
        Py_BEGIN_ALLOW_THREADS
        if (th_size == 1 && n) {
            tmin = INT8_MIN;
            tmax = INT8_MAX;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (s_ev[i] < 0 || s_ev[i] >= nth)
                status = ST_FALLBACK;
            else if (th_size != 1) {
                int64_t t = int_at(th.buf, th_size, s_ev[i]);
                if (i == 0 || t < tmin)
                    tmin = t;
                if (i == 0 || t > tmax)
                    tmax = t;
            }
            if (status)
                break;
        }
        Py_END_ALLOW_THREADS
        /* (the difference in unsigned arithmetic: defined for any two int64) */
        if (!status && n && (uint64_t)tmax - (uint64_t)tmin >= (uint64_t)1 << 24)
            status = ST_FALLBACK;
        Py_ssize_t span = n && !status ? (Py_ssize_t)((uint64_t)tmax - (uint64_t)tmin) + 1 : 0;
        if (!status && span) {
            lo = PyMem_Calloc((size_t)span, sizeof(Py_ssize_t));
            hi = PyMem_Calloc((size_t)span, sizeof(Py_ssize_t));
            cur = PyMem_Calloc((size_t)span, sizeof(Py_ssize_t));
            if (!lo || !hi || !cur) {
                PyErr_NoMemory();
                goto done;
            }
        }
        if (status) {
            result = PyLong_FromLong(status);
            goto done;
        }
        int bad_row = 0;
        Py_BEGIN_ALLOW_THREADS
        /* each thread's row range, the order checked: (thread, ts) non-decreasing, each thread one run */
        int64_t prev_t = 0;
        for (Py_ssize_t i = 0; i < n && !status; i++) {
            int64_t t = int_at(th.buf, th_size, s_ev[i]);
            Py_ssize_t k = (Py_ssize_t)(t - tmin);
            if (i == 0 || t != prev_t) {
                if ((i && t < prev_t) || hi[k] != 0)
                    status = ST_FALLBACK;
                lo[k] = cur[k] = i;
            } else if (s_ts[i] < s_ts[i - 1])
                status = ST_FALLBACK;
            hi[k] = i + 1;
            int32_t p = s_par[i];
            if (p >= n)
                status = ST_FALLBACK;
            prev_t = t;
        }
        for (Py_ssize_t q = 0; q < m && !status; q++) {
            int64_t ev = int_at(qev.buf, q_size, q);
            if (thread_by_event && (ev < 0 || ev >= n_qth)) {
                bad_row = 1;
                break;
            }
            int64_t t = int_at(qth.buf, th_size, thread_by_event ? (Py_ssize_t)ev : q);
            int64_t ts = ((const int64_t *)qts.buf)[q];
            int64_t cand = -1;
            if (t >= tmin && t <= tmax && hi[t - tmin] > 0) {
                Py_ssize_t k = (Py_ssize_t)(t - tmin), a = lo[k];
                Py_ssize_t ub = upper_gallop(s_ts, a, hi[k], ts, cur[k]);
                cur[k] = ub;
                Py_ssize_t c = ub - 1;
                /* same timestamp, but the slice's begin record comes later in the file: not open yet */
                while (c >= a && s_ts[c] == ts && (int64_t)s_ev[c] > ev)
                    c--;
                cand = c >= a ? c : -1;
                /* up the parents while the candidate ended before the query (a chain is at most n long) */
                Py_ssize_t steps = 0;
                while (cand >= 0 && (int64_t)((uint64_t)s_ts[cand] + (uint64_t)s_dur[cand]) < ts) {
                    cand = s_par[cand];
                    if (++steps > n) {
                        status = ST_FALLBACK;
                        break;
                    }
                }
            }
            if (o)
                o[q] = cand;
            else
                o32[q] = (int32_t)cand;
        }
        Py_END_ALLOW_THREADS
        if (bad_row)
            PyErr_SetString(PyExc_ValueError, "bind_to_slices: a query's event row is out of range");
        else
            result = PyLong_FromLong(status);
    }
done:
    PyMem_Free(lo);
    PyMem_Free(hi);
    PyMem_Free(cur);
    PyBuffer_Release(&sts);
    PyBuffer_Release(&sdur);
    PyBuffer_Release(&sev);
    PyBuffer_Release(&spar);
    PyBuffer_Release(&th);
    PyBuffer_Release(&qth);
    PyBuffer_Release(&qts);
    PyBuffer_Release(&qev);
    PyBuffer_Release(&out);
    return result;
}

/* ----------------------------------------------------------------------------------------- flow table */

/* An array of n items of `size` bytes (zeroed when asked), freed with big_free(): a large one aligned to 2 MB
   and advised to the kernel as huge pages (its probes and scatters are random over tens of megabytes: with
   4 KB pages nearly each one also missed the TLB; measured at 30M events, the walk's CPU 0.20 -> 0.12 s).
   On Linux a large one is a mapping of its own (zeroed by the kernel, no memset), given back to the system
   when freed: from the allocator's heap (arrays below its 32 MB mmap threshold, core/freed_memory.py) its
   pages stayed resident after the free while the build holds freed memory, under the step beside it
   (the load's peak). A header before the array says how it was made. NULL when n * size overflows or
   memory is short. */
#define BIG_HEADER 64
typedef struct {
    void *base;   /* what malloc or mmap returned */
    size_t total; /* bytes mapped (0: malloc'd) */
} BigHeader;

static void *big_array(size_t n, size_t size, int zero)
{
    const size_t huge = (size_t)2 << 20;
    if (n == 0)
        n = 1;
    if (n > (SIZE_MAX - 2 * huge - BIG_HEADER) / size)
        return NULL;
    const size_t bytes = n * size;
#if defined(__linux__)
    if (bytes >= huge) {
        const size_t total = bytes + 2 * huge; /* (room to align the array, its header before it) */
        char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            return NULL;
        char *p = (char *)(((uintptr_t)base + BIG_HEADER + huge - 1) & ~(uintptr_t)(huge - 1));
#if defined(MADV_HUGEPAGE)
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* (advice: without it, or refused, 4 KB pages) */
#endif
        BigHeader *h = (BigHeader *)(p - BIG_HEADER);
        h->base = base;
        h->total = total;
        return p;
    }
#endif
    char *base = zero ? calloc(bytes + BIG_HEADER, 1) : malloc(bytes + BIG_HEADER);
    if (!base)
        return NULL;
    BigHeader *h = (BigHeader *)base;
    h->base = base;
    h->total = 0;
    return base + BIG_HEADER;
}

/* Free an array of big_array (NULL: nothing). */
static void big_free(void *p)
{
    if (!p)
        return;
    const BigHeader *h = (const BigHeader *)((char *)p - BIG_HEADER);
#if defined(__linux__)
    if (h->total) {
        (void)munmap(h->base, h->total);
        return;
    }
#endif
    free(h->base);
}

/* One slot of an open-addressing table: keyed by fid (the flows' ids table: the process in the slot is the
   first process that began the id) or by (fid, process) (the other processes' flows of an id). 16 bytes,
   the process in the slot itself (a rank, not its koid: no read elsewhere per probe; a dense table's slot is the
   state alone, 8 bytes: its place is its id); the flags are the
   top bits (positions and ranks are below 2**31). The state of the flow keyed by it: active, and its link
   source `src`. */
typedef struct {
    uint32_t src;  /* bit 31: the flow is active */
    uint32_t proc; /* process rank + 1 (0: the slot is empty); bit 31: another process began the id (ids table) */
} FlowState;

typedef struct {
    uint64_t fid;
    FlowState st;
} Slot;

/* The slot that holds flow state `st` of a hashed table. */
#define SLOT_OF(state) ((Slot *)((char *)(state) - offsetof(Slot, st)))

#define FLAG_BIT 0x80000000u
#define POS_MASK 0x7FFFFFFFu

typedef struct {
    Slot *slots;
    size_t cap, count; /* (cap: any size, the hash mapped onto it by a multiply: no power of two's slack) */
    int by_proc;       /* the key includes the process */
    /* dense (the ids table only): the ids begun span at most `cap` values from `base`: id f's slot is
       slots[f - base], no hashing (ids counted up as flows begin, as tracers make them: the walk then
       reads the table in order, not at random); an id outside has none (`none`: empty, never written) */
    int dense;
    uint64_t base;
    FlowState *dense_slots; /* (dense: the state alone, 8 bytes a slot: the id is the slot's place) */
    FlowState none;
} Table;

/* The home slot of (fid, proc) in a table of `cap` slots: a multiplicative hash's high bits, scaled. */
static inline size_t slot_home(uint64_t fid, uint32_t proc, int by_proc, size_t cap)
{
    uint64_t h = fid * 0x9E3779B97F4A7C15ull;
    if (by_proc)
        h ^= ((uint64_t)proc + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
#if defined(__SIZEOF_INT128__)
    return (size_t)(((unsigned __int128)h * cap) >> 64);
#else
    return (size_t)(h % cap);
#endif
}

/* A table for `want` keys at a load of 2/3 at most (linear probes stay within a cache line or two). */
static int table_init(Table *t, size_t want, int by_proc)
{
    size_t cap = want + want / 2 + 1;
    if (cap < 1024)
        cap = 1024;
    t->slots = big_array(cap, sizeof(Slot), 1);
    t->cap = cap;
    t->count = 0;
    t->by_proc = by_proc;
    return t->slots ? 0 : -1;
}

/* The slot of (fid, proc rank + 1 = `p1`), or the empty slot where it goes. */
static inline FlowState *table_find(Table *t, uint64_t fid, uint32_t p1)
{
    if (t->dense)
        return fid - t->base < t->cap ? &t->dense_slots[fid - t->base] : &t->none;
    size_t i = slot_home(fid, p1, t->by_proc, t->cap);
    for (;;) {
        Slot *s = &t->slots[i];
        if (!s->st.proc || (s->fid == fid && (!t->by_proc || (s->st.proc & POS_MASK) == p1)))
            return &s->st;
        if (++i == t->cap)
            i = 0;
    }
}

static int table_grow(Table *t)
{
    Table bigger = {0}; /* (not dense: every field set; it was left to the stack's contents before) */
    if (table_init(&bigger, t->cap, t->by_proc) < 0)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].st.proc)
            *SLOT_OF(table_find(&bigger, t->slots[i].fid, t->slots[i].st.proc & POS_MASK)) = t->slots[i];
    bigger.count = t->count;
    big_free(t->slots);
    *t = bigger;
    return 0;
}

/* The slot of (fid, p1), inserted (inactive, made by process p1) when absent; NULL when out of memory. */
static inline FlowState *table_add(Table *t, uint64_t fid, uint32_t p1)
{
    FlowState *s = table_find(t, fid, p1);
    if (s->proc)
        return s;
    if (t->dense) {
        if (s == &t->none) /* (no caller adds an id outside the span it measured) */
            return NULL;
    } else if (3 * (t->count + 1) > 2 * t->cap) {
        if (table_grow(t) < 0)
            return NULL;
        s = table_find(t, fid, p1);
    }
    if (!t->dense)
        SLOT_OF(s)->fid = fid;
    s->proc = p1;
    s->src = 0;
    t->count++;
    return s;
}

/* The links' sort key within one group of source slices: (source slice, source time, key process, id),
   ties kept in link order. */
typedef struct {
    const int64_t *ts;
    const uint64_t *fid;
    const int32_t *bound;
    const uint32_t *a, *b, *proc;
} LinkKeys;

static inline int link_before(const LinkKeys *k, uint32_t x, uint32_t y)
{
    const int32_t sx = k->bound[k->a[x]], sy = k->bound[k->a[y]];
    if (sx != sy)
        return sx < sy;
    const int64_t tx = k->ts[k->a[x]], ty = k->ts[k->a[y]];
    if (tx != ty)
        return tx < ty;
    if (k->proc[x] != k->proc[y])
        return k->proc[x] < k->proc[y];
    return k->fid[k->b[x]] < k->fid[k->b[y]];
}

/* Sort v[0..n) of link numbers by link_before, stably: by insertion when short, else by merging runs
   through `tmp` (n items). */
static void sort_links(const LinkKeys *k, uint32_t *v, size_t n, uint32_t *tmp)
{
    if (n <= 32 || !tmp) {
        for (size_t j = 1; j < n; j++) {
            const uint32_t x = v[j];
            size_t q = j;
            while (q > 0 && link_before(k, x, v[q - 1])) {
                v[q] = v[q - 1];
                q--;
            }
            v[q] = x;
        }
        return;
    }
    for (size_t a = 0; a < n; a += 16) /* runs of 16 by insertion, then merged pairwise */
        sort_links(k, v + a, n - a < 16 ? n - a : 16, NULL);
    uint32_t *src = v, *dst = tmp;
    for (size_t w = 16; w < n; w *= 2) {
        for (size_t a = 0; a < n; a += 2 * w) {
            size_t m = a + w < n ? a + w : n, e = a + 2 * w < n ? a + 2 * w : n, i = a, j = m, o = a;
            while (i < m && j < e)
                dst[o++] = link_before(k, src[j], src[i]) ? src[j++] : src[i++];
            while (i < m)
                dst[o++] = src[i++];
            while (j < e)
                dst[o++] = src[j++];
        }
        uint32_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != v)
        memcpy(v, src, n * sizeof(uint32_t));
}

PyDoc_STRVAR(flow_table_doc,
"flow_table(kind, fid, proc, ranks, bound, ts, event, slice_ts, begin, step, end, src_slice, dst_slice, src_event, dst_event, by_dst[, want_by_dst[, by_event]])\n"
"    -> (links, unbound, ambiguous, without_start, duplicate_begin)\n\n"
"The flow links of flow events given in time order, as fxscope.core.trace.flows builds them with numpy\n"
"(_key_process, _links, _table) in one walk and two counting sorts. Per event: kind uint8, fid uint64 (the\n"
"flow id), proc int32 (its process's rank among the processes' koids: the key's process, ordered as the\n"
"koids; or uint8, a code whose rank is ranks[code], ranks int32), bound int32 (its slice row, -1: unbound,\n"
"skipped and counted), ts int64, event int32 (its event row); slice_ts int64 the slices' starts. A step or end takes the key (its process, id) when its process\n"
"began a flow of that id before it, else (the process that did, id) when exactly one did (several:\n"
"ambiguous; none: without start); per key, a begin starts a flow when none is active (else it is a\n"
"duplicate), a step links the flow's source to it and becomes the source, an end links and ends the flow.\n"
"Each link points from the earlier slice (by start) to the later one; the links are written (int32 outputs,\n"
"room for a link per bound step and end) sorted by (source slice, source time, key process, id), ties by\n"
"destination, and by_dst = their stable order by destination slice (with want_by_dst False, by_dst may be\n"
"empty and is not written: the counting sort by destination not made). The links are kept in the outputs\n"
"themselves while they are made (no temporary a link: the step's peak). by_event bit 1: kind is the whole\n"
"event column, each flow event's kind kind[event]; bit 2: proc is the whole uint8 code column, each flow\n"
"event's code proc[event] (no gathered copies; the event rows checked).\n"
"Raises ValueError for columns of\n"
"different lengths, outputs too short, a slice row or process rank out of range; MemoryError.");

static PyObject *flow_table(PyObject *self, PyObject *args)
{
    Py_buffer kb, fb, pb, rb, bb, tb, eb, sb, o1, o2, o3, o4, o5;
    int k_begin, k_step, k_end, want_by_dst = 1, by_event = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*iiiw*w*w*w*w*|pi", &kb, &fb, &pb, &rb, &bb, &tb, &eb, &sb, &k_begin,
                          &k_step, &k_end, &o1, &o2, &o3, &o4, &o5, &want_by_dst, &by_event))
        return NULL;
    PyObject *result = NULL;
    Table first = {0}, others = {0};
    uint32_t *counts = NULL, *tmp = NULL, *spare = NULL;
    if (check_items(&fb, 8, "fid") < 0 || check_items(&rb, 4, "ranks") < 0 || check_items(&bb, 4, "bound") < 0 ||
        check_items(&tb, 8, "ts") < 0 || check_items(&eb, 4, "event") < 0 || check_items(&sb, 8, "slice_ts") < 0 ||
        check_items(&o1, 4, "src_slice") < 0 || check_items(&o2, 4, "dst_slice") < 0 ||
        check_items(&o3, 4, "src_event") < 0 || check_items(&o4, 4, "dst_event") < 0 ||
        check_items(&o5, 4, "by_dst") < 0)
        goto done;
    {
        /* by_event: the kinds (1) and the process codes (2) are whole event columns read through the event
           rows (no gathered copies) */
        const int kind_by_event = by_event & 1, code_by_event = (by_event & 2) != 0;
        const Py_ssize_t m = kind_by_event ? eb.len / 4 : kb.len, n_kinds = kb.len, n_codes = pb.len;
        const Py_ssize_t n_slices = sb.len / 8, cap = o1.len / 4, n_ranks = rb.len / 4;
        const int coded = code_by_event || pb.len == m; /* (else int32 ranks: 4 bytes an event) */
        if (fb.len / 8 != m || (!coded && pb.len != 4 * m) || bb.len / 4 != m || tb.len / 8 != m || eb.len / 4 != m ||
            o2.len / 4 != cap || o3.len / 4 != cap || o4.len / 4 != cap ||
            (o5.len / 4 != cap && (want_by_dst || o5.len != 0))) {
            PyErr_SetString(PyExc_ValueError, "flow_table: columns differ in length");
            goto done;
        }
        if (m >= (Py_ssize_t)1 << 31 || n_slices >= (Py_ssize_t)1 << 31) {
            PyErr_SetString(PyExc_ValueError, "flow_table: 2**31 flow events or slices or more");
            goto done;
        }
        const uint8_t *kind = (const uint8_t *)kb.buf;
        const uint64_t *fid = (const uint64_t *)fb.buf;
        const int32_t *event = (const int32_t *)eb.buf, *bound = (const int32_t *)bb.buf, *ranks = (const int32_t *)rb.buf;
        const uint8_t *code = coded ? (const uint8_t *)pb.buf : NULL;
        const int32_t *rank = coded ? NULL : (const int32_t *)pb.buf;
        const int64_t *ts = (const int64_t *)tb.buf, *s_ts = (const int64_t *)sb.buf;
        int32_t *src_slice = (int32_t *)o1.buf, *dst_slice = (int32_t *)o2.buf;
        int32_t *src_event = (int32_t *)o3.buf, *dst_event = (int32_t *)o4.buf, *by_dst = (int32_t *)o5.buf;
        Py_ssize_t begins = 0, follows = 0;
        uint64_t fid_lo = 0, fid_hi = 0; /* the ids begun (bound) span these */
        const char *bad = NULL;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t r = 0; r < n_ranks && !bad; r++)
            if (ranks[r] < 0 || ranks[r] >= (int32_t)POS_MASK)
                bad = "flow_table: a process rank is out of range";
#define KIND_OF(i) (kind_by_event ? kind[event[i]] : kind[i])
#define CODE_OF(i) (code_by_event ? code[event[i]] : code[i])
        for (Py_ssize_t i = 0; i < m && !bad; i++) {
            if ((kind_by_event && (event[i] < 0 || event[i] >= n_kinds)) ||
                (code_by_event && (event[i] < 0 || event[i] >= n_codes)))
                bad = "flow_table: an event row is out of range";
            else if (bound[i] < -1 || bound[i] >= n_slices)
                bad = "flow_table: a slice row is out of range";
            else if (coded ? CODE_OF(i) >= n_ranks : rank[i] < 0 || rank[i] >= (int32_t)POS_MASK)
                bad = "flow_table: a process rank is out of range";
            else if (bound[i] >= 0) {
                const int k = KIND_OF(i);
                if (k == k_begin) {
                    if (!begins || fid[i] < fid_lo)
                        fid_lo = fid[i];
                    if (!begins || fid[i] > fid_hi)
                        fid_hi = fid[i];
                    begins++;
                }
                follows += k == k_step || k == k_end;
            }
        }
        Py_END_ALLOW_THREADS
        if (!bad && follows > cap)
            bad = "flow_table: the outputs do not hold a link per bound step and end";
        if (bad) {
            PyErr_SetString(PyExc_ValueError, bad);
            goto done;
        }
        int oom = 0;
        Py_ssize_t links = 0, unbound = 0, ambiguous = 0, no_start = 0, without = 0, duplicate = 0;
        Py_BEGIN_ALLOW_THREADS
        /* each link (source position, destination position, key process) kept in the outputs until
           they are written: src_event, dst_event, dst_slice (no array a link of the kernel's own) */
        uint32_t *la = (uint32_t *)src_event, *lb = (uint32_t *)dst_event, *lp = (uint32_t *)dst_slice;
        /* the ids table dense when the ids begun span no more slots than hashing them would take */
        const size_t want = (size_t)begins + (size_t)begins / 2 + 1;
        if (begins && fid_hi - fid_lo < want) {
            first.dense = 1;
            first.base = fid_lo;
            first.cap = (size_t)(fid_hi - fid_lo) + 1;
            first.dense_slots = big_array(first.cap, sizeof(FlowState), 1);
            oom = !first.dense_slots;
        } else
            oom = table_init(&first, (size_t)begins, 0) < 0;
        oom = oom || table_init(&others, 16, 1) < 0;
        /* the walk: each flow event's key, each link (source, destination, key process) by destination */
        for (Py_ssize_t i = 0; i < m && !oom; i++) {
#if defined(__GNUC__)
            if (i + 16 < m && !first.dense) /* a large hashed table's probes are random: fetch ahead */
                __builtin_prefetch(&first.slots[slot_home(fid[i + 16], 0, 0, first.cap)]);
#endif
            if (bound[i] < 0) {
                unbound++;
                continue;
            }
            const uint64_t f = fid[i];
            const uint32_t p1 = (uint32_t)(coded ? ranks[CODE_OF(i)] : rank[i]) + 1;
            const int k = KIND_OF(i);
            FlowState *s;
            if (k == k_begin) {
                FlowState *e = table_add(&first, f, p1); /* (made here: this process is the id's first) */
                if (!e) {
                    oom = 1;
                    break;
                }
                if ((e->proc & POS_MASK) == p1)
                    s = e;
                else {
                    e->proc |= FLAG_BIT;
                    if (!(s = table_add(&others, f, p1))) {
                        oom = 1;
                        break;
                    }
                }
                if (s->src & FLAG_BIT)
                    duplicate++;
                else
                    s->src = (uint32_t)i | FLAG_BIT;
                continue;
            }
            if (k != k_step && k != k_end)
                continue;
            FlowState *e = table_find(&first, f, 0);
            if (!e->proc) {
                no_start++;
                continue;
            }
            if ((e->proc & POS_MASK) == p1)
                s = e;
            else {
                s = others.count ? table_find(&others, f, p1) : NULL;
                if (!s || !s->proc) {
                    if (e->proc & FLAG_BIT) {
                        ambiguous++;
                        continue;
                    }
                    s = e;
                }
            }
            if (!(s->src & FLAG_BIT)) {
                without++;
                continue;
            }
            la[links] = s->src & POS_MASK;
            lb[links] = (uint32_t)i;
            lp[links] = (s->proc & POS_MASK) - 1;
            links++;
            s->src = k == k_step ? (uint32_t)i | FLAG_BIT : 0;
        }
        big_free(first.slots);
        big_free(first.dense_slots);
        big_free(others.slots);
        first.slots = others.slots = NULL;
        first.dense_slots = NULL;
        /* the links counted by groups of 2**sh source slices, no more groups than links (a count a slice
           was 4 bytes a slice, more than the walk's table at 30M events: the step's peak); each group's
           links then sorted by slice as well. (Allocated once the tables are gone.) */
        int sh = 0;
        while (sh < 31 && ((size_t)n_slices >> sh) > (size_t)links)
            sh++;
        const Py_ssize_t n_groups = (Py_ssize_t)((size_t)n_slices >> sh) + 1;
        if (!oom && !(counts = big_array((size_t)n_groups + 1, sizeof(uint32_t), 1)))
            oom = 1;
        if (!oom) {
            /* each link from the earlier slice; counted by source slice group */
            for (Py_ssize_t l = 0; l < links; l++) {
                if (s_ts[bound[la[l]]] > s_ts[bound[lb[l]]]) {
                    const uint32_t x = la[l];
                    la[l] = lb[l];
                    lb[l] = x;
                }
                counts[(bound[la[l]] >> sh) + 1]++;
            }
            for (Py_ssize_t k = 0; k < n_groups; k++)
                counts[k + 1] += counts[k];
            /* each link's place among its source group's (stable: in link order within a group), in
               src_slice; then the links' source positions scattered there into a spare array, their
               destination positions into the array the sources left, their key processes into the one
               those left (each an independent scatter: a cycle-following permutation in place was a chain
               of dependent cache misses, 0.2 s more at 30M events) */
            uint32_t *dest = (uint32_t *)src_slice;
            for (Py_ssize_t l = 0; l < links; l++)
                dest[l] = counts[bound[la[l]] >> sh]++;
            if (!(spare = big_array((size_t)links, sizeof(uint32_t), 0)))
                oom = 1;
            else {
                uint32_t *into = spare;
                uint32_t *from[3] = {la, lb, lp};
                for (int c = 0; c < 3; c++) {
                    for (Py_ssize_t l = 0; l < links; l++)
                        into[dest[l]] = from[c][l];
                    uint32_t *const left = from[c];
                    from[c] = into;
                    into = left;
                }
                la = from[0], lb = from[1], lp = from[2]; /* (spare, src_event, dst_event) */
            }
            /* each group's links (a run of one source group) by (slice, time, key process, id): their order
               sorted, and the run's links moved into it if that moved any */
            size_t tmp_cap = 0;
            uint32_t small[32];
            for (Py_ssize_t a = 0, b; a < links && !oom; a = b) {
                const int32_t group = bound[la[a]] >> sh;
                for (b = a + 1; b < links && bound[la[b]] >> sh == group; b++)
                    ;
                const size_t n = (size_t)(b - a);
                if (n < 2)
                    continue;
                uint32_t *v = small;
                if (n > 32) {
                    if (n > tmp_cap) {
                        PyMem_RawFree(tmp);
                        tmp_cap = n;
                        if (!(tmp = PyMem_RawMalloc(3 * tmp_cap * sizeof(uint32_t)))) {
                            oom = 1;
                            break;
                        }
                    }
                    v = tmp;
                }
                for (size_t j = 0; j < n; j++)
                    v[j] = (uint32_t)j;
                const LinkKeys keys = {ts, fid, bound, la + a, lb + a, lp + a};
                sort_links(&keys, v, n, n > 32 ? tmp + tmp_cap : NULL);
                size_t moved = 0;
                while (moved < n && v[moved] == moved)
                    moved++;
                if (moved == n)
                    continue;
                uint32_t *run[3] = {la + a, lb + a, lp + a};
                uint32_t held[32], *scratch = n > 32 ? tmp + 2 * tmp_cap : held;
                for (int c = 0; c < 3; c++) {
                    for (size_t j = 0; j < n; j++)
                        scratch[j] = run[c][v[j]];
                    memcpy(run[c], scratch, n * sizeof(uint32_t));
                }
            }
            /* the links written: slices and event rows of their positions */
            for (Py_ssize_t i = 0; i < links && !oom; i++) {
                const uint32_t x = la[i], y = lb[i];
                src_slice[i] = bound[x];
                dst_slice[i] = bound[y];
                src_event[i] = event[x];
                dst_event[i] = event[y];
            }
            if (!oom && want_by_dst) {
                /* the links by destination slice, stably (np.argsort(dst_slice, kind="stable")): a count
                   a slice (asked by the tests only) */
                big_free(counts);
                if (!(counts = big_array((size_t)n_slices + 1, sizeof(uint32_t), 1)))
                    oom = 1;
            }
            if (!oom && want_by_dst) {
                for (Py_ssize_t i = 0; i < links; i++)
                    counts[dst_slice[i] + 1]++;
                for (Py_ssize_t k = 0; k < n_slices; k++)
                    counts[k + 1] += counts[k];
                for (Py_ssize_t i = 0; i < links; i++)
                    by_dst[counts[dst_slice[i]]++] = (int32_t)i;
            }
        }
        Py_END_ALLOW_THREADS
        if (oom)
            PyErr_NoMemory();
        else
            result = Py_BuildValue("nnnnn", links, unbound, ambiguous, no_start + without, duplicate);
    }
#undef KIND_OF
#undef CODE_OF
done:
    big_free(first.slots);
    big_free(first.dense_slots);
    big_free(others.slots);
    big_free(counts);
    big_free(spare);
    PyMem_RawFree(tmp);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&o1);
    PyBuffer_Release(&o2);
    PyBuffer_Release(&o3);
    PyBuffer_Release(&o4);
    PyBuffer_Release(&o5);
    return result;
}

PyDoc_STRVAR(group_order_doc,
"group_order(group, ts, key1, key2, n_groups, order) -> status\n\n"
"The stable order of rows by (group int32, ts int64, key1 uint64, key2 uint64), ties in row order, as\n"
"np.lexsort((key2, key1, ts, group)) gives it, written to order (int64): a counting sort by group\n"
"(0 <= group < n_groups), then each group's few rows by insertion (key1 and key2 may be empty: no keys).\n"
"For rows with few per group: the flow links by source slice, the async instants by span. Returns 0, or\n"
"1 (order unspecified: the caller sorts with numpy) when a group is out of range or has more than 64 rows\n"
"(an insertion sort of those would be quadratic).");

static inline int row_before(const int64_t *ts, const uint64_t *k1, const uint64_t *k2, int64_t x, int64_t y)
{
    if (ts[x] != ts[y])
        return ts[x] < ts[y];
    if (!k1)
        return 0;
    if (k1[x] != k1[y])
        return k1[x] < k1[y];
    return k2[x] < k2[y];
}

static PyObject *group_order(PyObject *self, PyObject *args)
{
    Py_buffer sb, tb, kb_, fb, ob;
    Py_ssize_t n_groups;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nw*", &sb, &tb, &kb_, &fb, &n_groups, &ob))
        return NULL;
    PyObject *result = NULL;
    int64_t *start = NULL;
    if (check_items(&sb, 4, "group") < 0 || check_items(&tb, 8, "ts") < 0 || check_items(&kb_, 8, "key1") < 0 ||
        check_items(&fb, 8, "key2") < 0 || check_items(&ob, 8, "order") < 0)
        goto done;
    {
        const Py_ssize_t n = sb.len / 4;
        const int keys = kb_.len != 0 || fb.len != 0;
        if (tb.len / 8 != n || (keys && (kb_.len / 8 != n || fb.len / 8 != n)) || ob.len / 8 != n || n_groups < 0) {
            PyErr_SetString(PyExc_ValueError, "group_order: columns differ in length");
            goto done;
        }
        start = PyMem_RawCalloc((size_t)n_groups + 1, sizeof(int64_t));
        if (!start) {
            PyErr_NoMemory();
            goto done;
        }
        const int32_t *group = (const int32_t *)sb.buf;
        const int64_t *ts = (const int64_t *)tb.buf;
        const uint64_t *kp = keys ? (const uint64_t *)kb_.buf : NULL, *fid = keys ? (const uint64_t *)fb.buf : NULL;
        int64_t *order = (int64_t *)ob.buf;
        int status = ST_OK;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n && !status; i++) {
            if (group[i] < 0 || group[i] >= n_groups || ++start[group[i] + 1] > 64)
                status = ST_FALLBACK;
        }
        if (!status) {
            for (Py_ssize_t k = 0; k < n_groups; k++)
                start[k + 1] += start[k];
            for (Py_ssize_t i = 0; i < n; i++) /* stable: rows ascending within a slice */
                order[start[group[i]]++] = i;
            /* (start[k] is now group k's end) each group's rows by (ts, key1, key2), ties kept in order */
            int64_t a = 0;
            for (Py_ssize_t k = 0; k < n_groups; k++) {
                const int64_t b = start[k];
                for (int64_t j = a + 1; j < b; j++) {
                    const int64_t x = order[j];
                    int64_t q = j;
                    while (q > a && row_before(ts, kp, fid, x, order[q - 1])) {
                        order[q] = order[q - 1];
                        q--;
                    }
                    order[q] = x;
                }
                a = b;
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(status);
    }
done:
    PyMem_RawFree(start);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&kb_);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&ob);
    return result;
}

/* ----------------------------------------------------------------------------------------- async spans */

/* One key (category, name, correlation id) of async events with open begins: its stack of open begins
   (top: the begin's number, the ones below it in `below`) and its depth. The table holds only the keys
   with open begins (a key whose stack empties is deleted: a key of depth 0 has no state), so it stays the
   size of what is open at once, not of the trace: its probes hit the cache. */
typedef struct {
    uint64_t cid;
    int32_t cat, name;
    int32_t top;
    uint32_t depth; /* 0: the slot is empty */
} KeySlot;

typedef struct {
    KeySlot *slots;
    size_t cap, count; /* cap: a power of two */
} KeyTable;

static inline size_t key_home(const KeyTable *t, uint64_t cid, int32_t cat, int32_t name)
{
    uint64_t h = cid * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(uint32_t)cat << 32 | (uint32_t)name) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (t->cap - 1);
}

/* The slot of the key, or the empty slot where it goes. */
static inline KeySlot *key_find(const KeyTable *t, uint64_t cid, int32_t cat, int32_t name)
{
    size_t mask = t->cap - 1, i = key_home(t, cid, cat, name);
    for (;;) {
        KeySlot *s = &t->slots[i];
        if (!s->depth || (s->cid == cid && s->cat == cat && s->name == name))
            return s;
        i = (i + 1) & mask;
    }
}

static int key_table_init(KeyTable *t, size_t cap)
{
    t->slots = PyMem_RawCalloc(cap, sizeof(KeySlot));
    t->cap = cap;
    t->count = 0;
    return t->slots ? 0 : -1;
}

/* Twice the slots, the keys moved over; -1 when out of memory (the table is unchanged). */
static int key_table_grow(KeyTable *t)
{
    KeyTable bigger;
    if (key_table_init(&bigger, t->cap * 2) < 0)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        KeySlot *s = &t->slots[i];
        if (s->depth)
            *key_find(&bigger, s->cid, s->cat, s->name) = *s;
    }
    bigger.count = t->count;
    PyMem_RawFree(t->slots);
    *t = bigger;
    return 0;
}

/* Empty slot s, moving back the keys after it that its emptiness would cut from their home (linear
   probing's deletion without tombstones). */
static void key_delete(KeyTable *t, KeySlot *s)
{
    size_t mask = t->cap - 1, i = (size_t)(s - t->slots), j = i;
    for (;;) {
        j = (j + 1) & mask;
        KeySlot *n = &t->slots[j];
        if (!n->depth)
            break;
        size_t k = key_home(t, n->cid, n->cat, n->name);
        /* n stays when its home k lies cyclically in (i, j] */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        t->slots[i] = *n;
        i = j;
    }
    t->slots[i].depth = 0;
    t->count--;
}

/* ----------------------------------------------------------------------------------------- async lanes */

typedef struct {
    int64_t end;
    int32_t lane;
} Busy;

static inline void busy_push(Busy *h, Py_ssize_t *n, int64_t end, int32_t lane)
{
    Py_ssize_t i = (*n)++;
    while (i > 0) {
        Py_ssize_t up = (i - 1) / 2;
        if (h[up].end <= end)
            break;
        h[i] = h[up];
        i = up;
    }
    h[i].end = end;
    h[i].lane = lane;
}

static inline void busy_pop(Busy *h, Py_ssize_t *n)
{
    Busy last = h[--(*n)];
    Py_ssize_t i = 0, m = *n;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && h[c + 1].end < h[c].end)
            c++;
        if (last.end <= h[c].end)
            break;
        h[i] = h[c];
        i = c;
    }
    if (m)
        h[i] = last;
}

static inline void lane_push(int32_t *h, Py_ssize_t *n, int32_t lane)
{
    Py_ssize_t i = (*n)++;
    while (i > 0) {
        Py_ssize_t up = (i - 1) / 2;
        if (h[up] <= lane)
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = lane;
}

static inline int32_t lane_pop(int32_t *h, Py_ssize_t *n)
{
    int32_t top = h[0], last = h[--(*n)];
    Py_ssize_t i = 0, m = *n;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && h[c + 1] < h[c])
            c++;
        if (last <= h[c])
            break;
        h[i] = h[c];
        i = c;
    }
    if (m)
        h[i] = last;
    return top;
}

PyDoc_STRVAR(first_fit_lanes_doc,
"first_fit_lanes(group, start, end, lane) -> status\n\n"
"Greedy first-fit lanes for spans sorted by (group uint64, start int64): per group, each span takes the\n"
"lowest lane whose last span has ended by its start (end int64 <= start; touching spans share a lane),\n"
"written to lane (int32), as fxscope.core.trace.async_spans.assign_lanes lays them out: the busy lanes in a\n"
"heap by end, the free ones in a heap by number. Returns 0, or 1 (lane unspecified: the caller takes its\n"
"numpy path) when the spans are not sorted.");

static PyObject *first_fit_lanes(PyObject *self, PyObject *args)
{
    Py_buffer gb, sb, eb, lb;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &gb, &sb, &eb, &lb))
        return NULL;
    PyObject *result = NULL;
    Busy *busy = NULL;
    int32_t *free_ = NULL;
    if (check_items(&gb, 8, "group") < 0 || check_items(&sb, 8, "start") < 0 || check_items(&eb, 8, "end") < 0 ||
        check_items(&lb, 4, "lane") < 0)
        goto done;
    {
        const Py_ssize_t n = gb.len / 8;
        if (sb.len / 8 != n || eb.len / 8 != n || lb.len / 4 != n) {
            PyErr_SetString(PyExc_ValueError, "first_fit_lanes: columns differ in length");
            goto done;
        }
        if (n >= (Py_ssize_t)1 << 31) {
            PyErr_SetString(PyExc_ValueError, "first_fit_lanes: 2**31 spans or more");
            goto done;
        }
        busy = PyMem_RawMalloc(sizeof(Busy) * (size_t)(n ? n : 1));
        free_ = PyMem_RawMalloc(sizeof(int32_t) * (size_t)(n ? n : 1));
        if (!busy || !free_) {
            PyErr_NoMemory();
            goto done;
        }
        const uint64_t *group = (const uint64_t *)gb.buf;
        const int64_t *start = (const int64_t *)sb.buf, *end = (const int64_t *)eb.buf;
        int32_t *lane = (int32_t *)lb.buf;
        int status = ST_OK;
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t nbusy = 0, nfree = 0;
        int32_t used = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i == 0 || group[i] != group[i - 1]) {
                if (i && group[i] < group[i - 1]) {
                    status = ST_FALLBACK;
                    break;
                }
                nbusy = nfree = 0;
                used = 0;
            } else if (start[i] < start[i - 1]) {
                status = ST_FALLBACK;
                break;
            }
            while (nbusy && busy[0].end <= start[i]) {
                lane_push(free_, &nfree, busy[0].lane);
                busy_pop(busy, &nbusy);
            }
            const int32_t l = nfree ? lane_pop(free_, &nfree) : used++;
            lane[i] = l;
            busy_push(busy, &nbusy, end[i], l);
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(status);
    }
done:
    PyMem_RawFree(busy);
    PyMem_RawFree(free_);
    PyBuffer_Release(&gb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&lb);
    return result;
}

/* ---------------------------------------------------------------------------------- async span layout */

/* A span's place in its track's start order: (start, longer first, event row), as
   np.lexsort((event, -(end - start), start)) orders them (the negated length wrapping as numpy's int64). */
typedef struct {
    const int64_t *start, *end;
    const void *event;
    int esz;
} SpanKeys;

static inline int64_t neg_length(const SpanKeys *k, int64_t i)
{
    const uint64_t d = (uint64_t)k->end[i] - (uint64_t)k->start[i];
    return (int64_t)(0 - d);
}

/* Whether span x comes after span y in the start order. */
static inline int span_after(const SpanKeys *k, int64_t x, int64_t y)
{
    if (k->start[x] != k->start[y])
        return k->start[x] > k->start[y];
    const int64_t lx = neg_length(k, x), ly = neg_length(k, y);
    if (lx != ly)
        return lx > ly;
    return int_at(k->event, k->esz, x) > int_at(k->event, k->esz, y);
}

/* Sort v[0:n] (span numbers) stably by the start order: a natural merge sort, whose ascending runs (the
   spans of a track come in start order but for a few: the unmatched ends, ties) are merged pairwise, so
   input in order costs one comparison a span. `tmp` holds n items, `runs` n + 1. */
static void sort_spans(const SpanKeys *k, int32_t *v, int32_t *tmp, Py_ssize_t *runs, Py_ssize_t n)
{
    if (n < 2)
        return;
    Py_ssize_t nr = 0;
    runs[nr++] = 0;
    for (Py_ssize_t j = 1; j < n; j++)
        if (span_after(k, v[j - 1], v[j]))
            runs[nr++] = j;
    runs[nr] = n;
    int32_t *src = v, *dst = tmp;
    while (nr > 1) {
        Py_ssize_t w = 0;
        for (Py_ssize_t r = 0; r < nr; r += 2) {
            const Py_ssize_t a = runs[r], m = runs[r + 1 < nr ? r + 1 : nr], b = r + 1 < nr ? runs[r + 2] : m;
            Py_ssize_t i = a, j = m, o = a;
            while (i < m && j < b)
                dst[o++] = span_after(k, src[i], src[j]) ? src[j++] : src[i++];
            while (i < m)
                dst[o++] = src[i++];
            while (j < b)
                dst[o++] = src[j++];
            runs[w++] = a;
        }
        runs[w] = n;
        nr = w;
        int32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, sizeof(int32_t) * (size_t)n);
}

/* Grow a heap's storage to hold one item more (doubling). */
static int heap_room(void **h, Py_ssize_t *cap, Py_ssize_t n, size_t item)
{
    if (n < *cap)
        return 0;
    Py_ssize_t c = *cap ? 2 * *cap : 64;
    void *p = PyMem_RawRealloc(*h, item * (size_t)c);
    if (!p)
        return -1;
    *h = p;
    *cap = c;
    return 0;
}

PyDoc_STRVAR(async_layout_doc,
"async_layout(track, n_tracks, start, end, event, event_size, lane, order, row, lanes, spans) -> status\n\n"
"The lanes and row order of async spans, as fxscope.core.trace.async_spans.build_async lays them out with\n"
"numpy: span i of track track[i] (int32, 0 <= track < n_tracks: the rank of its process koid), from start[i]\n"
"to end[i] (int64; end >= start), event row event[i] (event_size bytes). Per track, in the order of\n"
"np.lexsort((event, -(end - start), start)) (a counting sort by track, then a natural merge sort: spans\n"
"nearly in start order cost a comparison each), greedy first fit: lane[i] (int32) the lowest lane whose last\n"
"span has ended by its start, as first_fit_lanes; lanes[t] (int32) the track's lane count. order (int64): the\n"
"spans by (track, lane, start), as a counting sort by lane of the start order gives them (a lane's spans in\n"
"start order); row (int32) its inverse: span i's place in order; spans[t] (int64) the track's span count.\n"
"Returns 0, or 2 when some spans of one lane share a start (their order among themselves is the caller's to\n"
"set). Raises IndexError for a track out of range, ValueError, MemoryError.");

static PyObject *async_layout(PyObject *self, PyObject *args)
{
    Py_buffer tb, sb, eb, vb, lb, ob, rb, nb, cb;
    Py_ssize_t n_tracks;
    int esz;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ny*y*y*iw*w*w*w*w*", &tb, &n_tracks, &sb, &eb, &vb, &esz, &lb, &ob, &rb, &nb, &cb))
        return NULL;
    PyObject *result = NULL;
    int32_t *ord = NULL, *tmp = NULL, *free_ = NULL;
    Py_ssize_t *runs = NULL;
    int64_t *at = NULL;
    Busy *busy = NULL;
    if (check_items(&tb, 4, "track") < 0 || check_items(&sb, 8, "start") < 0 || check_items(&eb, 8, "end") < 0 ||
        int_size_ok(&vb, esz, "event") < 0 || check_items(&lb, 4, "lane") < 0 || check_items(&ob, 8, "order") < 0 ||
        check_items(&rb, 4, "row") < 0 || check_items(&nb, 4, "lanes") < 0 || check_items(&cb, 8, "spans") < 0)
        goto done;
    {
        const Py_ssize_t n = tb.len / 4;
        if (sb.len / 8 != n || eb.len / 8 != n || vb.len / esz != n || lb.len / 4 != n || ob.len / 8 != n ||
            rb.len / 4 != n || n_tracks < 0 || nb.len / 4 != n_tracks || cb.len / 8 != n_tracks) {
            PyErr_SetString(PyExc_ValueError, "async_layout: columns differ in length");
            goto done;
        }
        if (n >= (Py_ssize_t)1 << 31) {
            PyErr_SetString(PyExc_ValueError, "async_layout: 2**31 spans or more");
            goto done;
        }
        const int32_t *track = (const int32_t *)tb.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            if (track[i] < 0 || track[i] >= n_tracks) {
                PyErr_SetString(PyExc_IndexError, "async_layout: track out of range");
                goto done;
            }
        const size_t m = (size_t)(n ? n : 1);
        ord = PyMem_RawMalloc(sizeof(int32_t) * m);
        tmp = PyMem_RawMalloc(sizeof(int32_t) * m);
        runs = PyMem_RawMalloc(sizeof(Py_ssize_t) * (m + 1));
        at = PyMem_RawCalloc((size_t)n_tracks + 1, sizeof(int64_t));
        if (!ord || !tmp || !runs || !at) {
            PyErr_NoMemory();
            goto done;
        }
        const SpanKeys keys = {(const int64_t *)sb.buf, (const int64_t *)eb.buf, vb.buf, esz};
        int32_t *lane = (int32_t *)lb.buf, *lanes = (int32_t *)nb.buf;
        int64_t *order = (int64_t *)ob.buf;
        int status = ST_OK, oom = 0;
        Py_BEGIN_ALLOW_THREADS
        /* each track's spans, in span order, then in start order */
        for (Py_ssize_t i = 0; i < n; i++)
            at[track[i] + 1]++;
        for (Py_ssize_t t = 0; t < n_tracks; t++)
            at[t + 1] += at[t];
        for (Py_ssize_t i = 0; i < n; i++)
            ord[at[track[i]]++] = (int32_t)i;
        for (Py_ssize_t t = n_tracks; t > 0; t--)
            at[t] = at[t - 1];
        at[0] = 0;
        for (Py_ssize_t t = 0; t < n_tracks; t++)
            ((int64_t *)cb.buf)[t] = at[t + 1] - at[t];
        for (Py_ssize_t t = 0; t < n_tracks; t++)
            sort_spans(&keys, ord + at[t], tmp, runs, at[t + 1] - at[t]);
        /* first fit per track (as first_fit_lanes) */
        Py_ssize_t nbusy = 0, nfree = 0, cbusy = 0, cfree = 0;
        for (Py_ssize_t t = 0; t < n_tracks && !oom; t++) {
            int32_t used = 0;
            nbusy = nfree = 0;
            for (int64_t j = at[t]; j < at[t + 1]; j++) {
                const int32_t i = ord[j];
                const int64_t s = keys.start[i];
                while (nbusy && busy[0].end <= s) {
                    if (heap_room((void **)&free_, &cfree, nfree, sizeof(int32_t)) < 0) {
                        oom = 1;
                        break;
                    }
                    lane_push(free_, &nfree, busy[0].lane);
                    busy_pop(busy, &nbusy);
                }
                if (oom || heap_room((void **)&busy, &cbusy, nbusy, sizeof(Busy)) < 0) {
                    oom = 1;
                    break;
                }
                const int32_t l = nfree ? lane_pop(free_, &nfree) : used++;
                lane[i] = l;
                busy_push(busy, &nbusy, keys.end[i], l);
            }
            lanes[t] = used;
        }
        /* by (track, lane), each lane's spans in start order: a counting sort by the lane's number among all */
        int64_t *first = NULL;
        Py_ssize_t total = 0;
        if (!oom) {
            for (Py_ssize_t t = 0; t < n_tracks; t++)
                total += lanes[t];
            first = PyMem_RawCalloc((size_t)total + 1, sizeof(int64_t));
            oom = first == NULL;
        }
        if (!oom) {
            int64_t base = 0;
            for (Py_ssize_t t = 0; t < n_tracks; t++) {
                for (int64_t j = at[t]; j < at[t + 1]; j++)
                    first[base + lane[ord[j]] + 1]++;
                base += lanes[t];
            }
            for (Py_ssize_t g = 0; g < total; g++)
                first[g + 1] += first[g];
            base = 0;
            for (Py_ssize_t t = 0; t < n_tracks; t++) {
                for (int64_t j = at[t]; j < at[t + 1]; j++)
                    order[first[base + lane[ord[j]]]++] = ord[j];
                base += lanes[t];
            }
            for (Py_ssize_t j = 0; j < n; j++)
                ((int32_t *)rb.buf)[order[j]] = (int32_t)j;
            /* (first[g] is now lane g's end) */
            int64_t a = 0;
            for (Py_ssize_t g = 0; g < total && !status; g++) {
                for (int64_t j = a + 1; j < first[g]; j++)
                    if (keys.start[order[j]] == keys.start[order[j - 1]]) {
                        status = 2;
                        break;
                    }
                a = first[g];
            }
            PyMem_RawFree(first);
        }
        Py_END_ALLOW_THREADS
        if (oom)
            PyErr_NoMemory();
        else
            result = PyLong_FromLong(status);
    }
done:
    PyMem_RawFree(ord);
    PyMem_RawFree(tmp);
    PyMem_RawFree(runs);
    PyMem_RawFree(at);
    PyMem_RawFree(busy);
    PyMem_RawFree(free_);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&cb);
    return result;
}

PyDoc_STRVAR(async_instant_order_doc,
"async_instant_order(pos, begin_row, ts, n_spans, span, order) -> status\n\n"
"The async instants given in time order (ts int64, ascending) bound to the spans their keys have open, as\n"
"fxscope.core.trace.async_spans._bind_instants binds them: span[i] (int32) = begin_row[pos[i]] (pos int64,\n"
"begin_row int32, 0 <= begin_row < n_spans), the table row of the innermost span of its key open at it; order (int64) the\n"
"instants by (span, ts), ties in time order, as np.lexsort((ts, span)) (a counting sort by span). Returns 0,\n"
"2 when some instants of one span share a time (their order among themselves is the caller's to set), or 1\n"
"(outputs unspecified: the caller's numpy path) when an instant has no open span (pos < 0: the caller's\n"
"search by id decides), a position or row is out of range, or the times are not ascending.");

static PyObject *async_instant_order(PyObject *self, PyObject *args)
{
    Py_buffer pb, bb, tb, sb, ob;
    Py_ssize_t n_spans;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*nw*w*", &pb, &bb, &tb, &n_spans, &sb, &ob))
        return NULL;
    PyObject *result = NULL;
    int64_t *first = NULL;
    if (check_items(&pb, 8, "pos") < 0 || check_items(&bb, 4, "begin_row") < 0 || check_items(&tb, 8, "ts") < 0 ||
        check_items(&sb, 4, "span") < 0 || check_items(&ob, 8, "order") < 0)
        goto done;
    {
        const Py_ssize_t m = pb.len / 8, nb = bb.len / 4;
        if (tb.len / 8 != m || sb.len / 4 != m || ob.len / 8 != m || n_spans < 0 || n_spans >= (Py_ssize_t)1 << 31) {
            PyErr_SetString(PyExc_ValueError, "async_instant_order: columns differ in length");
            goto done;
        }
        first = PyMem_RawCalloc((size_t)n_spans + 1, sizeof(int64_t));
        if (!first) {
            PyErr_NoMemory();
            goto done;
        }
        const int64_t *pos = (const int64_t *)pb.buf;
        const int32_t *begin_row = (const int32_t *)bb.buf;
        const int64_t *ts = (const int64_t *)tb.buf;
        int32_t *span = (int32_t *)sb.buf;
        int64_t *order = (int64_t *)ob.buf;
        int status = ST_OK;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m && status == ST_OK; i++) {
            const int64_t p = pos[i];
            const int64_t row = p >= 0 && p < nb ? begin_row[p] : -1;
            if (row < 0 || row >= n_spans || (i && ts[i] < ts[i - 1]))
                status = ST_FALLBACK;
            else {
                span[i] = (int32_t)row;
                first[row + 1]++;
            }
        }
        if (status == ST_OK) {
            for (Py_ssize_t g = 0; g < n_spans; g++)
                first[g + 1] += first[g];
            for (Py_ssize_t i = 0; i < m; i++) /* stable: each span's instants in time order */
                order[first[span[i]]++] = i;
            for (Py_ssize_t j = 1; j < m; j++)
                if (span[order[j]] == span[order[j - 1]] && ts[order[j]] == ts[order[j - 1]]) {
                    status = 2;
                    break;
                }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(status);
    }
done:
    PyMem_RawFree(first);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ob);
    return result;
}

static inline void int_put(void *buf, int isz, Py_ssize_t i, int64_t v)
{
    if (isz == 4)
        ((int32_t *)buf)[i] = (int32_t)v;
    else
        ((int64_t *)buf)[i] = v;
}

/* A category or name key of a 1-, 2- or 4-byte column (its size checked by the caller). */
static inline __attribute__((always_inline)) int32_t key_at(const void *buf, int isz, int64_t i)
{
    return isz == 1 ? ((const int8_t *)buf)[i] : isz == 2 ? ((const int16_t *)buf)[i] : ((const int32_t *)buf)[i];
}

/* a[lo:lo+n] reversed, then moved to a[to:to+n] (to <= lo) */
#define MOVE_REVERSED(a, T, lo, n, to)                                                                          \
    do {                                                                                                     \
        for (Py_ssize_t x_ = (lo), y_ = (lo) + (n)-1; x_ < y_; x_++, y_--) {                                 \
            T t_ = (a)[x_];                                                                                  \
            (a)[x_] = (a)[y_];                                                                               \
            (a)[y_] = t_;                                                                                    \
        }                                                                                                    \
        memmove(&(a)[to], &(a)[lo], sizeof(T) * (size_t)(n));                                                \
    } while (0)

/* What async_spans carries from one block of events to the next (async_state makes it, async_spans_end
   ends it): the open keys, each begin's next one down its key's stack, the counts of the outputs written
   so far, the last time walked (the blocks must come in time order), and the events the outputs have
   room for. */
typedef struct {
    KeyTable keys;
    int32_t *below;
    Py_ssize_t room;  /* events, at most, over all blocks (the outputs' rows) */
    Py_ssize_t seen;  /* events walked so far */
    Py_ssize_t nbeg, nu, ji;
    int64_t last_ts;
    int ended;
    int busy; /* a call is walking it (with the GIL released): another call on it is refused */
} AsyncState;

#define ASYNC_STATE "fxscope.span_kernels.AsyncState"

static void async_state_free(PyObject *capsule)
{
    AsyncState *st = (AsyncState *)PyCapsule_GetPointer(capsule, ASYNC_STATE);
    if (!st)
        return;
    PyMem_RawFree(st->keys.slots);
    PyMem_RawFree(st->below);
    PyMem_RawFree(st);
}

PyDoc_STRVAR(async_state_doc,
"async_state(n) -> state\n\n"
"The walk state of async_spans for at most n async events in all (its outputs must have room for n rows).");

static PyObject *async_state(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "n", &n))
        return NULL;
    if (n < 0 || n >= (Py_ssize_t)1 << 31) {
        PyErr_SetString(PyExc_ValueError, "async_state: a negative count, or 2**31 events or more");
        return NULL;
    }
    AsyncState *st = PyMem_RawCalloc(1, sizeof(AsyncState));
    if (!st)
        return PyErr_NoMemory();
    st->room = n;
    st->last_ts = INT64_MIN;
    st->below = PyMem_RawMalloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!st->below || key_table_init(&st->keys, 1024) < 0) {
        PyMem_RawFree(st->below);
        PyMem_RawFree(st->keys.slots);
        PyMem_RawFree(st);
        return PyErr_NoMemory();
    }
    PyObject *capsule = PyCapsule_New(st, ASYNC_STATE, async_state_free);
    if (!capsule) {
        PyMem_RawFree(st->below);
        PyMem_RawFree(st->keys.slots);
        PyMem_RawFree(st);
    }
    return capsule;
}

/* The walk state of a capsule made by async_state, not ended nor in use by another call (checked and
   marked busy with the GIL held: the caller clears busy when done), else NULL with an error set. */
static AsyncState *async_state_of(PyObject *capsule)
{
    AsyncState *st = (AsyncState *)PyCapsule_GetPointer(capsule, ASYNC_STATE);
    if (st && (st->ended || st->busy)) {
        PyErr_SetString(PyExc_ValueError, st->ended ? "async_spans: the walk was ended" : "async_spans: the walk is in use by another call");
        return NULL;
    }
    if (st)
        st->busy = 1;
    return st;
}

PyDoc_STRVAR(async_spans_doc,
"async_spans(state, kind, rows, rows_size, cat, cat_size, name, name_size, name_base, cid, ts, thread, thread_size,\n"
"            track_of, thread_offset, begin, instant, end, trace_start, s_start, s_end, s_flags, s_event,\n"
"            s_end_event, s_id, s_level, s_track, i_event, i_ts, i_cid, i_open) -> walked\n\n"
"One block of the async events, given in time order (rows: their event rows, of rows_size bytes, 4 or 8;\n"
"kind: the reader's ev_kind, uint8, read at the rows; the key of event i is (cat[rows[i]], name[rows[i] -\n"
"name_base], cid[i]): the reader's ev_category and ev_name (or the rows of ev_name from row name_base on: a\n"
"block's; with name_base below 0, name[i], the names of the rows one a row: a block merged from several parts\n"
"of the file), of their item sizes, and the uint64 ids; ts int64 their times), walked on from the blocks before it in\n"
"`state` (async_state's), matched as fxscope.core.trace.async_spans._KeyMarkers and _pair do with numpy:\n"
"per key a stack of open begins; an end closes the top one, or is unmatched when the stack is empty. The\n"
"spans, as _spans lays them out once async_spans_end has ended the walk: the j-th begin's at j, the u-th\n"
"unmatched end's after the begins: s_start, s_end (int64: the begin's time, or trace_start for an unmatched\n"
"end; the closing end's time, or the unclosed end async_spans_end writes; the start clipped to the end),\n"
"s_flags (uint8: 2 unclosed, 1 unmatched end), s_event and s_end_event (the rows of the begin and the end,\n"
"-1 for none; of rows_size bytes), s_id (uint64; empty: not written, as i_cid), s_level (int32: the depth of\n"
"the key's stack before the begin, 0 for an unmatched end), s_track (int32: track_of[thread[row] +\n"
"thread_offset], the rank of the process of the event's thread; thread of thread_size bytes, unsigned when\n"
"1; below 0: track_of[0]; IndexError past track_of). For the j-th instant: i_event (rows_size), i_ts, i_cid\n"
"and i_open (int64: the number of the begin open on top of its key's stack, -1 if none). The outputs have\n"
"room for the state's n events (the same buffers for every block; the rows past those written are left as\n"
"they are, the last ones of the span outputs used while walking). Returns False, the state then unusable\n"
"(start again with a new one), when a time is before the one walked before it (not in time order), else\n"
"True. Raises IndexError for a row outside kind, cat or name (past name_base), ValueError for outputs of the wrong size\n"
"(or names by position not one a row),\n"
"more events than the state's n or keys wider than 32 bits, MemoryError.");

static PyObject *async_spans(PyObject *self, PyObject *args)
{
    Py_buffer kb, rb, cb, nb_, ib, tb, hb, xb, o_st, o_en, o_fl, o_ev, o_ee, o_id, o_lv, o_tr, q_ev, q_ts, q_id, q_op;
    PyObject *capsule;
    int r_size, c_size, n_size, h_size, k_begin, k_instant, k_end;
    Py_ssize_t h_offset, name_base;
    long long trace_start;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oy*y*iy*iy*iny*y*y*iy*niiiLw*w*w*w*w*w*w*w*w*w*w*w*", &capsule, &kb, &rb, &r_size,
                          &cb, &c_size, &nb_, &n_size, &name_base, &ib, &tb, &hb, &h_size, &xb, &h_offset, &k_begin, &k_instant,
                          &k_end, &trace_start, &o_st, &o_en, &o_fl, &o_ev, &o_ee, &o_id, &o_lv, &o_tr, &q_ev,
                          &q_ts, &q_id, &q_op))
        return NULL;
    PyObject *result = NULL;
    AsyncState *st = async_state_of(capsule);
    if (!st)
        goto done;
    if (int_size_ok(&rb, r_size, "rows") < 0 || int_size_ok(&cb, c_size, "cat") < 0 ||
        int_size_ok(&nb_, n_size, "name") < 0 || check_items(&ib, 8, "cid") < 0 || check_items(&tb, 8, "ts") < 0 ||
        int_size_ok(&hb, h_size, "thread") < 0 || check_items(&xb, 4, "track_of") < 0 || check_items(&o_tr, 4, "s_track") < 0 ||
        check_items(&o_st, 8, "s_start") < 0 || check_items(&o_en, 8, "s_end") < 0 ||
        check_items(&o_ev, r_size, "s_event") < 0 || check_items(&o_ee, r_size, "s_end_event") < 0 ||
        check_items(&o_id, 8, "s_id") < 0 || check_items(&o_lv, 4, "s_level") < 0 ||
        check_items(&q_ev, r_size, "i_event") < 0 || check_items(&q_ts, 8, "i_ts") < 0 ||
        check_items(&q_id, 8, "i_cid") < 0 || check_items(&q_op, 8, "i_open") < 0)
        goto done;
    if (c_size > 4 || n_size > 4 || h_size > 4 || (r_size != 4 && r_size != 8)) {
        PyErr_SetString(PyExc_ValueError, "async_spans: category and name columns wider than 32 bits, or rows not 4 or 8 bytes");
        goto done;
    }
    {
        const Py_ssize_t n = rb.len / r_size, nkind = kb.len, ncat = cb.len / c_size, nname = nb_.len / n_size;
        const Py_ssize_t nthr = hb.len / h_size, ntrack = xb.len / 4;
        const Py_ssize_t nspan = o_st.len / 8, ninst = q_ts.len / 8;
        if (ib.len / 8 != n || tb.len / 8 != n || o_en.len / 8 != nspan ||
            o_fl.len != nspan || o_ev.len / r_size != nspan || o_ee.len / r_size != nspan ||
            (o_id.len && o_id.len / 8 != nspan) || o_lv.len / 4 != nspan || o_tr.len / 4 != nspan ||
            q_ev.len / r_size != ninst || (q_id.len && q_id.len / 8 != ninst) || q_op.len / 8 != ninst) {
            PyErr_SetString(PyExc_ValueError, "async_spans: columns differ in length");
            goto done;
        }
        const int by_position = name_base < 0; /* (name[i]: the names of the rows, one a row) */
        if (by_position && nname != n) {
            PyErr_SetString(PyExc_ValueError, "async_spans: names by position not one a row");
            goto done;
        }
        const uint8_t *kind = (const uint8_t *)kb.buf;
        /* (every row written is below the events walked so far, at most room: the outputs hold room rows) */
        if (nspan < st->room || ninst < st->room || n > st->room - st->seen) {
            PyErr_SetString(PyExc_ValueError, "async_spans: outputs without room for every event, or more events than the state's");
            goto done;
        }
        const uint64_t *cid = (const uint64_t *)ib.buf;
        const int64_t *ts = (const int64_t *)tb.buf;
        int64_t *s_start = (int64_t *)o_st.buf, *s_end = (int64_t *)o_en.buf;
        uint8_t *s_flags = (uint8_t *)o_fl.buf;
        /* (the ids are optional outputs: the caller may read them again for the few rows that need them) */
        uint64_t *s_id = o_id.len ? (uint64_t *)o_id.buf : NULL, *i_cid = q_id.len ? (uint64_t *)q_id.buf : NULL;
        int32_t *s_level = (int32_t *)o_lv.buf;
        int64_t *i_ts = (int64_t *)q_ts.buf, *i_open = (int64_t *)q_op.buf;
        int32_t *below = st->below;
        KeyTable *keys = &st->keys;
        Py_ssize_t nu = st->nu, ji = st->ji;
        int32_t jb = (int32_t)st->nbeg;
        int64_t last_ts = st->last_ts;
        int oom = 0, bad_row = 0, bad_thread = 0, unordered = 0;
        const int32_t *track_of = (const int32_t *)xb.buf;
        int32_t *s_track = (int32_t *)o_tr.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t r = r_size == 4 ? ((const int32_t *)rb.buf)[i] : ((const int64_t *)rb.buf)[i];
            const int64_t nr = by_position ? (int64_t)i : r - name_base;
            if (r < 0 || r >= nkind || r >= ncat || nr < 0 || nr >= nname || r >= nthr) {
                bad_row = 1;
                break;
            }
            if (ts[i] < last_ts) {
                unordered = 1;
                break;
            }
            last_ts = ts[i];
            const int k = kind[r];
            if (k != k_begin && k != k_end && k != k_instant)
                continue;
            const int32_t cat = key_at(cb.buf, c_size, r), name = key_at(nb_.buf, n_size, nr);
            KeySlot *s = key_find(keys, cid[i], cat, name);
            const uint32_t depth = s->depth;
            int32_t track = 0;
            if (k == k_begin || (k == k_end && !depth)) { /* a span's: its thread's process rank */
                const int64_t h = (h_size == 1 ? (int64_t)((const uint8_t *)hb.buf)[r] : int_at(hb.buf, h_size, r)) + h_offset;
                if (h >= ntrack) {
                    bad_thread = 1;
                    break;
                }
                track = track_of[h < 0 ? 0 : h];
            }
            if (k == k_begin) {
                if (!depth) { /* a key opening: a slot more */
                    if (2 * (keys->count + 1) > keys->cap) {
                        if (key_table_grow(keys) < 0) {
                            oom = 1;
                            break;
                        }
                        s = key_find(keys, cid[i], cat, name);
                    }
                    keys->count++;
                    s->cid = cid[i];
                    s->cat = cat;
                    s->name = name;
                }
                s_start[jb] = ts[i];
                s_end[jb] = INT64_MIN; /* (unclosed: written by async_spans_end) */
                s_flags[jb] = 2;
                int_put(o_ev.buf, r_size, jb, r);
                int_put(o_ee.buf, r_size, jb, -1);
                if (s_id)
                    s_id[jb] = cid[i];
                s_level[jb] = (int32_t)depth;
                s_track[jb] = track;
                below[jb] = depth ? s->top : -1;
                s->top = jb++;
                s->depth = depth + 1;
            } else if (k == k_end) {
                if (!depth) { /* (from the outputs' end down; moved after the begins at the end) */
                    const Py_ssize_t u = st->room - 1 - nu++;
                    s_start[u] = trace_start < ts[i] ? trace_start : ts[i];
                    s_end[u] = ts[i];
                    s_flags[u] = 1;
                    int_put(o_ev.buf, r_size, u, r);
                    int_put(o_ee.buf, r_size, u, r);
                    if (s_id)
                        s_id[u] = cid[i];
                    s_level[u] = 0;
                    s_track[u] = track;
                } else {
                    const int32_t b = s->top;
                    s_end[b] = ts[i];
                    s_flags[b] = 0;
                    int_put(o_ee.buf, r_size, b, r);
                    s->top = below[b];
                    if (depth == 1)
                        key_delete(keys, s);
                    else
                        s->depth = depth - 1;
                }
            } else {
                int_put(q_ev.buf, r_size, ji, r);
                i_ts[ji] = ts[i];
                if (i_cid)
                    i_cid[ji] = cid[i];
                i_open[ji++] = depth ? s->top : -1;
            }
        }
        Py_END_ALLOW_THREADS
        st->nbeg = jb;
        st->nu = nu;
        st->ji = ji;
        st->seen += n;
        st->last_ts = last_ts;
        if (bad_row)
            PyErr_SetString(PyExc_IndexError, "async_spans: event row out of range");
        else if (bad_thread)
            PyErr_SetString(PyExc_IndexError, "async_spans: thread out of range");
        else if (oom)
            PyErr_NoMemory();
        else {
            if (unordered)
                st->ended = 1; /* (part of a block walked: the state is no longer any walk's) */
            result = PyBool_FromLong(!unordered);
        }
        if (bad_row || bad_thread || oom)
            st->ended = 1;
    }
done:
    if (st)
        st->busy = 0;
    PyBuffer_Release(&kb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&nb_);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&o_tr);
    PyBuffer_Release(&o_st);
    PyBuffer_Release(&o_en);
    PyBuffer_Release(&o_fl);
    PyBuffer_Release(&o_ev);
    PyBuffer_Release(&o_ee);
    PyBuffer_Release(&o_id);
    PyBuffer_Release(&o_lv);
    PyBuffer_Release(&q_ev);
    PyBuffer_Release(&q_ts);
    PyBuffer_Release(&q_id);
    PyBuffer_Release(&q_op);
    return result;
}

PyDoc_STRVAR(async_spans_end_doc,
"async_spans_end(state, rows_size, trace_end, s_start, s_end, s_flags, s_event, s_end_event, s_id, s_level,\n"
"                s_track) -> (n_begins, n_unmatched, n_instants)\n\n"
"Ends the walk of async_spans (the state is then unusable): the spans' outputs (as async_spans was given\n"
"them) laid out as _spans does: the unclosed begins ended at max(trace_end, 0), each start clipped to its\n"
"end, the unmatched ends moved after the begins, in time order. Returns how many begins, unmatched ends and\n"
"instants the walk wrote.");

static PyObject *async_spans_end(PyObject *self, PyObject *args)
{
    Py_buffer o_st, o_en, o_fl, o_ev, o_ee, o_id, o_lv, o_tr;
    PyObject *capsule;
    int r_size;
    long long trace_end;
    (void)self;
    if (!PyArg_ParseTuple(args, "OiLw*w*w*w*w*w*w*w*", &capsule, &r_size, &trace_end, &o_st, &o_en, &o_fl, &o_ev,
                          &o_ee, &o_id, &o_lv, &o_tr))
        return NULL;
    PyObject *result = NULL;
    AsyncState *st = async_state_of(capsule);
    if (!st)
        goto done;
    if ((r_size != 4 && r_size != 8) || check_items(&o_st, 8, "s_start") < 0 || check_items(&o_en, 8, "s_end") < 0 ||
        check_items(&o_ev, r_size, "s_event") < 0 || check_items(&o_ee, r_size, "s_end_event") < 0 ||
        check_items(&o_id, 8, "s_id") < 0 || check_items(&o_lv, 4, "s_level") < 0 || check_items(&o_tr, 4, "s_track") < 0)
        goto done;
    {
        const Py_ssize_t nspan = o_st.len / 8;
        if (nspan < st->room || o_en.len / 8 != nspan || o_fl.len != nspan || o_ev.len / r_size != nspan ||
            o_ee.len / r_size != nspan || (o_id.len && o_id.len / 8 != nspan) || o_lv.len / 4 != nspan ||
            o_tr.len / 4 != nspan) {
            PyErr_SetString(PyExc_ValueError, "async_spans_end: outputs differ in length, or without room for the state's events");
            goto done;
        }
        int64_t *s_start = (int64_t *)o_st.buf, *s_end = (int64_t *)o_en.buf;
        uint8_t *s_flags = (uint8_t *)o_fl.buf;
        uint64_t *s_id = o_id.len ? (uint64_t *)o_id.buf : NULL;
        int32_t *s_level = (int32_t *)o_lv.buf, *s_track = (int32_t *)o_tr.buf;
        const int64_t unclosed_end = trace_end > 0 ? trace_end : 0;
        const Py_ssize_t nbeg = st->nbeg, nu = st->nu;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t j = 0; j < nbeg; j++) {
            if (s_flags[j] == 2)
                s_end[j] = unclosed_end;
            if (s_start[j] > s_end[j]) /* (a start after its end: clipped, as _spans does) */
                s_start[j] = s_end[j];
        }
        if (nu) { /* the unmatched ends (written from row room - 1 down), in time order, after the begins */
            const Py_ssize_t lo = st->room - nu;
            MOVE_REVERSED(s_start, int64_t, lo, nu, nbeg);
            MOVE_REVERSED(s_end, int64_t, lo, nu, nbeg);
            MOVE_REVERSED(s_flags, uint8_t, lo, nu, nbeg);
            if (s_id)
                MOVE_REVERSED(s_id, uint64_t, lo, nu, nbeg);
            MOVE_REVERSED(s_level, int32_t, lo, nu, nbeg);
            MOVE_REVERSED(s_track, int32_t, lo, nu, nbeg);
            if (r_size == 4) {
                MOVE_REVERSED(((int32_t *)o_ev.buf), int32_t, lo, nu, nbeg);
                MOVE_REVERSED(((int32_t *)o_ee.buf), int32_t, lo, nu, nbeg);
            } else {
                MOVE_REVERSED(((int64_t *)o_ev.buf), int64_t, lo, nu, nbeg);
                MOVE_REVERSED(((int64_t *)o_ee.buf), int64_t, lo, nu, nbeg);
            }
        }
        Py_END_ALLOW_THREADS
        st->ended = 1;
        result = Py_BuildValue("nnn", nbeg, nu, st->ji);
    }
done:
    if (st)
        st->busy = 0;
    PyBuffer_Release(&o_st);
    PyBuffer_Release(&o_en);
    PyBuffer_Release(&o_fl);
    PyBuffer_Release(&o_ev);
    PyBuffer_Release(&o_ee);
    PyBuffer_Release(&o_id);
    PyBuffer_Release(&o_lv);
    PyBuffer_Release(&o_tr);
    return result;
}

/* The rows i < n whose kind[i] - lo (as a byte) is at most span: counted 16 bytes at a time (SSE2, where
   the compiler has it), and written without a branch a row (a row's
   position is written whether it matches or not and kept only when it does: the kinds of a trace alternate
   too irregularly for the branch to be predicted; 2-4x faster measured on a 30M-row column). */
static Py_ssize_t kind_count(const uint8_t *kind, Py_ssize_t n, unsigned lo, unsigned span)
{
    Py_ssize_t count = 0, i = 0;
#if defined(__SSE2__)
    /* 16 bytes a step: (kind - lo) <= span as min(x, span) == x, counted down in byte lanes (255 steps at
       most between sums), summed by _mm_sad_epu8 */
    const __m128i lov = _mm_set1_epi8((char)lo), spanv = _mm_set1_epi8((char)span), zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        __m128i acc = zero;
        const Py_ssize_t steps = (n - i) / 16 < 255 ? (n - i) / 16 : 255;
        for (Py_ssize_t s = 0; s < steps; s++, i += 16) {
            const __m128i x = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(kind + i)), lov);
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_min_epu8(x, spanv), x));
        }
        const __m128i sums = _mm_sad_epu8(acc, zero);
        count += (Py_ssize_t)_mm_cvtsi128_si64(sums) + (Py_ssize_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
    }
#endif
    for (; i < n; i++)
        count += (uint8_t)(kind[i] - lo) <= span;
    return count;
}

/* Writes the first m matching rows from row i on, the j-th found so far at rows[j] (while fewer than m were
   found, each step writes at rows[j] with j < m: a stretch of at most m - j rows cannot find more than
   m - j); returns how many match in all (j included). */
#define KIND_FILL(NAME, TYPE)                                                                                      \
    static Py_ssize_t NAME(const uint8_t *kind, Py_ssize_t n, unsigned lo, unsigned span, TYPE *rows,            \
                           Py_ssize_t m, Py_ssize_t i, Py_ssize_t j)                                              \
    {                                                                                                            \
        while (i < n && j < m) {                                                                                 \
            const Py_ssize_t end = i + (n - i < m - j ? n - i : m - j);                                          \
            for (; i < end; i++) {                                                                               \
                rows[j] = (TYPE)i;                                                                               \
                j += (uint8_t)(kind[i] - lo) <= span;                                                            \
            }                                                                                                    \
        }                                                                                                        \
        for (; i < n; i++)                                                                                       \
            j += (uint8_t)(kind[i] - lo) <= span;                                                                \
        return j;                                                                                                \
    }
KIND_FILL(kind_fill32, int32_t)
KIND_FILL(kind_fill64, int64_t)
#undef KIND_FILL

#if KIND_FILL_AVX2
/* pack_offsets[b]: the positions of the set bits of byte b, lowest first (the rest 0): the rows of a group
   of 8 whose bits are set, as offsets from its first row, packed to the front by one permute */
static int32_t pack_offsets[256][8];
static int have_avx2;

static void kind_fill_init(void)
{
    for (int b = 0; b < 256; b++) {
        int k = 0;
        for (int bit = 0; bit < 8; bit++)
            if (b >> bit & 1)
                pack_offsets[b][k++] = bit;
        while (k < 8)
            pack_offsets[b][k++] = 0;
    }
    __builtin_cpu_init();
    have_avx2 = __builtin_cpu_supports("avx2");
}

/* kind_fill32 32 rows a step: the 32 kinds compared at once ((kind - lo) <= span as min(x, span) == x), the
   matching rows of each group of 8 packed by a table permute and stored 8 at a time (only while 32 more fit
   below m: the last 8-row store of a step writes rows[j..j+7] with j + 8 <= m), then the scalar loop for the
   rest. A 32-row stretch without a match costs one compare; measured on a 30M-row column ~16 ms -> ~5 ms. */
__attribute__((target("avx2"))) static Py_ssize_t kind_fill32_avx2(const uint8_t *kind, Py_ssize_t n, unsigned lo,
                                                                  unsigned span, int32_t *rows, Py_ssize_t m)
{
    const __m256i lov = _mm256_set1_epi8((char)lo), spanv = _mm256_set1_epi8((char)span);
    Py_ssize_t i = 0, j = 0;
    while (i + 32 <= n && j + 32 <= m) {
        const __m256i x = _mm256_sub_epi8(_mm256_loadu_si256((const __m256i *)(kind + i)), lov);
        const uint32_t mask = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(x, spanv), x));
        if (mask) {
            for (int q = 0; q < 4; q++) {
                const unsigned b = (mask >> (8 * q)) & 0xFF;
                const __m256i at = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(i + 8 * q)),
                                                    _mm256_loadu_si256((const __m256i *)pack_offsets[b]));
                _mm256_storeu_si256((__m256i *)(rows + j), at);
                j += __builtin_popcount(b);
            }
        }
        i += 32;
    }
    return kind_fill32(kind, n, lo, span, rows, m, i, j);
}
#endif

PyDoc_STRVAR(kind_rows_doc,
"kind_rows(kind, first, last, rows, wide) -> count\n\n"
"The rows whose kind (uint8) is in first..last, ascending, as fxscope.core.trace.event_rows.kind_rows finds\n"
"them with numpy: rows None, their count; else written to rows (int32, or int64 when wide), which must hold\n"
"exactly that many (ValueError otherwise). Two streaming passes over the one-byte column (count, then fill)\n"
"instead of numpy's masks and an int64 index per block.");

static PyObject *kind_rows(PyObject *self, PyObject *args)
{
    Py_buffer kb, ob = {0};
    PyObject *rows_obj;
    int first, last, wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiOp", &kb, &first, &last, &rows_obj, &wide))
        return NULL;
    PyObject *result = NULL;
    const uint8_t *kind = (const uint8_t *)kb.buf;
    const Py_ssize_t n = kb.len;
    const unsigned lo = (unsigned)first & 0xFF, span = (unsigned)(last - first) & 0xFF;
    if (rows_obj == Py_None) {
        Py_ssize_t count;
        Py_BEGIN_ALLOW_THREADS
        count = kind_count(kind, n, lo, span);
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(count);
        goto release;
    }
    if (PyObject_GetBuffer(rows_obj, &ob, PyBUF_WRITABLE) < 0)
        goto release;
    {
        if (check_items(&ob, wide ? 8 : 4, "rows") < 0)
            goto done;
        if (!wide && n >= (Py_ssize_t)1 << 31) {
            PyErr_SetString(PyExc_ValueError, "kind_rows: 2**31 rows or more need int64 rows");
            goto done;
        }
        const Py_ssize_t m = ob.len / (wide ? 8 : 4);
        Py_ssize_t j;
        Py_BEGIN_ALLOW_THREADS
        if (wide)
            j = kind_fill64(kind, n, lo, span, (int64_t *)ob.buf, m, 0, 0);
#if KIND_FILL_AVX2
        else if (have_avx2)
            j = kind_fill32_avx2(kind, n, lo, span, (int32_t *)ob.buf, m);
#endif
        else
            j = kind_fill32(kind, n, lo, span, (int32_t *)ob.buf, m, 0, 0);
        Py_END_ALLOW_THREADS
        if (j != m)
            PyErr_SetString(PyExc_ValueError, "kind_rows: rows does not hold exactly the rows of those kinds");
        else
            result = PyLong_FromSsize_t(j);
    }
done:
    PyBuffer_Release(&ob);
release:
    PyBuffer_Release(&kb);
    return result;
}

/* ------------------------------------------------------------------ time-ordered runs merged */

/* The run heads of a merge as a binary min-heap of run indices, ordered by (time of the head, run): the
   earlier run wins a tie, so that the merge is stable (runs in file order, each in it). */
typedef struct {
    Py_ssize_t *heap; /* run indices */
    Py_ssize_t size;
    const int64_t *ts;
    Py_ssize_t *at; /* each run's next row */
} RunHeap;

static inline int run_before(const RunHeap *h, Py_ssize_t a, Py_ssize_t b)
{
    const int64_t ta = h->ts[h->at[a]], tb = h->ts[h->at[b]];
    return ta < tb || (ta == tb && a < b);
}

static void run_sift_down(RunHeap *h, Py_ssize_t i)
{
    for (;;) {
        Py_ssize_t l = 2 * i + 1, m = i;
        if (l < h->size && run_before(h, h->heap[l], h->heap[m]))
            m = l;
        if (l + 1 < h->size && run_before(h, h->heap[l + 1], h->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        Py_ssize_t t = h->heap[i];
        h->heap[i] = h->heap[m];
        h->heap[m] = t;
        i = m;
    }
}

/* Merge the runs [starts[r], starts[r + 1]) of (ts, rows, data) into the outputs; 0, or ST_FALLBACK when a
   run's times go back (the outputs are then partly written). Rows and data are moved as 4- or 8-byte items. */
static int merge_runs_into(const int64_t *starts, Py_ssize_t k, const int64_t *ts, const char *rows, int rsz,
                           const uint64_t *data, int64_t *o_ts, char *o_rows, uint64_t *o_data,
                           Py_ssize_t *heap, Py_ssize_t *at)
{
    RunHeap h = {heap, 0, ts, at};
    for (Py_ssize_t r = 0; r < k; r++) {
        at[r] = starts[r];
        for (Py_ssize_t i = starts[r] + 1; i < starts[r + 1]; i++) /* (one comparison pass: runs in order) */
            if (ts[i] < ts[i - 1])
                return ST_FALLBACK;
        if (starts[r] < starts[r + 1])
            heap[h.size++] = r;
    }
    for (Py_ssize_t i = h.size / 2; i-- > 0;)
        run_sift_down(&h, i);
    Py_ssize_t j = 0;
    while (h.size) {
        const Py_ssize_t r = heap[0];
        const Py_ssize_t end = starts[r + 1];
        /* the head run's rows up to the next run's head time (ties to the earlier run) go out at once */
        Py_ssize_t i = at[r];
        if (h.size == 1) {
            i = end;
        } else {
            /* (the next run by its head: the earlier of the root's children) */
            const Py_ssize_t next = heap[(h.size > 2 && run_before(&h, heap[2], heap[1])) ? 2 : 1];
            const int64_t bound = ts[at[next]];
            if (r < next)
                while (i < end && ts[i] <= bound)
                    i++;
            else
                while (i < end && ts[i] < bound)
                    i++;
        }
        const Py_ssize_t a = at[r], cnt = i - a;
        memcpy(o_ts + j, ts + a, (size_t)cnt * 8);
        memcpy(o_data + j, data + a, (size_t)cnt * 8);
        memcpy(o_rows + (size_t)j * rsz, rows + (size_t)a * rsz, (size_t)cnt * rsz);
        j += cnt;
        at[r] = i;
        if (i == end)
            heap[0] = heap[--h.size];
        run_sift_down(&h, 0);
    }
    return ST_OK;
}

PyDoc_STRVAR(merge_runs_doc,
"merge_runs(starts, ts, rows, data, o_ts, o_rows, o_data) -> status\n\n"
"The events (ts int64, rows int32 or int64, data 8-byte) of the runs [starts[r], starts[r + 1]) (starts int64,\n"
"ascending from 0 to the events' count), each in time order, merged in time order, ties in run order: what\n"
"np.argsort(ts, kind=\"stable\") and three gathers give (fxscope.core.trace.run_merge), written to the\n"
"outputs (the inputs' types and length) in one pass that copies a run's stretch before the next run's head\n"
"at once. Returns 0, or 1 when a run's times go back (the outputs are then not the merge). ValueError\n"
"for starts that are not such bounds, or columns of other lengths.");

static PyObject *merge_runs(PyObject *self, PyObject *args)
{
    Py_buffer sb, tb, rb, db, otb, orb, odb;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*w*", &sb, &tb, &rb, &db, &otb, &orb, &odb))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *heap = NULL;
    if (check_items(&sb, 8, "starts") < 0 || check_items(&tb, 8, "ts") < 0 || check_items(&db, 8, "data") < 0 ||
        check_items(&otb, 8, "o_ts") < 0 || check_items(&odb, 8, "o_data") < 0)
        goto done;
    {
        const Py_ssize_t n = tb.len / 8, k = sb.len / 8 - 1;
        const int rsz = n ? (int)(rb.len / n) : 4;
        if ((rsz != 4 && rsz != 8) || rb.len != n * rsz || db.len != tb.len || otb.len != tb.len ||
            odb.len != tb.len || orb.len != rb.len || check_items(&rb, rsz, "rows") < 0 ||
            check_items(&orb, rsz, "o_rows") < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "merge_runs: columns differ in length, or rows not 4 or 8 bytes");
            goto done;
        }
        const int64_t *starts = (const int64_t *)sb.buf;
        if (k < 1 || starts[0] != 0 || starts[k] != n) {
            PyErr_SetString(PyExc_ValueError, "merge_runs: starts do not run from 0 to the events' count");
            goto done;
        }
        for (Py_ssize_t r = 0; r < k; r++)
            if (starts[r + 1] < starts[r]) {
                PyErr_SetString(PyExc_ValueError, "merge_runs: starts not ascending");
                goto done;
            }
        heap = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)k);
        if (!heap) {
            PyErr_NoMemory();
            goto done;
        }
        int status;
        Py_BEGIN_ALLOW_THREADS
        status = merge_runs_into(starts, k, (const int64_t *)tb.buf, (const char *)rb.buf, rsz,
                                 (const uint64_t *)db.buf, (int64_t *)otb.buf, (char *)orb.buf, (uint64_t *)odb.buf,
                                 heap, heap + k);
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(status);
    }
done:
    PyMem_Free(heap);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&db);
    PyBuffer_Release(&otb);
    PyBuffer_Release(&orb);
    PyBuffer_Release(&odb);
    return result;
}

static PyMethodDef methods[] = {
    {"bind_to_slices", bind_to_slices, METH_VARARGS, bind_to_slices_doc},
    {"flow_table", flow_table, METH_VARARGS, flow_table_doc},
    {"group_order", group_order, METH_VARARGS, group_order_doc},
    {"first_fit_lanes", first_fit_lanes, METH_VARARGS, first_fit_lanes_doc},
    {"async_layout", async_layout, METH_VARARGS, async_layout_doc},
    {"async_instant_order", async_instant_order, METH_VARARGS, async_instant_order_doc},
    {"async_state", async_state, METH_VARARGS, async_state_doc},
    {"async_spans", async_spans, METH_VARARGS, async_spans_doc},
    {"async_spans_end", async_spans_end, METH_VARARGS, async_spans_end_doc},
    {"kind_rows", kind_rows, METH_VARARGS, kind_rows_doc},
    {"merge_runs", merge_runs, METH_VARARGS, merge_runs_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "span_kernels",
    "The model's per-event state machines (flow binding and chaining, async pairing and lanes), compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit_span_kernels(void)
{
#if KIND_FILL_AVX2
    kind_fill_init();
#endif
    return PyModule_Create(&module);
}
