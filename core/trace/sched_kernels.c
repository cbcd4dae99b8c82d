/*
 * The scheduling tables' replay (core/trace/sched.py build_sched), compiled: the context switches ordered per
 * CPU by time (a counting sort by CPU, each CPU's run sorted only when it is not in time order already) give
 * the CPU slices; the switches' outgoing and incoming threads and the wakeups, ordered per thread by (time,
 * outgoing < wakeup < incoming, record) (a counting sort by thread, each thread's run sorted only when it is
 * not in that order already), give the thread states, with the wakeups of running threads dropped.
 *
 * Why C: numpy does the replay in ~100 passes over the records (concatenations of the three kinds of
 * events, two multi-key sorts, gathers by their orders, forward fills for the redundant wakeups); here it is
 * a few passes with one event array, the tables' columns (CPUs, koids, processes) written as each row is made
 * rather than gathered by the rows' records afterwards (eight gathers and three selections of the tables'
 * size in numpy). The numpy path stays the reference (FXSCOPE_NO_COMPILED=1 forces it;
 * tests/core/trace/test_sched_kernels.py compares both on generated, third-party and hostile traces). Every
 * buffer length is checked; the records' values index only tables this file sizes from them. The GIL is
 * released while the loops run.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { WAKEUP = 2, RUNNING = 1, RUNNABLE = 6, PREEMPTED = 7 };

static int check_items(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *what)
{
    if (b->len % itemsize != 0 || ((uintptr_t)b->buf) % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: buffer length or alignment does not fit %zd-byte items", what,
                     itemsize);
        return -1;
    }
    if (n >= 0 && b->len / itemsize != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd items, expected %zd", what, b->len / itemsize, n);
        return -1;
    }
    return 0;
}

static inline uint64_t koid_at(const void *a, int wide, Py_ssize_t i)
{
    return wide ? ((const uint64_t *)a)[i] : (uint64_t)((const uint32_t *)a)[i];
}

/* A switch on a CPU or an event of a thread: its time, and above its record (the low REC_BITS bits) the
 * record's outgoing state and CPU, whether the event's process is not its thread's (OWN_PID: see below) and
 * the event's rank (0 outgoing, 1 wakeup, 2 incoming): compared as (ts, rank, record). A thread's events
 * carry what its states' rows are made of, so that the walk over its events reads the records' columns
 * once, not once a thread (each thread's events are spread over all the records: with the columns read at
 * each event's record, every cache line of them was fetched once a thread, ~13 times at 100M events, where
 * they no longer stay in cache). The process is the thread's (that of its first event) unless OWN_PID
 * says the record names another (a legacy switch's own process, as a rule none): the process columns read
 * at each event's record were ~1/3 of the replay's time at 100M events (26 MB each, past the caches),
 * and the replay grew 5.7x from 30M to 100M events. */
typedef struct {
    int64_t ts;
    uint64_t rr;
} Item;

#define REC_BITS 37
#define REC_MASK (((uint64_t)1 << REC_BITS) - 1)
#define STATE_SHIFT REC_BITS
#define CPU_SHIFT (STATE_SHIFT + 8)
#define OWN_PID_SHIFT (CPU_SHIFT + 16)
#define RANK_SHIFT (OWN_PID_SHIFT + 1)

static inline uint64_t item_key(uint64_t rr)
{
    return (rr >> RANK_SHIFT) << REC_BITS | (rr & REC_MASK);
}

static int item_cmp(const void *pa, const void *pb)
{
    const Item *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    const uint64_t x = item_key(a->rr), y = item_key(b->rr);
    return (x > y) - (x < y);
}

/* Sorts items[lo:hi] by (ts, rank, rec) unless they are in that order already. */
static void order_run(Item *items, Py_ssize_t lo, Py_ssize_t hi)
{
    for (Py_ssize_t j = lo + 1; j < hi; j++) {
        if (item_cmp(&items[j - 1], &items[j]) > 0) {
            qsort(items + lo, (size_t)(hi - lo), sizeof(Item), item_cmp);
            return;
        }
    }
}

/* Open-addressing map of the threads' koids to their numbers (first-seen order), grown as it fills; the
 * koids below SMALL_KOIDS (as a rule all: koids are small counters) are also looked up in a direct table. */
#define SMALL_KOIDS 65536
typedef struct {
    uint64_t *keys;
    int64_t *slot;  /* number + 1, 0 empty */
    size_t mask;
    Py_ssize_t n;
    int64_t *small;  /* SMALL_KOIDS entries: number + 1, 0 not seen */
} KoidMap;

static inline size_t koid_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

static int map_resize(KoidMap *m, size_t slots)
{
    uint64_t *keys = malloc(slots * sizeof(uint64_t));
    int64_t *slot = calloc(slots, sizeof(int64_t));
    if (!keys || !slot) {
        free(keys);
        free(slot);
        return -1;
    }
    for (size_t at = 0; m->slot && at <= m->mask; at++) {
        if (!m->slot[at])
            continue;
        size_t to = koid_hash(m->keys[at]) & (slots - 1);
        while (slot[to])
            to = (to + 1) & (slots - 1);
        keys[to] = m->keys[at];
        slot[to] = m->slot[at];
    }
    free(m->keys);
    free(m->slot);
    m->keys = keys;
    m->slot = slot;
    m->mask = slots - 1;
    return 0;
}

/* The number of ``k`` (added when new), -1 when out of memory. */
static inline int64_t koid_number(KoidMap *m, uint64_t k)
{
    if (k < SMALL_KOIDS && m->small[k])
        return m->small[k] - 1;
    size_t at = koid_hash(k) & m->mask;
    while (m->slot[at]) {
        if (m->keys[at] == k)
            return m->slot[at] - 1;
        at = (at + 1) & m->mask;
    }
    if ((size_t)(m->n + 1) * 2 > m->mask + 1) {
        if (map_resize(m, (m->mask + 1) * 2))
            return -1;
        return koid_number(m, k);
    }
    m->keys[at] = k;
    m->slot[at] = ++m->n;
    if (k < SMALL_KOIDS)
        m->small[k] = m->n;
    return m->n - 1;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static inline void koid_put(void *a, int wide, Py_ssize_t i, uint64_t v)
{
    if (wide)
        ((uint64_t *)a)[i] = v;
    else
        ((uint32_t *)a)[i] = (uint32_t)v;
}

PyDoc_STRVAR(sched_replay_doc,
"sched_replay(kind, ts, cpu, out_tid, out_wide, in_tid, in_wide, out_state, in_idle, out_idle, in_pid, out_pid,\n"
"             koid_wide, trace_end, cs_cpu, cs_start, cs_end, cs_tid, cs_pid, st_tid, st_pid, st_start, st_end,\n"
"             st_state, st_cpu) -> (n_cpu_slices, n_states)\n\n"
"build_sched's CPU slices and thread states of the scheduling records (uint8 kind, int64 ts, uint16 cpu,\n"
"uint32/uint64 koids, uint8 out_state, bool idle flags, the records' incoming and outgoing process koids of\n"
"the tables' koid type: uint64 when koid_wide, else uint32; trace_end already at least 0), written as the\n"
"tables' columns: the CPU slices' cpu (uint16), start, end (int64), tid and pid (the koid type) to cs_* (room\n"
"for every switch to a thread not idle), the thread states' tid, pid, start, end, state (uint8) and cpu (uint16) to st_* (room\n"
"for every event: a wakeup, each switch's non-idle threads). Returns how many of each were written;\n"
"ValueError when an output is too short or a column's length differs; a koid past 32 bits is written\n"
"truncated to a uint32 output (the caller sizes the koid type to the values).");

static PyObject *sched_replay(PyObject *self, PyObject *args)
{
    Py_buffer kb, tb, cb, ob, ib, sb, iib, oib, ipb, opb, csc, css, cse, cst, csp, stt, stp, sts, ste, stst, stc;
    int owide, iwide, kwide;
    long long trace_end;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*py*py*y*y*y*y*pLw*w*w*w*w*w*w*w*w*w*w*", &kb, &tb, &cb, &ob, &owide, &ib,
                          &iwide, &sb, &iib, &oib, &ipb, &opb, &kwide, &trace_end, &csc, &css, &cse, &cst, &csp,
                          &stt, &stp, &sts, &ste, &stst, &stc))
        return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = kb.len;
    const int kz = kwide ? 8 : 4;
    if (check_items(&tb, 8, n, "ts") || check_items(&cb, 2, n, "cpu") || check_items(&ob, owide ? 8 : 4, n, "out_tid")
        || check_items(&ib, iwide ? 8 : 4, n, "in_tid") || check_items(&sb, 1, n, "out_state")
        || check_items(&iib, 1, n, "in_idle") || check_items(&oib, 1, n, "out_idle")
        || check_items(&ipb, kz, n, "in_pid") || check_items(&opb, kz, n, "out_pid")
        || check_items(&css, 8, -1, "cs_start") || check_items(&csc, 2, css.len / 8, "cs_cpu")
        || check_items(&cse, 8, css.len / 8, "cs_end") || check_items(&cst, kz, css.len / 8, "cs_tid")
        || check_items(&csp, kz, css.len / 8, "cs_pid") || check_items(&sts, 8, -1, "st_start")
        || check_items(&stt, kz, sts.len / 8, "st_tid") || check_items(&stp, kz, sts.len / 8, "st_pid")
        || check_items(&ste, 8, sts.len / 8, "st_end") || check_items(&stst, 1, sts.len / 8, "st_state")
        || check_items(&stc, 2, sts.len / 8, "st_cpu"))
        goto done;
    if ((uint64_t)n > REC_MASK) {
        PyErr_SetString(PyExc_ValueError, "sched_replay: 2**37 records or more");
        goto done;
    }
    {
        const uint8_t *kind = kb.buf, *out_state = sb.buf, *in_idle = iib.buf, *out_idle = oib.buf;
        const int64_t *ts = tb.buf;
        const uint16_t *cpu = cb.buf;
        const void *out_tid = ob.buf, *in_tid = ib.buf, *in_pid = ipb.buf, *out_pid = opb.buf;
        uint16_t *cs_cpu = csc.buf, *st_cpu = stc.buf;
        int64_t *cs_start = css.buf, *cs_end = cse.buf;
        void *cs_tid = cst.buf, *cs_pid = csp.buf, *st_tid = stt.buf, *st_pid = stp.buf;
        int64_t *st_start = sts.buf, *st_end = ste.buf;
        uint8_t *st_state = stst.buf;
        int64_t end_ns = trace_end;
        Py_ssize_t n_cs = 0, n_st = 0;
        int failed = 0;  /* 1: out of memory, 2: an output too short */
        Py_ssize_t cs_room = css.len / 8, st_room = sts.len / 8;
        Item *items = NULL;
        int64_t *ptr = NULL, *rank_of = NULL;
        uint64_t *uniq = NULL, *thread_pid = NULL;
        uint8_t *pid_seen = NULL;
        KoidMap map = {NULL, NULL, 0, 0, NULL};
        Py_BEGIN_ALLOW_THREADS
        /* --- CPU slices: the switches by (cpu, ts, record), a counting sort by CPU */
        /* the events of the threads' states: a wakeup, each switch's non-idle threads */
        Py_ssize_t n_ev = 0, n_run = 0; /* (n_run: the CPU slices, a switch to a thread not idle each) */
        for (Py_ssize_t r = 0; r < n; r++) {
            n_ev += kind[r] == WAKEUP ? 1 : (!out_idle[r]) + (!in_idle[r]);
            n_run += kind[r] != WAKEUP && !in_idle[r];
        }
        if (n_ev > st_room || n_run > cs_room) {
            failed = 2;
            goto out;
        }
        /* one buffer of items for both sorts, sized for the larger (fresh pages are faulted in once: at 100M
           events a second buffer's faults were most of the replay's system time) */
        ptr = calloc(65536 + 1, sizeof(int64_t));
        items = malloc((size_t)(n > n_ev ? n : (n_ev > 0 ? n_ev : 1)) * sizeof(Item));
        map.small = calloc(SMALL_KOIDS, sizeof(int64_t));
        if (!ptr || !items || !map.small || map_resize(&map, 1024)) {
            failed = 1;
            goto out;
        }
        for (Py_ssize_t r = 0; r < n; r++)
            if (kind[r] != WAKEUP)
                ptr[cpu[r] + 1]++;
        for (int c = 0; c < 65536; c++)
            ptr[c + 1] += ptr[c];
        Py_ssize_t n_sw = ptr[65536];
        for (Py_ssize_t r = 0; r < n; r++)
            if (kind[r] != WAKEUP)
                items[ptr[cpu[r]]++] = (Item){ts[r], (uint64_t)r};
        /* (ptr[c] is now the end of CPU c's run: runs are ptr[c - 1] .. ptr[c]); each run's CPU and times
           are its items' (the records' columns read at the switches' records: their tids and processes) */
        for (int c = 0; c < 65536; c++) {
            const Py_ssize_t lo = c ? ptr[c - 1] : 0, hi = ptr[c];
            order_run(items, lo, hi);
            for (Py_ssize_t j = lo; j < hi; j++) {
                const int64_t r = (int64_t)(items[j].rr & REC_MASK), t = items[j].ts;
                if (in_idle[r])
                    continue;
                const int64_t e = j + 1 == hi ? end_ns : items[j + 1].ts;
                cs_cpu[n_cs] = (uint16_t)c;
                cs_start[n_cs] = t;
                cs_end[n_cs] = e > t ? e : t;
                koid_put(cs_tid, kwide, n_cs, koid_at(in_tid, iwide, r));
                koid_put(cs_pid, kwide, n_cs, koid_at(in_pid, kwide, r));
                n_cs++;
            }
        }
        (void)n_sw;
        free(ptr);
        ptr = NULL;
        /* --- thread states: each thread's events by (ts, rank, record), threads by koid. First the
         * threads (numbered as first seen) and their events' counts, then the events placed by thread in
         * record order (a stable counting sort), each thread's run sorted only when out of order */
        for (Py_ssize_t r = 0; r < n; r++) {
            int wake = kind[r] == WAKEUP;
            if ((wake || !out_idle[r]) && koid_number(&map, wake ? koid_at(in_tid, iwide, r) : koid_at(out_tid, owide, r)) < 0) {
                failed = 1;
                goto out;
            }
            if (!wake && !in_idle[r] && koid_number(&map, koid_at(in_tid, iwide, r)) < 0) {
                failed = 1;
                goto out;
            }
        }
        Py_ssize_t k = map.n;
        uniq = malloc((size_t)(k > 0 ? k : 1) * 2 * sizeof(uint64_t));
        rank_of = malloc((size_t)(k > 0 ? k : 1) * sizeof(int64_t));
        ptr = calloc((size_t)k + 1, sizeof(int64_t));
        thread_pid = malloc((size_t)(k > 0 ? k : 1) * sizeof(uint64_t));  /* by the threads' order */
        pid_seen = calloc((size_t)(k > 0 ? k : 1), 1);
        if (!uniq || !rank_of || !ptr || !thread_pid || !pid_seen) {
            failed = 1;
            goto out;
        }
        for (size_t at = 0; at <= map.mask; at++)  /* (koid, number) pairs by koid: the threads' order */
            if (map.slot[at]) {
                uniq[2 * (map.slot[at] - 1)] = map.keys[at];
                uniq[2 * (map.slot[at] - 1) + 1] = (uint64_t)(map.slot[at] - 1);
            }
        qsort(uniq, (size_t)k, 2 * sizeof(uint64_t), cmp_u64);
        for (Py_ssize_t g = 0; g < k; g++)
            rank_of[uniq[2 * g + 1]] = g;
        for (Py_ssize_t pass = 0; pass < 2; pass++) {
            for (Py_ssize_t r = 0; r < n; r++) {
                int wake = kind[r] == WAKEUP;
                for (int side = 0; side < 2; side++) {  /* the outgoing thread, then the incoming / woken one */
                    int64_t rank;
                    uint64_t koid;
                    if (side == 0) {
                        if (wake || out_idle[r])
                            continue;
                        rank = 0;
                        koid = koid_at(out_tid, owide, r);
                    } else {
                        if (!wake && in_idle[r])
                            continue;
                        rank = wake ? 1 : 2;
                        koid = koid_at(in_tid, iwide, r);
                    }
                    int64_t g = rank_of[koid_number(&map, koid)];  /* (known: no allocation) */
                    const uint64_t pid = koid_at(rank ? in_pid : out_pid, kwide, r);
                    if (pass == 0) {
                        ptr[g + 1]++;
                        if (!pid_seen[g]) {  /* the thread's process: its first event's */
                            pid_seen[g] = 1;
                            thread_pid[g] = pid;
                        }
                    } else {
                        items[ptr[g]++] = (Item){ts[r], (uint64_t)rank << RANK_SHIFT | (uint64_t)cpu[r] << CPU_SHIFT
                                                            | (uint64_t)(pid != thread_pid[g]) << OWN_PID_SHIFT
                                                            | (uint64_t)(rank ? 0 : out_state[r]) << STATE_SHIFT
                                                            | (uint64_t)r};
                    }
                }
            }
            if (pass == 0) {
                for (Py_ssize_t g = 0; g < k; g++)
                    ptr[g + 1] += ptr[g];
            }
        }
        for (Py_ssize_t g = 0; g < k; g++) {  /* (ptr[g] is now the end of thread g's run) */
            Py_ssize_t lo = g ? ptr[g - 1] : 0, hi = ptr[g];
            order_run(items, lo, hi);
            /* a wakeup of a running thread changes nothing: dropped (the last event before it that is
             * not a wakeup is a switch in); each kept event lasts until the thread's next kept one */
            int running = 0;
            Py_ssize_t first = n_st;
            for (Py_ssize_t j = lo; j < hi; j++) {
                const uint64_t rr = items[j].rr;
                const int64_t rank = (int64_t)(rr >> RANK_SHIFT), rec = (int64_t)(rr & REC_MASK);
                int64_t t = items[j].ts;
                if (rank == 1) {
                    if (running)
                        continue;
                } else {
                    running = rank == 2;
                }
                if (n_st > first)
                    st_end[n_st - 1] = t > st_start[n_st - 1] ? t : st_start[n_st - 1];
                koid_put(st_tid, kwide, n_st, uniq[2 * g]); /* (the thread's koid: its events are its own) */
                koid_put(st_pid, kwide, n_st, (rr >> OWN_PID_SHIFT) & 1 ? koid_at(rank ? in_pid : out_pid, kwide, rec)
                                                                       : thread_pid[g]);
                st_cpu[n_st] = (uint16_t)(rr >> CPU_SHIFT);
                st_start[n_st] = t;
                uint8_t state = rank == 0 ? (uint8_t)(rr >> STATE_SHIFT) : rank == 1 ? RUNNABLE : RUNNING;
                st_state[n_st] = rank == 0 && state == RUNNING ? PREEMPTED : state;
                n_st++;
            }
            if (n_st > first)
                st_end[n_st - 1] = end_ns > st_start[n_st - 1] ? end_ns : st_start[n_st - 1];
        }
    out:
        free(items);
        free(ptr);
        free(rank_of);
        free(uniq);
        free(thread_pid);
        free(pid_seen);
        free(map.keys);
        free(map.slot);
        free(map.small);
        Py_END_ALLOW_THREADS
        if (failed == 2)
            PyErr_SetString(PyExc_ValueError, "an output is shorter than the switches or the events");
        else if (failed)
            PyErr_NoMemory();
        else
            ret = Py_BuildValue("(nn)", n_cs, n_st);
    }
done:
    PyBuffer_Release(&kb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&iib);
    PyBuffer_Release(&oib);
    PyBuffer_Release(&ipb);
    PyBuffer_Release(&opb);
    PyBuffer_Release(&csc);
    PyBuffer_Release(&css);
    PyBuffer_Release(&cse);
    PyBuffer_Release(&cst);
    PyBuffer_Release(&csp);
    PyBuffer_Release(&stt);
    PyBuffer_Release(&stp);
    PyBuffer_Release(&sts);
    PyBuffer_Release(&ste);
    PyBuffer_Release(&stst);
    PyBuffer_Release(&stc);
    return ret;
}

static PyMethodDef methods[] = {
    {"sched_replay", sched_replay, METH_VARARGS, sched_replay_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sched_kernels", "The scheduling tables' replay, compiled.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_sched_kernels(void)
{
    return PyModule_Create(&module);
}
