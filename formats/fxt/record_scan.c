/*
 * The sequential inner loops of the FXT reader, compiled: walking the chain of record headers and the
 * argument blocks of event records.
 *
 * Why C: records are a chain (each header gives the size of its record, the next starts after it), so
 * finding them is a pointer chase that numpy cannot vectorize without tricks that cost ~30 instructions a
 * word (formats/fxt/framing.py keeps that pure-numpy walk as the fallback, used when this module was not
 * built). Here it is one load and one add a record, and the GIL is released while it runs so the window
 * stays responsive during a load.
 *
 * Everything here only reads the words it is given and writes the output buffers it is given, bounds
 * checked; the callers (framing.py, records_events.py) keep every rule about what a record means.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A word of the file; a position outside it reads the nearest word, as numpy's clipped gather does (the
   record is cut there anyway, and the same warnings follow). */
static inline __attribute__((always_inline)) uint64_t word_at(const uint64_t *words, int64_t n, int64_t a)
{
    return n ? words[a < 0 ? 0 : (a >= n ? n - 1 : a)] : 0;
}

/* Walk `want` arguments of one record from word a (see walk_args); returns 1 when its status is set. */
static inline int walk_one(const uint64_t *words, int64_t n, int64_t a, unsigned want, uint8_t nargs,
                           int64_t end, int64_t *after, uint8_t *neff, uint8_t *status)
{
    unsigned k = 0;
    uint8_t s = 0;
    for (; k < want; k++) {
        int64_t size = (int64_t)((word_at(words, n, a) >> 4) & 0xFFF);
        if (size == 0) {
            s = 1;
            break;
        }
        if (a + size > end) {
            s = 2;
            break;
        }
        a += size;
    }
    *after = a;
    *neff = (uint8_t)(s == 1 ? k : nargs);
    *status = (uint8_t)(s ? (s << 4) | k : 0);
    return s != 0;
}

static int check_buffer(Py_buffer *b, Py_ssize_t itemsize, const char *what)
{
    if (b->len % itemsize != 0 || ((uintptr_t)b->buf) % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: buffer length or alignment does not fit %zd-byte items", what,
                     itemsize);
        return -1;
    }
    return 0;
}

/* Every row of `rows` (int64) a valid index of nrec records: else IndexError (checked before any read). */
static int check_rows(const Py_buffer *rows_buf, Py_ssize_t nrec, const char *what)
{
    const int64_t *rows = (const int64_t *)rows_buf->buf;
    for (Py_ssize_t i = 0; i < rows_buf->len / 8; i++)
        if (rows[i] < 0 || rows[i] >= nrec) {
            PyErr_Format(PyExc_IndexError, "%s: row out of range", what);
            return -1;
        }
    return 0;
}

/* Words from an event record's start to its first argument, from its header: header and time, an inline
   thread (two words, thread ref 0), an inline category and name (their streams' words). */
static inline int64_t args_skip(uint64_t h)
{
    const unsigned tref = (h >> 24) & 0xFF, cref = (h >> 32) & 0xFFFF, nref = (unsigned)(h >> 48);
    int64_t skip = 2 + (tref == 0 ? 2 : 0);
    if (cref & 0x8000)
        skip += ((int64_t)(cref & 0x7FFF) + 7) >> 3;
    if (nref & 0x8000)
        skip += ((int64_t)(nref & 0x7FFF) + 7) >> 3;
    return skip;
}

/* The argument count of the record at word `at` whose header says `nargs`: the reader's cut of it where
   cut_words (int64, ascending) holds `at` (binary search), else `nargs`. */
static inline unsigned cut_count(const int64_t *cut_words, const uint8_t *cut_nargs, Py_ssize_t ncut, int64_t at,
                                 unsigned nargs)
{
    Py_ssize_t lo = 0, hi = ncut;
    while (lo < hi) {
        const Py_ssize_t mid = lo + (hi - lo) / 2;
        if (cut_words[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ncut && cut_words[lo] == at ? cut_nargs[lo] : nargs;
}

/* One argument's header fields, read at word p of a record ending at word e (of n words): its header, name
   ref, the words of an inline name, and the word after it. */
typedef struct {
    uint64_t h;
    int64_t ref, name_words, after;
} ArgHead;

/* The argument at word p (p < e, 0 <= p < n): 1 with its fields, or 0 when it ends the walk (size 0, past its
   record or the words, or an inline name past its size: the reader's rules, as the numpy walk's). */
static inline int arg_head(const uint64_t *words, int64_t n, int64_t p, int64_t e, ArgHead *a)
{
    a->h = words[p];
    const int64_t size = (int64_t)((a->h >> 4) & 0xFFF);
    a->ref = (int64_t)((a->h >> 16) & 0xFFFF);
    a->name_words = a->ref >= 0x8000 ? ((a->ref & 0x7FFF) + 7) >> 3 : 0;
    a->after = p + size;
    return size > 0 && a->after <= e && 1 + a->name_words <= size && a->after <= n;
}

/* words ahead of the chain that frame_split prefetches (512 bytes: ~18 records of a usual trace) */
#define PREFETCH_WORDS 64

PyDoc_STRVAR(frame_split_doc,
"frame_split(words, p, stop, ev, ev_count, other, other_types, other_count, wide) -> (ev_count, other_count, p, bad)\n\n"
"Walk the record chain from word p while p < stop (each header gives its record's size: the 12-bit field, the\n"
"32-bit one for a large record, type 15), sorting the records as it goes: event records' starts (type 4) go\n"
"to ev[ev_count:], every other record's\n"
"start to other[other_count:] with its type in other_types (uint8; 16 for a zero word, read as one word of\n"
"padding). Starts are uint32, or int64 when wide. A header whose size is 0 and that is not a zero word ends\n"
"the walk there: bad is 1 and p is its position (else bad is 0 and p is where the chain left, >= stop).");

static PyObject *frame_split(PyObject *self, PyObject *args)
{
    Py_buffer w, ev, ot, oty;
    Py_ssize_t p, stop, ec, oc;
    int wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnw*nw*w*np", &w, &p, &stop, &ev, &ec, &ot, &oty, &oc, &wide))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t isz = wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&ev, isz, "ev") < 0 || check_buffer(&ot, isz, "other") < 0)
        goto done;
    Py_ssize_t n = w.len / 8, ecap = ev.len / isz, ocap = ot.len / isz;
    if (oty.len < ocap)
        ocap = oty.len;
    if (stop > n)
        stop = n;
    if (p < 0 || ec < 0 || oc < 0 || ec > ecap || oc > ocap) {
        PyErr_SetString(PyExc_ValueError, "frame_split: position or count out of range");
        goto done;
    }
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        uint8_t *types = (uint8_t *)oty.buf;
        uint64_t q = (uint64_t)p;
        const uint64_t end = (uint64_t)(stop > 0 ? stop : 0);
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        while (q < end) {
            /* the chain's loads depend on each other: fetch the lines a few hundred bytes ahead, where the
               chain will be in a few dozen records (a hint: it never faults, and is skipped near the end) */
            if (q + PREFETCH_WORDS < end)
                __builtin_prefetch(words + q + PREFETCH_WORDS);
            const uint64_t h = words[q];
            const unsigned type = (unsigned)(h & 0xF);
            uint64_t size = type == 15 ? (h >> 4) & 0xFFFFFFFFu : (h >> 4) & 0xFFF;
            unsigned kind = type;
            if (size == 0) {
                if (h != 0) {
                    bad = 1;
                    break;
                }
                kind = 16; /* padding */
                size = 1;
            }
            if (kind == 4) {
                if (ec >= ecap)
                    break;
                if (wide)
                    ((int64_t *)ev.buf)[ec++] = (int64_t)q;
                else
                    ((uint32_t *)ev.buf)[ec++] = (uint32_t)q;
            } else {
                if (oc >= ocap)
                    break;
                if (wide)
                    ((int64_t *)ot.buf)[oc] = (int64_t)q;
                else
                    ((uint32_t *)ot.buf)[oc] = (uint32_t)q;
                types[oc++] = (uint8_t)kind;
            }
            q += size;
        }
        Py_END_ALLOW_THREADS
        if (q > (uint64_t)PY_SSIZE_T_MAX)
            q = (uint64_t)PY_SSIZE_T_MAX;
        result = Py_BuildValue("nnni", ec, oc, (Py_ssize_t)q, bad);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&ev);
    PyBuffer_Release(&ot);
    PyBuffer_Release(&oty);
    return result;
}

PyDoc_STRVAR(walk_args_doc,
"walk_args(words, first, nargs, end, ok, after, nargs_eff, status) -> int\n\n"
"Step over each record's arguments: for row i with ok[i] (uint8) and nargs[i] > 0 (uint8), start at\n"
"word first[i] (int64) and add each argument's size (bits 4..15 of its header) until nargs[i] are\n"
"passed. Writes after[i] (int64: the word after the last argument passed) and nargs_eff[i] (uint8: the\n"
"arguments that count: all of them unless one of size 0 ended them). status[i] (uint8): 0 fine, else\n"
"16 * reason + k for the k-th argument (from 0): reason 1 an argument of size 0 ended the arguments,\n"
"reason 2 the argument runs past end[i] (int64; the record is to be dropped, after[i] is where that\n"
"argument starts). Returns the number of rows whose status is not 0 (the caller warns about those).");

static PyObject *walk_args(PyObject *self, PyObject *args)
{
    Py_buffer w, fi, na, en, ok, af, ne, stt;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*w*w*", &w, &fi, &na, &en, &ok, &af, &ne, &stt))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&fi, 8, "first") < 0 ||
        check_buffer(&en, 8, "end") < 0 || check_buffer(&af, 8, "after") < 0)
        goto done;
    Py_ssize_t m = fi.len / 8;
    if (na.len != m || en.len / 8 != m || ok.len != m || af.len / 8 != m || ne.len != m || stt.len != m) {
        PyErr_SetString(PyExc_ValueError, "walk_args: the row buffers differ in length");
        goto done;
    }
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *first = (const int64_t *)fi.buf, *endw = (const int64_t *)en.buf;
        const uint8_t *nargs = (const uint8_t *)na.buf, *okb = (const uint8_t *)ok.buf;
        int64_t *after = (int64_t *)af.buf;
        uint8_t *neff = (uint8_t *)ne.buf, *status = (uint8_t *)stt.buf;
        Py_ssize_t flagged = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++)
            flagged += walk_one(words, n, first[i], okb[i] ? nargs[i] : 0, nargs[i], endw[i], &after[i],
                                &neff[i], &status[i]);
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(flagged);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&fi);
    PyBuffer_Release(&na);
    PyBuffer_Release(&en);
    PyBuffer_Release(&ok);
    PyBuffer_Release(&af);
    PyBuffer_Release(&ne);
    PyBuffer_Release(&stt);
    return result;
}

PyDoc_STRVAR(event_block_doc,
"event_block(words, pos, head, ticks, last, after, nargs_eff, status) -> int\n\n"
"The words of the event records at pos (int64, ascending) in one pass: head[i] its header, ticks[i] the\n"
"word after it, last[i] the record's last word (uint64 each, read clipped to the file as numpy's\n"
"take(mode='clip') does), and the argument walk of walk_args for the records that can have arguments:\n"
"size >= 2 words, event type <= 10, inline thread and strings inside the record. For the others\n"
"after[i] is where their arguments would start, nargs_eff[i] their argument count, status[i] 0.");

static PyObject *event_block(PyObject *self, PyObject *args)
{
    Py_buffer w, po, hd, tk, ls, af, ne, stt;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*w*w*w*w*", &w, &po, &hd, &tk, &ls, &af, &ne, &stt))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&po, 8, "pos") < 0 || check_buffer(&hd, 8, "head") < 0 ||
        check_buffer(&tk, 8, "ticks") < 0 || check_buffer(&ls, 8, "last") < 0 || check_buffer(&af, 8, "after") < 0)
        goto done;
    Py_ssize_t m = po.len / 8;
    if (hd.len / 8 != m || tk.len / 8 != m || ls.len / 8 != m || af.len / 8 != m || ne.len != m || stt.len != m) {
        PyErr_SetString(PyExc_ValueError, "event_block: the row buffers differ in length");
        goto done;
    }
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *pos = (const int64_t *)po.buf;
        uint64_t *head = (uint64_t *)hd.buf, *ticks = (uint64_t *)tk.buf, *last = (uint64_t *)ls.buf;
        int64_t *after = (int64_t *)af.buf;
        uint8_t *neff = (uint8_t *)ne.buf, *status = (uint8_t *)stt.buf;
        Py_ssize_t flagged = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t p = pos[i];
            const uint64_t h = word_at(words, n, p);
            const int64_t size = (int64_t)((h >> 4) & 0xFFF), end = p + size;
            const unsigned kind = (h >> 16) & 0xF, nargs = (h >> 20) & 0xF;
            head[i] = h;
            ticks[i] = word_at(words, n, p + 1);
            last[i] = word_at(words, n, end - 1);
            const int64_t a = p + args_skip(h);
            const int ok = size >= 2 && kind <= 10 && a <= end;
            flagged += walk_one(words, n, a, ok ? nargs : 0, (uint8_t)nargs, end, &after[i], &neff[i], &status[i]);
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(flagged);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&po);
    PyBuffer_Release(&hd);
    PyBuffer_Release(&tk);
    PyBuffer_Release(&ls);
    PyBuffer_Release(&af);
    PyBuffer_Release(&ne);
    PyBuffer_Release(&stt);
    return result;
}

PyDoc_STRVAR(arg_columns_doc,
"arg_columns(words, pos, end, nargs, act, index, ref, stream, type, raw, value_at) -> int\n\n"
"The arguments of records as columns, record by record and in argument order: record i's arguments start\n"
"at word pos[i] (int64) and must end by end[i] (int64); up to nargs[i] (uint8) of them are read, stopping\n"
"at one whose size is 0, that runs past end[i] or the words, or whose inline name runs past it. For each\n"
"argument: act (int64) = i, index (uint8) = its position, ref (int64) = its name ref, stream (int64) = the\n"
"word after its header, type (uint8), raw (uint64) = the word after the name for 64-bit types (int64,\n"
"uint64, double, pointer, koid; 0 when the argument has no such word), else bits 32..63 of the header,\n"
"value_at (int64) = where its value starts. Returns how many arguments were written (the outputs hold\n"
"sum(nargs)); fxscope.formats.fxt.arg_columns.event_arg_columns is the numpy walk it replaces.");

static PyObject *arg_columns(PyObject *self, PyObject *args)
{
    Py_buffer w, po, en, na, o_act, o_idx, o_ref, o_str, o_typ, o_raw, o_val;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*w*w*w*w*w*", &w, &po, &en, &na, &o_act, &o_idx, &o_ref, &o_str,
                          &o_typ, &o_raw, &o_val))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&po, 8, "pos") < 0 || check_buffer(&en, 8, "end") < 0 ||
        check_buffer(&o_act, 8, "act") < 0 || check_buffer(&o_ref, 8, "ref") < 0 ||
        check_buffer(&o_str, 8, "stream") < 0 || check_buffer(&o_raw, 8, "raw") < 0 ||
        check_buffer(&o_val, 8, "value_at") < 0)
        goto done;
    Py_ssize_t m = po.len / 8, cap = o_act.len / 8;
    if (en.len / 8 != m || na.len != m) {
        PyErr_SetString(PyExc_ValueError, "arg_columns: pos, end and nargs differ in length");
        goto done;
    }
    if (o_idx.len != cap || o_ref.len / 8 != cap || o_str.len / 8 != cap || o_typ.len != cap ||
        o_raw.len / 8 != cap || o_val.len / 8 != cap) {
        PyErr_SetString(PyExc_ValueError, "arg_columns: the outputs differ in length");
        goto done;
    }
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *pos = (const int64_t *)po.buf, *endw = (const int64_t *)en.buf;
        const uint8_t *nargs = (const uint8_t *)na.buf;
        int64_t *act = (int64_t *)o_act.buf, *ref = (int64_t *)o_ref.buf, *stream = (int64_t *)o_str.buf;
        int64_t *value_at = (int64_t *)o_val.buf;
        uint8_t *index = (uint8_t *)o_idx.buf, *type = (uint8_t *)o_typ.buf;
        uint64_t *raw = (uint64_t *)o_raw.buf;
        Py_ssize_t c = 0;
        /* word types: int64 (3), uint64 (4), double (5), pointer (7), koid (8) */
        const unsigned word_types = (1u << 3) | (1u << 4) | (1u << 5) | (1u << 7) | (1u << 8);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            int64_t p = pos[i];
            const int64_t e = endw[i];
            for (unsigned k = 0; k < nargs[i] && p < e && p >= 0 && p < n && c < cap; k++) {
                ArgHead a;
                if (!arg_head(words, n, p, e, &a))
                    break;
                const unsigned t = (unsigned)(a.h & 0xF);
                const int64_t v = p + 1 + a.name_words;
                uint64_t value;
                if ((word_types >> t) & 1)
                    value = v < a.after ? words[v < n ? v : n - 1] : 0;
                else
                    value = a.h >> 32;
                act[c] = i;
                index[c] = (uint8_t)k;
                ref[c] = a.ref;
                stream[c] = p + 1;
                type[c] = (uint8_t)t;
                raw[c] = value;
                value_at[c] = v;
                c++;
                p = a.after;
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(c);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&po);
    PyBuffer_Release(&en);
    PyBuffer_Release(&na);
    PyBuffer_Release(&o_act);
    PyBuffer_Release(&o_idx);
    PyBuffer_Release(&o_ref);
    PyBuffer_Release(&o_str);
    PyBuffer_Release(&o_typ);
    PyBuffer_Release(&o_raw);
    PyBuffer_Release(&o_val);
    return result;
}

PyDoc_STRVAR(gather4_doc,
"gather4(words, pos, w0, w1, w2, w3) -> None\n\n"
"The first four words of each record at pos (int64): w0[i] = words[pos[i]], ..., w3[i] = words[pos[i] + 3]\n"
"(uint64 each, read clipped to the file as numpy's take(mode='clip') does): a scheduling record's header,\n"
"time and thread words in one pass.");

static PyObject *gather4(PyObject *self, PyObject *args)
{
    Py_buffer w, po, o0, o1, o2, o3;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*w*w*", &w, &po, &o0, &o1, &o2, &o3))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&po, 8, "pos") < 0 || check_buffer(&o0, 8, "w0") < 0 ||
        check_buffer(&o1, 8, "w1") < 0 || check_buffer(&o2, 8, "w2") < 0 || check_buffer(&o3, 8, "w3") < 0)
        goto done;
    Py_ssize_t m = po.len / 8;
    if (o0.len / 8 != m || o1.len / 8 != m || o2.len / 8 != m || o3.len / 8 != m) {
        PyErr_SetString(PyExc_ValueError, "gather4: the row buffers differ in length");
        goto done;
    }
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *pos = (const int64_t *)po.buf;
        uint64_t *a = (uint64_t *)o0.buf, *b = (uint64_t *)o1.buf, *c = (uint64_t *)o2.buf, *d = (uint64_t *)o3.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t p = pos[i];
            a[i] = word_at(words, n, p);
            b[i] = word_at(words, n, p + 1);
            c[i] = word_at(words, n, p + 2);
            d[i] = word_at(words, n, p + 3);
        }
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&po);
    PyBuffer_Release(&o0);
    PyBuffer_Release(&o1);
    PyBuffer_Release(&o2);
    PyBuffer_Release(&o3);
    return result;
}

PyDoc_STRVAR(typed_args_doc,
"typed_args(words, rows, first, nargs, atype, out_row, out_pos, out_head) -> int\n\n"
"The arguments of type atype among the first nargs[r] arguments of each record r in rows (int64, ascending;\n"
"first: int64 and nargs: uint8, indexed by r), whose blocks the reader's walk has checked: for each, its\n"
"record row, its header's word and the header (int64, int64, uint64), by record then argument. Returns how\n"
"many were written (the outputs hold at most the sum of nargs over rows; the walk stops when they are full).");

static PyObject *typed_args(PyObject *self, PyObject *args)
{
    Py_buffer w, ro, fi, na, orow, opos, ohead;
    int atype;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*iw*w*w*", &w, &ro, &fi, &na, &atype, &orow, &opos, &ohead))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&ro, 8, "rows") < 0 || check_buffer(&fi, 8, "first") < 0 ||
        check_buffer(&orow, 8, "out_row") < 0 || check_buffer(&opos, 8, "out_pos") < 0 ||
        check_buffer(&ohead, 8, "out_head") < 0)
        goto done;
    Py_ssize_t m = ro.len / 8, nrec = fi.len / 8, cap = orow.len / 8;
    if (na.len != nrec || opos.len / 8 != cap || ohead.len / 8 != cap) {
        PyErr_SetString(PyExc_ValueError, "typed_args: buffer lengths do not match");
        goto done;
    }
    {
        if (check_rows(&ro, nrec, "typed_args") < 0)
            goto done;
        const int64_t *rows = (const int64_t *)ro.buf;
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *first = (const int64_t *)fi.buf;
        const uint8_t *nargs = (const uint8_t *)na.buf;
        int64_t *out_row = (int64_t *)orow.buf, *out_pos = (int64_t *)opos.buf;
        uint64_t *out_head = (uint64_t *)ohead.buf;
        Py_ssize_t c = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m && c < cap; i++) {
            const int64_t r = rows[i];
            int64_t a = first[r];
            for (unsigned k = 0; k < nargs[r]; k++) {
                const uint64_t h = word_at(words, n, a);
                const int64_t size = (int64_t)((h >> 4) & 0xFFF);
                if (size == 0)
                    break; /* (the walk cut the count there already) */
                if ((int)(h & 0xF) == atype) {
                    if (c >= cap)
                        break;
                    out_row[c] = r;
                    out_pos[c] = a;
                    out_head[c++] = h;
                }
                a += size;
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(c);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&ro);
    PyBuffer_Release(&fi);
    PyBuffer_Release(&na);
    PyBuffer_Release(&orow);
    PyBuffer_Release(&opos);
    PyBuffer_Release(&ohead);
    return result;
}

/* A division by one tick rate r (1 <= r < 2**33) as a multiply-high, an add and two shifts (Granlund and
   Montgomery, "Division by invariant integers using multiplication", 1994, figure 4.1): exact for every
   64-bit dividend. Why: a real trace's providers tick at 24 MHz and the like, and each of its event times
   took two 64-bit divisions (~25-40 cycles each on x86, not pipelined) to convert; the reciprocal is
   computed once per rate (rate_div_init, when a read meets a segment of another rate). */
typedef struct {
    int64_t rate; /* the rate the fields are for (0: none yet; every rate used is > 0) */
    uint64_t magic;
    unsigned sh1, sh2;
} RateDiv;

static inline void rate_div_init(RateDiv *d, int64_t rate)
{
    const uint64_t r = (uint64_t)rate;
    const unsigned l = r > 1 ? 64u - (unsigned)__builtin_clzll(r - 1) : 0u; /* ceil(log2 r), <= 33 */
    d->rate = rate;
    d->magic = (uint64_t)((((unsigned __int128)((1ull << l) - r)) << 64) / r) + 1u;
    d->sh1 = l < 1 ? l : 1u;
    d->sh2 = l > 0 ? l - 1u : 0u;
}

/* floor(t / d->rate) for any t (see RateDiv) */
static inline __attribute__((always_inline)) uint64_t rate_div(uint64_t t, const RateDiv *d)
{
    const uint64_t t1 = (uint64_t)(((unsigned __int128)d->magic * t) >> 64);
    return (t1 + ((t - t1) >> d->sh1)) >> d->sh2;
}

/* Nanoseconds from ticks at `rate` ticks per second (> 0), exactly as fxscope.formats.fxt.ticks.convert_rate:
   in uint64 arithmetic below 2**33 ticks per second (wrapping as numpy's does; the divisions by the rate
   through `d`, set up for it here when it is for another rate), else exact and clamped. */
static inline __attribute__((always_inline)) int64_t ticks_ns_div(uint64_t t, int64_t rate, RateDiv *d)
{
    if (rate == 1000000000)
        return (int64_t)t;
    const uint64_t r = (uint64_t)rate;
    if (r < (1ull << 33)) {
        if (d->rate != rate)
            rate_div_init(d, rate);
        const uint64_t q = rate_div(t, d);
        /* (t - q * r: the remainder, below 2**33; times 1e9 below 2**63) */
        return (int64_t)(q * 1000000000ull + rate_div((t - q * r) * 1000000000ull, d));
    }
    const unsigned __int128 v = (unsigned __int128)t * 1000000000u / r;
    return v > (unsigned __int128)INT64_MAX ? INT64_MAX : (int64_t)v;
}

PyDoc_STRVAR(ticks_to_ns_doc,
"ticks_to_ns(ticks, rate, out) -> None\n\n"
"out[i] (int64) = ticks[i] (uint64) in nanoseconds at `rate` ticks per second (> 0), as the kernels here\n"
"convert event times (ticks.convert_rate's formula): what the tests compare with Python's integers.");

static PyObject *ticks_to_ns(PyObject *self, PyObject *args)
{
    Py_buffer tb, ob;
    long long rate;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*Lw*", &tb, &rate, &ob))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&tb, 8, "ticks") < 0 || check_buffer(&ob, 8, "out") < 0)
        goto done;
    if (rate <= 0 || tb.len != ob.len) {
        PyErr_SetString(PyExc_ValueError, "ticks_to_ns: a rate that is not positive, or ticks and out differ in length");
        goto done;
    }
    {
        const uint64_t *t = (const uint64_t *)tb.buf;
        int64_t *out = (int64_t *)ob.buf;
        const Py_ssize_t m = tb.len / 8;
        RateDiv d = {0};
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++)
            out[i] = ticks_ns_div(t[i], (int64_t)rate, &d);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&tb);
    PyBuffer_Release(&ob);
    return result;
}

/* The provider segment of record word w: the last segment starting at or before it (the first when none
   does), as numpy's searchsorted(seg_pos, w, side="right") - 1 clamped to 0; `s` (the previous row's answer)
   is tried first, so ascending rows cost one comparison or two. */
static inline __attribute__((always_inline)) Py_ssize_t segment_of(const int64_t *sp, Py_ssize_t ns, int64_t w, Py_ssize_t s)
{
    if (s < ns && sp[s] <= w && (s + 1 == ns || sp[s + 1] > w))
        return s;
    Py_ssize_t lo = 0, hi = ns;
    while (lo < hi) {
        const Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sp[mid] <= w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

/* Provider segments: as many first words (seg_pos, int64) as tick rates (seg_tps, int64), each rate > 0. */
static int check_segments(Py_buffer *sp, Py_buffer *st, const char *what)
{
    if (check_buffer(sp, 8, "seg_pos") < 0 || check_buffer(st, 8, "seg_tps") < 0)
        return -1;
    if (sp->len != st->len) {
        PyErr_Format(PyExc_ValueError, "%s: seg_pos and seg_tps differ in length", what);
        return -1;
    }
    const int64_t *tps = (const int64_t *)st->buf;
    for (Py_ssize_t i = 0; i < st->len / 8; i++)
        if (tps[i] <= 0) {
            PyErr_Format(PyExc_ValueError, "%s: a tick rate is not positive", what);
            return -1;
        }
    return 0;
}

/* The shared checks of event_times and event_data: the rows (a buffer, each in [0, nrec), or None: the run
   start..start+m-1, inside [0, nrec)) and the provider segments (as many positions as rates, each rate > 0). */
static int check_rows_segments(PyObject *rows_obj, Py_buffer *ro, Py_ssize_t start, Py_ssize_t m, Py_ssize_t nrec,
                               Py_buffer *sp, Py_buffer *st, const char *what)
{
    if (check_segments(sp, st, what) < 0)
        return -1;
    if (rows_obj == Py_None) {
        if (start < 0 || start > nrec || m > nrec - start) {
            PyErr_Format(PyExc_IndexError, "%s: run out of range", what);
            return -1;
        }
        return 0;
    }
    if (check_buffer(ro, 8, "rows") < 0)
        return -1;
    if (ro->len / 8 != m) {
        PyErr_Format(PyExc_ValueError, "%s: rows and out differ in length", what);
        return -1;
    }
    return check_rows(ro, nrec, what);
}

static inline int64_t record_at(const void *rw, int wide, int64_t row)
{
    return wide ? ((const int64_t *)rw)[row] : (int64_t)((const uint32_t *)rw)[row];
}

/* Where a read is among the provider segments: the segment of the last record read (s), the words it spans
   ([lo, hi): a record there needs no search, one comparison pair a row) and the reciprocal of the last tick
   rate other than 1e9 met (RateDiv) */
typedef struct {
    Py_ssize_t s;
    int64_t lo, hi;
    RateDiv div;
} SegCursor;

static inline void seg_cursor_init(SegCursor *c)
{
    c->s = 0;
    c->lo = 1; /* (no range yet: the first record searches) */
    c->hi = 0;
    c->div = (RateDiv){0, 0, 0, 0};
}

/* The tick rate of the record at word w: that of segment_of's segment (the same segment for every w, as the
   cached range is exactly segment_of's own shortcut); *c updated. ns > 0. */
static inline __attribute__((always_inline)) int64_t rate_at(const int64_t *sp, const int64_t *st, Py_ssize_t ns,
                                                              int64_t w, SegCursor *c)
{
    if (!(w >= c->lo && w < c->hi)) {
        const Py_ssize_t s = segment_of(sp, ns, w, c->s);
        c->s = s;
        if (sp[s] <= w && (s + 1 == ns || sp[s + 1] > w)) {
            c->lo = sp[s];
            c->hi = s + 1 == ns ? INT64_MAX : sp[s + 1];
        } else { /* (a word before the first segment, or segments out of order: nothing cached) */
            c->lo = 1;
            c->hi = 0;
        }
    }
    return st[c->s];
}

/* The time of the event record at word `at` (its second word) in nanoseconds; `c` where the read is among
   the segments (rate_at), updated: what event_times reads a row. */
static inline __attribute__((always_inline)) int64_t time_at(const uint64_t *words, int64_t n, int64_t at,
                                                              const int64_t *seg_pos, const int64_t *seg_tps,
                                                              Py_ssize_t ns, SegCursor *c)
{
    const uint64_t t = word_at(words, n, at + 1);
    if (ns == 0)
        return (int64_t)t;
    return ticks_ns_div(t, rate_at(seg_pos, seg_tps, ns, at, c), &c->div);
}

/* The data word of an event of kind k whose record starts at word `at` (see event_data); `c` as time_at's. */
static inline __attribute__((always_inline)) uint64_t data_at(const uint64_t *words, int64_t n, int64_t at,
                                                               unsigned k, const int64_t *seg_pos,
                                                               const int64_t *seg_tps, Py_ssize_t ns, SegCursor *c)
{
    if (k != 1 && k < 4)
        return 0;
    const uint64_t h = word_at(words, n, at);
    const uint64_t v = word_at(words, n, at + (int64_t)((h >> 4) & 0xFFF) - 1);
    if (k != 4 || !ns)
        return v;
    return (uint64_t)ticks_ns_div(v, rate_at(seg_pos, seg_tps, ns, at, c), &c->div);
}

/* rows ahead whose record a gather of event rows (event_times, event_data, event_times_data) asks the memory
   for while it reads a row: the rows of one kind are spread over the file, each record a cache miss (and
   every few rows a TLB miss) that the hardware's prefetch, which stops at page ends, does not see coming;
   without the hint the loop waits for a few of them at a time (10M events: a time 31 ns a row) */
#define PREFETCH_ROWS 32
/* the same for a run of rows (event_times of a run: records in file order, each the next few words on: the
   hardware's prefetch follows them but stops at each page's end; 64 rows ahead: a time 6.9 -> 4.0 ns a row
   at 10M events) */
#define PREFETCH_RUN_ROWS 64

/* Ask for the record at word `at` (clamped to the file; a hint: it never faults) */
static inline __attribute__((always_inline)) void prefetch_word(const uint64_t *words, int64_t n, int64_t at)
{
    if (n)
        __builtin_prefetch(&words[at < 0 ? 0 : (at >= n ? n - 1 : at)]);
}

PyDoc_STRVAR(event_times_doc,
"event_times(words, record_word, wide, rows, start, seg_pos, seg_tps, out) -> None\n\n"
"out[i] (int64) = the time of event row r (rows[i], int64, or start + i when rows is None): the word after\n"
"its record's first word record_word[r] (uint32, or int64 when wide), read clipped to the file, converted\n"
"to nanoseconds at the tick rate of the provider segment the record is in (seg_pos: each segment's first\n"
"word, ascending; seg_tps: its ticks per second; none: nanoseconds), as ticks.convert_rate does: the\n"
"compiled read of fxscope.formats.fxt.event_times.EventTimes.");

static PyObject *event_times(PyObject *self, PyObject *args)
{
    Py_buffer w, rw, ro = {0}, sp, st, ou;
    PyObject *rows_obj;
    Py_ssize_t start;
    int wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*pOny*y*w*", &w, &rw, &wide, &rows_obj, &start, &sp, &st, &ou))
        return NULL;
    PyObject *result = NULL;
    if (rows_obj != Py_None && PyObject_GetBuffer(rows_obj, &ro, PyBUF_SIMPLE) < 0)
        goto release;
    Py_ssize_t isz = wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&rw, isz, "record_word") < 0 ||
        check_buffer(&ou, 8, "out") < 0)
        goto done;
    Py_ssize_t m = ou.len / 8;
    if (check_rows_segments(rows_obj, &ro, start, m, rw.len / isz, &sp, &st, "event_times") < 0)
        goto done;
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *rows = rows_obj == Py_None ? NULL : (const int64_t *)ro.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_tps = (const int64_t *)st.buf;
        const Py_ssize_t ns = sp.len / 8;
        int64_t *out = (int64_t *)ou.buf;
        SegCursor c;
        seg_cursor_init(&c);
        Py_BEGIN_ALLOW_THREADS
        if (rows) {
            for (Py_ssize_t i = 0; i < m; i++) {
                if (i + PREFETCH_ROWS < m) /* (rows valid, checked above) */
                    prefetch_word(words, n, record_at(rw.buf, wide, rows[i + PREFETCH_ROWS]) + 1);
                out[i] = time_at(words, n, record_at(rw.buf, wide, rows[i]), seg_pos, seg_tps, ns, &c);
            }
        } else {
            for (Py_ssize_t i = 0; i < m; i++) {
                if (i + PREFETCH_RUN_ROWS < m)
                    prefetch_word(words, n, record_at(rw.buf, wide, start + i + PREFETCH_RUN_ROWS) + 1);
                out[i] = time_at(words, n, record_at(rw.buf, wide, start + i), seg_pos, seg_tps, ns, &c);
            }
        }
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
done:
    if (rows_obj != Py_None)
        PyBuffer_Release(&ro);
release:
    PyBuffer_Release(&w);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&st);
    PyBuffer_Release(&ou);
    return result;
}

PyDoc_STRVAR(event_data_doc,
"event_data(words, record_word, wide, kind, rows, start, seg_pos, seg_tps, out) -> None\n\n"
"out[i] (uint64) = the data word of event row r (rows[i], int64, or start + i when rows is None): for an\n"
"event of kind[r] (uint8, one a record) 1 (counter) or >= 4 (complete, async, flow) the last word of its\n"
"record (record_word as in event_times; size from the header's 12-bit field, reads clipped to the file),\n"
"a complete event's (kind 4) converted from ticks to nanoseconds at its segment's rate; 0 for the other\n"
"kinds. The exceptions (EventData.exc_rows) are the caller's: the compiled read of\n"
"fxscope.formats.fxt.event_data.EventData.");

static PyObject *event_data(PyObject *self, PyObject *args)
{
    Py_buffer w, rw, kd, ro = {0}, sp, st, ou;
    PyObject *rows_obj;
    Py_ssize_t start;
    int wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*py*Ony*y*w*", &w, &rw, &wide, &kd, &rows_obj, &start, &sp, &st, &ou))
        return NULL;
    PyObject *result = NULL;
    if (rows_obj != Py_None && PyObject_GetBuffer(rows_obj, &ro, PyBUF_SIMPLE) < 0)
        goto release;
    Py_ssize_t isz = wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&rw, isz, "record_word") < 0 ||
        check_buffer(&ou, 8, "out") < 0)
        goto done;
    Py_ssize_t m = ou.len / 8, nrec = rw.len / isz;
    if (kd.len != nrec) {
        PyErr_SetString(PyExc_ValueError, "event_data: kind and record_word differ in length");
        goto done;
    }
    if (check_rows_segments(rows_obj, &ro, start, m, nrec, &sp, &st, "event_data") < 0)
        goto done;
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const uint8_t *kind = (const uint8_t *)kd.buf;
        const int64_t *rows = rows_obj == Py_None ? NULL : (const int64_t *)ro.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_tps = (const int64_t *)st.buf;
        const Py_ssize_t ns = sp.len / 8;
        uint64_t *out = (uint64_t *)ou.buf;
        SegCursor c;
        seg_cursor_init(&c);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t r = rows ? rows[i] : start + i;
            if (rows && i + PREFETCH_ROWS < m) { /* (the rows of the kinds that have a data word) */
                const int64_t ra = rows[i + PREFETCH_ROWS];
                if (kind[ra] == 1 || kind[ra] >= 4)
                    prefetch_word(words, n, record_at(rw.buf, wide, ra));
            }
            const unsigned k = kind[r];
            out[i] = k != 1 && k < 4 ? 0 : data_at(words, n, record_at(rw.buf, wide, r), k, seg_pos, seg_tps, ns, &c);
        }
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
done:
    if (rows_obj != Py_None)
        PyBuffer_Release(&ro);
release:
    PyBuffer_Release(&w);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&kd);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&st);
    PyBuffer_Release(&ou);
    return result;
}

/* Every row of `rows` (int32, int64 when rows_wide) a valid index of nrec records: else IndexError. */
static int check_rows_of_width(const Py_buffer *ro, int rows_wide, Py_ssize_t nrec, const char *what)
{
    const Py_ssize_t m = ro->len / (rows_wide ? 8 : 4);
    for (Py_ssize_t i = 0; i < m; i++) {
        const int64_t r = rows_wide ? ((const int64_t *)ro->buf)[i] : ((const int32_t *)ro->buf)[i];
        if (r < 0 || r >= nrec) {
            PyErr_Format(PyExc_IndexError, "%s: row out of range", what);
            return -1;
        }
    }
    return 0;
}

PyDoc_STRVAR(event_times_data_doc,
"event_times_data(words, record_word, wide, kind, rows, rows_wide, seg_pos, seg_tps, out_ts, out_data) -> None\n\n"
"event_times and event_data of the same rows (int64 when rows_wide, else int32; each a valid row) in one\n"
"pass: each record's header and words read once (a build that needs both columns of a row set read the\n"
"file twice). out_ts int64, out_data uint64, as long as rows; the data's exceptions (EventData.exc_rows)\n"
"are the caller's.");

static PyObject *event_times_data(PyObject *self, PyObject *args)
{
    Py_buffer w, rw, kd, ro, sp, st, ot, od;
    int wide, rows_wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*py*y*py*y*w*w*", &w, &rw, &wide, &kd, &ro, &rows_wide, &sp, &st, &ot, &od))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t isz = wide ? 8 : 4, rsz = rows_wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&rw, isz, "record_word") < 0 ||
        check_buffer(&ro, rsz, "rows") < 0 || check_buffer(&ot, 8, "out_ts") < 0 ||
        check_buffer(&od, 8, "out_data") < 0)
        goto done;
    Py_ssize_t m = ot.len / 8, nrec = rw.len / isz;
    if (kd.len != nrec || od.len != ot.len || ro.len / rsz != m) {
        PyErr_SetString(PyExc_ValueError, "event_times_data: kind and record_word, or rows and the outputs, differ in length");
        goto done;
    }
    /* (the segments' checks; the run of no rows asked for there is always in range) */
    if (check_rows_segments(Py_None, NULL, 0, 0, nrec, &sp, &st, "event_times_data") < 0)
        goto done;
    if (check_rows_of_width(&ro, rows_wide, nrec, "event_times_data") < 0)
        goto done;
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const uint8_t *kind = (const uint8_t *)kd.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_tps = (const int64_t *)st.buf;
        const Py_ssize_t ns = sp.len / 8;
        int64_t *out_ts = (int64_t *)ot.buf;
        uint64_t *out_data = (uint64_t *)od.buf;
        SegCursor c;
        seg_cursor_init(&c);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t r = rows_wide ? ((const int64_t *)ro.buf)[i] : ((const int32_t *)ro.buf)[i];
            const int64_t at = record_at(rw.buf, wide, r);
            const unsigned k = kind[r];
            if (i + PREFETCH_ROWS < m) { /* (rows valid, checked above) */
                const int64_t ra = rows_wide ? ((const int64_t *)ro.buf)[i + PREFETCH_ROWS]
                                             : ((const int32_t *)ro.buf)[i + PREFETCH_ROWS];
                prefetch_word(words, n, record_at(rw.buf, wide, ra));
            }
            out_ts[i] = time_at(words, n, at, seg_pos, seg_tps, ns, &c);
            out_data[i] = k != 1 && k < 4 ? 0 : data_at(words, n, at, k, seg_pos, seg_tps, ns, &c);
        }
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&kd);
    PyBuffer_Release(&ro);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&st);
    PyBuffer_Release(&ot);
    PyBuffer_Release(&od);
    return result;
}

PyDoc_STRVAR(arg_blocks_doc,
"arg_blocks(words, record_word, wide, rows, record, pos, end, nargs) -> None\n\n"
"The argument block of each event row rows[i] (int64, each a valid index of record_word: uint32, or int64\n"
"when wide), from its header (read clipped to the file): record[i] its record's first word, pos[i] its\n"
"first argument's word (after the header, the time, an inline thread and inline category and name: the\n"
"header's fields, as columns._header_args_skip), end[i] the word after the record (12-bit size field)\n"
"(int64 each), nargs[i] (uint8) the header's argument count (the caller applies the reader's cuts): what\n"
"arg_columns.event_arg_columns gathers before its walk, in one pass.");

static PyObject *arg_blocks(PyObject *self, PyObject *args)
{
    Py_buffer w, rw, ro, o_rec, o_pos, o_end, o_na;
    int wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*py*w*w*w*w*", &w, &rw, &wide, &ro, &o_rec, &o_pos, &o_end, &o_na))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t isz = wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&rw, isz, "record_word") < 0 ||
        check_buffer(&ro, 8, "rows") < 0 || check_buffer(&o_rec, 8, "record") < 0 ||
        check_buffer(&o_pos, 8, "pos") < 0 || check_buffer(&o_end, 8, "end") < 0)
        goto done;
    Py_ssize_t m = ro.len / 8, nrec = rw.len / isz;
    if (o_rec.len / 8 != m || o_pos.len / 8 != m || o_end.len / 8 != m || o_na.len != m) {
        PyErr_SetString(PyExc_ValueError, "arg_blocks: rows and the outputs differ in length");
        goto done;
    }
    {
        if (check_rows(&ro, nrec, "arg_blocks") < 0)
            goto done;
        const int64_t *rows = (const int64_t *)ro.buf;
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        int64_t *rec = (int64_t *)o_rec.buf, *pos = (int64_t *)o_pos.buf, *end = (int64_t *)o_end.buf;
        uint8_t *nargs = (uint8_t *)o_na.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t at = record_at(rw.buf, wide, rows[i]);
            const uint64_t h = word_at(words, n, at);
            rec[i] = at;
            pos[i] = at + args_skip(h);
            end[i] = at + (int64_t)((h >> 4) & 0xFFF);
            nargs[i] = (uint8_t)((h >> 20) & 0xF);
        }
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&ro);
    PyBuffer_Release(&o_rec);
    PyBuffer_Release(&o_pos);
    PyBuffer_Release(&o_end);
    PyBuffer_Release(&o_na);
    return result;
}

PyDoc_STRVAR(decode_codes_doc,
"decode_codes(index, values, out) -> None\n\n"
"out[i] = values[index[i]]: index uint8, values and out of one item size (2 or 4 bytes: int16 or int32\n"
"codes), at most 256 values. An index at or past len(values) raises IndexError (no read outside values):\n"
"fxscope.formats.fxt.coded_column.CodedColumn's values in one pass (numpy's take widens each index first).");

static PyObject *decode_codes(PyObject *self, PyObject *args)
{
    Py_buffer ix, va, ou;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*", &ix, &va, &ou))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t m = ix.len, size = m ? ou.len / m : 0;
    if (m == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    if ((size != 2 && size != 4) || ou.len != m * size || va.len % size != 0 || va.len / size > 256 ||
        ((uintptr_t)va.buf) % size != 0 || ((uintptr_t)ou.buf) % size != 0) {
        PyErr_SetString(PyExc_ValueError, "decode_codes: out must hold one 2- or 4-byte item an index, values at most 256 of them");
        goto done;
    }
    {
        const Py_ssize_t nv = va.len / size;
        const uint8_t *index = (const uint8_t *)ix.buf;
        unsigned top = 0;
        Py_BEGIN_ALLOW_THREADS
        if (size == 2) {
            int16_t lut[256] = {0};
            memcpy(lut, va.buf, (size_t)va.len);
            int16_t *out = (int16_t *)ou.buf;
            for (Py_ssize_t i = 0; i < m; i++) {
                top |= index[i] >= nv;
                out[i] = lut[index[i]];
            }
        } else {
            int32_t lut[256] = {0};
            memcpy(lut, va.buf, (size_t)va.len);
            int32_t *out = (int32_t *)ou.buf;
            for (Py_ssize_t i = 0; i < m; i++) {
                top |= index[i] >= nv;
                out[i] = lut[index[i]];
            }
        }
        Py_END_ALLOW_THREADS
        if (top) {
            PyErr_SetString(PyExc_IndexError, "decode_codes: an index is past the values");
            goto done;
        }
        result = Py_None;
        Py_INCREF(result);
    }
done:
    PyBuffer_Release(&ix);
    PyBuffer_Release(&va);
    PyBuffer_Release(&ou);
    return result;
}

/* rows ahead whose record event_fields prefetches */
#define ROWS_AHEAD 16

PyDoc_STRVAR(event_fields_doc,
"event_fields(words, pos, seg_pos, seg_tps, kind, nargs, tref, cref, nref, complete_end, odd_rows, odd_vals)\n"
"    -> (n_complete, n_odd, tmin, tmax) or None\n\n"
"The fields of the event records at pos (int64, ascending, inside the words) in one pass, for a block where\n"
"nothing needs a warning: header fields kind and nargs (uint8: bits 16..19, 20..23), tref (uint8), cref and\n"
"nref (uint16); the argument walk of event_block; each complete event's (kind 4) end in complete_end[:n] (int64\n"
"ns at its provider segment's rate, seg_pos/seg_tps as in event_times: its record's last word, or its data\n"
"word where that is not the last); the rows whose data word is not their record's last word, or an instant's\n"
"scope other than 0, in odd_rows/odd_vals[:n_odd] (int64 row, uint64 value: a complete event's in ns); the\n"
"earliest and latest event time (ns). None (the outputs half written) when some record of the block needs\n"
"the reader's checks: size below 2, an unknown type, inline fields past the record, an argument of size 0 or\n"
"past the record, no room for the data word, an instant's scope above 2 (records_events' numpy path then\n"
"reads the block, with its warnings). Every output holds len(pos) items.");

static PyObject *event_fields(PyObject *self, PyObject *args)
{
    Py_buffer w, po, sp, st, o_kind, o_nargs, o_tref, o_cref, o_nref, o_ce, o_or, o_ov;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*w*w*w*w*w*w*", &w, &po, &sp, &st, &o_kind, &o_nargs, &o_tref, &o_cref,
                          &o_nref, &o_ce, &o_or, &o_ov))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&po, 8, "pos") < 0 || check_buffer(&o_cref, 2, "cref") < 0 ||
        check_buffer(&o_nref, 2, "nref") < 0 || check_buffer(&o_ce, 8, "complete_end") < 0 ||
        check_buffer(&o_or, 8, "odd_rows") < 0 || check_buffer(&o_ov, 8, "odd_vals") < 0 ||
        check_segments(&sp, &st, "event_fields") < 0)
        goto done;
    Py_ssize_t m = po.len / 8;
    if (o_kind.len != m || o_nargs.len != m || o_tref.len != m || o_cref.len / 2 != m || o_nref.len / 2 != m ||
        o_ce.len / 8 != m || o_or.len / 8 != m || o_ov.len / 8 != m) {
        PyErr_SetString(PyExc_ValueError, "event_fields: the row buffers differ in length");
        goto done;
    }
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *pos = (const int64_t *)po.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_tps = (const int64_t *)st.buf;
        const Py_ssize_t ns = sp.len / 8;
        uint8_t *kind = (uint8_t *)o_kind.buf, *nargs = (uint8_t *)o_nargs.buf, *tref = (uint8_t *)o_tref.buf;
        uint16_t *cref = (uint16_t *)o_cref.buf, *nref = (uint16_t *)o_nref.buf;
        int64_t *cend = (int64_t *)o_ce.buf, *odd_rows = (int64_t *)o_or.buf;
        uint64_t *odd_vals = (uint64_t *)o_ov.buf;
        Py_ssize_t nc = 0, no = 0, s = 0;
        RateDiv div = {0};
        int64_t tmin = INT64_MAX, tmax = INT64_MIN;
        int clean = 1;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t p = pos[i];
            if (i + ROWS_AHEAD < m) { /* the record a few rows on (a hint: never faults) */
                const int64_t q = pos[i + ROWS_AHEAD];
                if (q >= 0 && q < n)
                    __builtin_prefetch(words + q);
            }
            const uint64_t h = word_at(words, n, p);
            const int64_t size = (int64_t)((h >> 4) & 0xFFF), end = p + size;
            const unsigned k = (h >> 16) & 0xF, na = (h >> 20) & 0xF;
            kind[i] = (uint8_t)k;
            nargs[i] = (uint8_t)na;
            tref[i] = (uint8_t)(h >> 24);
            cref[i] = (uint16_t)(h >> 32);
            nref[i] = (uint16_t)(h >> 48);
            int64_t a = p + args_skip(h);
            if (size < 2 || k > 10 || a > end) {
                clean = 0;
                break;
            }
            for (unsigned j = 0; j < na; j++) {
                const int64_t asz = (int64_t)((word_at(words, n, a) >> 4) & 0xFFF);
                if (asz == 0 || a + asz > end) {
                    clean = 0;
                    break;
                }
                a += asz;
            }
            if (!clean)
                break;
            if (ns)
                s = segment_of(seg_pos, ns, p, s);
            const int64_t rate = ns ? seg_tps[s] : 1000000000;
            const int64_t t = ticks_ns_div(word_at(words, n, p + 1), rate, &div);
            if (t < tmin)
                tmin = t;
            if (t > tmax)
                tmax = t;
            /* here a <= end: the data word (counters, complete, async, flow events; an instant's scope) is
               the word at a when a < end */
            if (k == 1 || k >= 4) {
                if (a >= end) {
                    clean = 0;
                    break;
                }
                uint64_t v = word_at(words, n, a);
                if (k == 4)
                    v = (uint64_t)ticks_ns_div(v, rate, &div);
                if (a != end - 1) {
                    odd_rows[no] = i;
                    odd_vals[no++] = v;
                }
                if (k == 4)
                    cend[nc++] = (int64_t)v;
            } else if (k == 0 && a < end) {
                const uint64_t scope = word_at(words, n, a);
                if (scope > 2) {
                    clean = 0;
                    break;
                }
                if (scope) {
                    odd_rows[no] = i;
                    odd_vals[no++] = scope;
                }
            }
        }
        Py_END_ALLOW_THREADS
        if (clean)
            result = Py_BuildValue("nnLL", nc, no, (long long)tmin, (long long)tmax);
        else {
            result = Py_None;
            Py_INCREF(result);
        }
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&po);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&st);
    PyBuffer_Release(&o_kind);
    PyBuffer_Release(&o_nargs);
    PyBuffer_Release(&o_tref);
    PyBuffer_Release(&o_cref);
    PyBuffer_Release(&o_nref);
    PyBuffer_Release(&o_ce);
    PyBuffer_Release(&o_or);
    PyBuffer_Release(&o_ov);
    return result;
}

PyDoc_STRVAR(code_index_doc,
"code_index(codes, index, values) -> int\n\n"
"When codes (int16) hold at most 256 distinct values: values[:k] (int16, 256 items) their distinct values\n"
"ascending, index[i] (uint8, one a code) the position of codes[i] among them, and k is returned; else -1\n"
"(index untouched): fxscope.formats.fxt.coded_column.coded in two passes over the column.");

static PyObject *code_index(PyObject *self, PyObject *args)
{
    Py_buffer co, ix, va;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*w*", &co, &ix, &va))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&co, 2, "codes") < 0 || check_buffer(&va, 2, "values") < 0)
        goto done;
    Py_ssize_t m = co.len / 2;
    if (ix.len != m || va.len / 2 != 256) {
        PyErr_SetString(PyExc_ValueError, "code_index: index must hold one byte a code, values 256 int16 items");
        goto done;
    }
    {
        const uint16_t *codes = (const uint16_t *)co.buf;
        uint8_t *index = (uint8_t *)ix.buf;
        int16_t *values = (int16_t *)va.buf;
        Py_ssize_t k = 0;
        uint8_t *seen = (uint8_t *)PyMem_RawCalloc(1 << 16, 1);
        if (seen == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m && k <= 256; i++) {
            const uint16_t c = codes[i];
            if (!seen[c]) {
                seen[c] = 1;
                k++;
            }
        }
        if (k <= 256) {
            /* ascending as int16: the negative ones (bit patterns 0x8000..0xFFFF) first */
            Py_ssize_t j = 0;
            for (unsigned u = 0; u < (1u << 16); u++) {
                const uint16_t c = (uint16_t)(u ^ 0x8000u);
                if (seen[c]) {
                    seen[c] = (uint8_t)j;
                    values[j++] = (int16_t)c;
                }
            }
            for (Py_ssize_t i = 0; i < m; i++)
                index[i] = seen[codes[i]];
        }
        Py_END_ALLOW_THREADS
        PyMem_RawFree(seen);
        result = PyLong_FromSsize_t(k <= 256 ? k : -1);
    }
done:
    PyBuffer_Release(&co);
    PyBuffer_Release(&ix);
    PyBuffer_Release(&va);
    return result;
}

PyDoc_STRVAR(code_counts_doc,
"code_counts(codes, counts) -> None\n\n"
"counts[c] += the rows of codes (int16) holding c, c its uint16 bit pattern (counts: 65,536 int64 items):\n"
"the histogram from which fxscope.formats.fxt.coded_column.coded picks a column's most frequent values.");

static PyObject *code_counts(PyObject *self, PyObject *args)
{
    Py_buffer co, cn;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*", &co, &cn))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&co, 2, "codes") < 0 || check_buffer(&cn, 8, "counts") < 0)
        goto done;
    if (cn.len / 8 != (1 << 16)) {
        PyErr_SetString(PyExc_ValueError, "code_counts: counts must hold 65,536 int64 items");
        goto done;
    }
    {
        const uint16_t *codes = (const uint16_t *)co.buf;
        int64_t *counts = (int64_t *)cn.buf;
        const Py_ssize_t m = co.len / 2;
        /* four tables, rows taken in turn: a run of one frequent value would otherwise wait on its own
           counter's last increment at every row (uint32 counters, added to the int64 counts every chunk) */
        uint32_t *part = (uint32_t *)PyMem_RawCalloc((size_t)4 << 16, sizeof(uint32_t));
        if (part == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        const Py_ssize_t chunk = (Py_ssize_t)1 << 30;
        for (Py_ssize_t a = 0; a < m; a += chunk) {
            const Py_ssize_t b = a + chunk < m ? a + chunk : m;
            Py_ssize_t i = a;
            for (; i + 4 <= b; i += 4) {
                part[codes[i]]++;
                part[(1 << 16) + codes[i + 1]]++;
                part[(2 << 16) + codes[i + 2]]++;
                part[(3 << 16) + codes[i + 3]]++;
            }
            for (; i < b; i++)
                part[codes[i]]++;
            for (Py_ssize_t c = 0; c < (4 << 16); c++) {
                counts[c & 0xFFFF] += part[c];
                part[c] = 0;
            }
        }
        Py_END_ALLOW_THREADS
        PyMem_RawFree(part);
        result = Py_None;
        Py_INCREF(result);
    }
done:
    PyBuffer_Release(&co);
    PyBuffer_Release(&cn);
    return result;
}

PyDoc_STRVAR(code_escape_doc,
"code_escape(codes, lut, index, rare_rows) -> int\n\n"
"index[i] = lut[codes[i]] (codes int16 read as their uint16 bit patterns, lut 65,536 uint8 items, index uint8\n"
"one a code) and the rows whose code maps to 255 (the escape: a value outside the column's most frequent\n"
"ones) written to rare_rows (int64) in order; returns how many there are, or -1 when they are more than\n"
"rare_rows holds (index then partly written): fxscope.formats.fxt.coded_column.coded's second pass.");

static PyObject *code_escape(PyObject *self, PyObject *args)
{
    Py_buffer co, lu, ix, rr;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*w*", &co, &lu, &ix, &rr))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&co, 2, "codes") < 0 || check_buffer(&rr, 8, "rare_rows") < 0)
        goto done;
    if (lu.len != (1 << 16) || ix.len != co.len / 2) {
        PyErr_SetString(PyExc_ValueError, "code_escape: lut must hold 65,536 bytes, index one byte a code");
        goto done;
    }
    {
        const uint16_t *codes = (const uint16_t *)co.buf;
        const uint8_t *lut = (const uint8_t *)lu.buf;
        uint8_t *index = (uint8_t *)ix.buf;
        int64_t *rare = (int64_t *)rr.buf;
        const Py_ssize_t m = co.len / 2, cap = rr.len / 8;
        Py_ssize_t n = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const uint8_t c = lut[codes[i]];
            index[i] = c;
            if (c == 255) {
                if (n == cap) {
                    n = -1;
                    break;
                }
                rare[n++] = i;
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(n);
    }
done:
    PyBuffer_Release(&co);
    PyBuffer_Release(&lu);
    PyBuffer_Release(&ix);
    PyBuffer_Release(&rr);
    return result;
}

PyDoc_STRVAR(generation_refs_doc,
"generation_refs(value, first, width, gen, refs, pos, check_first, out) -> int\n\n"
"The dense table's answer for each ref of a block (fxscope.formats.fxt.tables.Lookup.of_generations): key =\n"
"gen[i] * width + refs[i] (gen int64, one a row or a single one for every row; refs uint8 or uint16 as the\n"
"item size of refs over the rows says), out[i] (int32) = value[key] (int32), -1 for a key outside the table,\n"
"and, when check_first, -1 where value[key] >= 0 and pos[i] (int64) <= first[key] (int64: the registration\n"
"comes later). Returns how many rows got -2 (keys registered several times: the caller searches those).");

static PyObject *generation_refs(PyObject *self, PyObject *args)
{
    Py_buffer va, fi, ge, re, po, ou;
    Py_ssize_t width;
    int check_first;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*y*pw*", &va, &fi, &width, &ge, &re, &po, &check_first, &ou))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&va, 4, "value") < 0 || check_buffer(&fi, 8, "first") < 0 || check_buffer(&ge, 8, "gen") < 0 ||
        check_buffer(&po, 8, "pos") < 0 || check_buffer(&ou, 4, "out") < 0)
        goto done;
    Py_ssize_t m = ou.len / 4, nkeys = va.len / 4, ng = ge.len / 8;
    if (po.len / 8 != m || (ng != m && ng != 1) || (re.len != m && re.len != 2 * m) || fi.len / 8 != nkeys ||
        width < 0) {
        PyErr_SetString(PyExc_ValueError, "generation_refs: buffer lengths do not match");
        goto done;
    }
    if (re.len == 2 * m && m && ((uintptr_t)re.buf) % 2) {
        PyErr_SetString(PyExc_ValueError, "generation_refs: refs are not aligned");
        goto done;
    }
    {
        const int32_t *value = (const int32_t *)va.buf;
        const int64_t *first = (const int64_t *)fi.buf, *gen = (const int64_t *)ge.buf, *pos = (const int64_t *)po.buf;
        const int wide = m && re.len == 2 * m;
        const uint8_t *r8 = (const uint8_t *)re.buf;
        const uint16_t *r16 = (const uint16_t *)re.buf;
        int32_t *out = (int32_t *)ou.buf;
        Py_ssize_t multi = 0;
        Py_BEGIN_ALLOW_THREADS
/* one loop per kind of refs and gen (the branches out of the loop: -O2 does not unswitch it) */
#define GENERATION_REFS_LOOP(REF, GEN)                                                                           \
        for (Py_ssize_t i = 0; i < m; i++) {                                                                     \
            const int64_t g = (GEN);                                                                             \
            const int64_t key = g * (int64_t)width + (int64_t)(REF);                                             \
            int32_t v = -1;                                                                                      \
            if (g >= 0 && key >= 0 && key < nkeys) {                                                             \
                v = value[key];                                                                                  \
                if (check_first && v >= 0 && pos[i] <= first[key])                                              \
                    v = -1;                                                                                      \
            }                                                                                                    \
            out[i] = v;                                                                                          \
        }
        if (wide && ng == 1)
            GENERATION_REFS_LOOP(r16[i], gen[0])
        else if (wide)
            GENERATION_REFS_LOOP(r16[i], gen[i])
        else if (ng == 1)
            GENERATION_REFS_LOOP(r8[i], gen[0])
        else
            GENERATION_REFS_LOOP(r8[i], gen[i])
#undef GENERATION_REFS_LOOP
        for (Py_ssize_t i = 0; i < m; i++) /* (apart: a count kept through the loop above went to memory) */
            multi += out[i] == -2;
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(multi);
    }
done:
    PyBuffer_Release(&va);
    PyBuffer_Release(&fi);
    PyBuffer_Release(&ge);
    PyBuffer_Release(&re);
    PyBuffer_Release(&po);
    PyBuffer_Release(&ou);
    return result;
}

/* rows ahead whose records numeric_args requests before it reads them */
#define NUMERIC_AHEAD 16

PyDoc_STRVAR(numeric_args_doc,
"numeric_args(words, record_word, wide, kind, rows, rows_wide, cut_words, cut_nargs, seg_pos, seg_tps,\n"
"             out_rec, out_ts, out_data, act, ref, stream, value) -> (count, non_numeric, full)\n\n"
"The numeric arguments of event rows (int32, int64 when rows_wide; each a valid row of record_word: uint32,\n"
"int64 when wide) and their records' fields, in one pass over each record (what arg_blocks, arg_columns and\n"
"event_times_data read, each record's words fetched once): per row i, out_rec[i] its record's first word,\n"
"out_ts[i] its time and out_data[i] its data word (as event_times_data); its arguments walked as\n"
"arg_columns walks them (the header's count, or cut_nargs[j] where cut_words[j], int64 ascending, is the\n"
"record's word: the reader's cuts), and for each int32/uint32/int64/uint64/double one: act = i (int64),\n"
"ref its name ref (int64), stream the word after its header (int64), value its float64 value (as\n"
"ArgColumns.values). Returns the numeric arguments written, the non-numeric ones skipped, and full: 1 when\n"
"a numeric argument did not fit len(act) (the pass stopped there: the caller sizes the outputs by the\n"
"argument counts and calls again). The data words' exceptions (EventData.exc_rows) are the caller's.");

static PyObject *numeric_args(PyObject *self, PyObject *args)
{
    Py_buffer w, rw, kd, ro, cw, cn, sp, st, o_rec, o_ts, o_data, o_act, o_ref, o_str, o_val;
    int wide, rows_wide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*py*y*py*y*y*y*w*w*w*w*w*w*w*", &w, &rw, &wide, &kd, &ro, &rows_wide, &cw, &cn,
                          &sp, &st, &o_rec, &o_ts, &o_data, &o_act, &o_ref, &o_str, &o_val))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t isz = wide ? 8 : 4, rsz = rows_wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&rw, isz, "record_word") < 0 ||
        check_buffer(&ro, rsz, "rows") < 0 || check_buffer(&cw, 8, "cut_words") < 0 ||
        check_buffer(&o_rec, 8, "out_rec") < 0 || check_buffer(&o_ts, 8, "out_ts") < 0 ||
        check_buffer(&o_data, 8, "out_data") < 0 || check_buffer(&o_act, 8, "act") < 0 ||
        check_buffer(&o_ref, 8, "ref") < 0 || check_buffer(&o_str, 8, "stream") < 0 ||
        check_buffer(&o_val, 8, "value") < 0 || check_segments(&sp, &st, "numeric_args") < 0)
        goto done;
    const Py_ssize_t m = ro.len / rsz, nrec = rw.len / isz, ncut = cw.len / 8, cap = o_act.len / 8;
    if (kd.len != nrec || o_rec.len / 8 != m || o_ts.len / 8 != m || o_data.len / 8 != m || cn.len != ncut ||
        o_ref.len / 8 != cap || o_str.len / 8 != cap || o_val.len / 8 != cap) {
        PyErr_SetString(PyExc_ValueError, "numeric_args: column lengths differ");
        goto done;
    }
    if (check_rows_of_width(&ro, rows_wide, nrec, "numeric_args") < 0)
        goto done;
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const uint8_t *kind = (const uint8_t *)kd.buf, *cut_nargs = (const uint8_t *)cn.buf;
        const int64_t *cut_words = (const int64_t *)cw.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_tps = (const int64_t *)st.buf;
        const Py_ssize_t ns = sp.len / 8;
        int64_t *out_rec = (int64_t *)o_rec.buf, *out_ts = (int64_t *)o_ts.buf;
        uint64_t *out_data = (uint64_t *)o_data.buf;
        int64_t *act = (int64_t *)o_act.buf, *ref = (int64_t *)o_ref.buf, *stream = (int64_t *)o_str.buf;
        double *value = (double *)o_val.buf;
        Py_ssize_t c = 0, skipped = 0;
        SegCursor cur;
        seg_cursor_init(&cur);
        int full = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m && !full; i++) {
            const int64_t r = rows_wide ? ((const int64_t *)ro.buf)[i] : ((const int32_t *)ro.buf)[i];
            const int64_t at = record_at(rw.buf, wide, r);
            if (i + NUMERIC_AHEAD < m) { /* a later row's record requested now: the rows are spread over the
                                            file, each a cache (and often a TLB) miss the loop would wait for */
                const int64_t r2 = rows_wide ? ((const int64_t *)ro.buf)[i + NUMERIC_AHEAD]
                                             : ((const int32_t *)ro.buf)[i + NUMERIC_AHEAD];
                const int64_t at2 = record_at(rw.buf, wide, r2);
                if (at2 >= 0 && at2 + 8 < n) {
                    __builtin_prefetch(words + at2);
                    __builtin_prefetch(words + at2 + 7);
                }
            }
            const unsigned k = kind[r];
            const uint64_t h = word_at(words, n, at);
            out_rec[i] = at;
            out_ts[i] = time_at(words, n, at, seg_pos, seg_tps, ns, &cur);
            out_data[i] = k != 1 && k < 4 ? 0 : data_at(words, n, at, k, seg_pos, seg_tps, ns, &cur);
            const unsigned nargs = ncut ? cut_count(cut_words, cut_nargs, ncut, at, (unsigned)((h >> 20) & 0xF))
                                        : (unsigned)((h >> 20) & 0xF);
            int64_t p = at + args_skip(h);
            const int64_t e = at + (int64_t)((h >> 4) & 0xFFF);
            for (unsigned a = 0; a < nargs && p < e && p >= 0 && p < n; a++) {
                ArgHead ah;
                if (!arg_head(words, n, p, e, &ah))
                    break;
                const unsigned t = (unsigned)(ah.h & 0xF);
                if (t < 1 || t > 5) {
                    skipped++;
                    p = ah.after;
                    continue;
                }
                if (c >= cap) {
                    full = 1;
                    break;
                }
                const int64_t v = p + 1 + ah.name_words;
                /* int32 (1), uint32 (2): bits 32..63 of the header; int64 (3), uint64 (4), double (5): the word
                   after the name (0 when the argument has none) */
                const uint64_t raw = t <= 2 ? ah.h >> 32 : (v < ah.after ? words[v < n ? v : n - 1] : 0);
                double x;
                if (t == 1)
                    x = (double)(int32_t)(uint32_t)raw;
                else if (t == 2)
                    x = (double)(uint32_t)raw;
                else if (t == 3)
                    x = (double)(int64_t)raw;
                else if (t == 4)
                    x = (double)raw;
                else
                    memcpy(&x, &raw, 8);
                act[c] = i;
                ref[c] = ah.ref;
                stream[c] = p + 1;
                value[c] = x;
                c++;
                p = ah.after;
            }
        }
        Py_END_ALLOW_THREADS
        result = Py_BuildValue("nni", c, skipped, full);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&kd);
    PyBuffer_Release(&ro);
    PyBuffer_Release(&cw);
    PyBuffer_Release(&cn);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&st);
    PyBuffer_Release(&o_rec);
    PyBuffer_Release(&o_ts);
    PyBuffer_Release(&o_data);
    PyBuffer_Release(&o_act);
    PyBuffer_Release(&o_ref);
    PyBuffer_Release(&o_str);
    PyBuffer_Release(&o_val);
    return result;
}

/* Resolving 16-bit string refs to global string ids, as ArgDecoder.string_ids does, one ref at a time: the
   provider segment of the ref's record (the last seg_pos at or before its word, the first if none; the words
   the last one spans kept, so that ascending records cost a comparison pair), its generation's key
   (gen * width + ref) and the dense table's answer (value[key]: -1 past the table; -1 when check_first and the
   record is at or before first[key], the key's one registration). string_arg_ids and ref_ids. */
typedef struct {
    const int64_t *seg_pos, *seg_gen, *first;
    const int32_t *value;
    Py_ssize_t nseg, nkeys;
    int64_t width;
    int check_first;
    Py_ssize_t s;       /* the segment of the last record resolved */
    int64_t lo, hi, gen; /* the words [lo, hi) it spans, its generation */
} RefResolver;

static void ref_resolver_init(RefResolver *c, const int64_t *seg_pos, const int64_t *seg_gen, Py_ssize_t nseg,
                              const int32_t *value, const int64_t *first, Py_ssize_t nkeys, int64_t width,
                              int check_first)
{
    c->seg_pos = seg_pos, c->seg_gen = seg_gen, c->nseg = nseg;
    c->value = value, c->first = first, c->nkeys = nkeys, c->width = width, c->check_first = check_first;
    c->s = 0, c->lo = 0, c->hi = -1, c->gen = -1; /* (no range yet: the first record searches) */
}

/* The id of ref r (16 bits) of the record at word at: 0 for ref 0, -3 for an inline stream (bit 15), -2 for a
   key registered more than once or any indexed ref without a dense table (the caller's), else the table's. */
static inline __attribute__((always_inline)) int64_t resolve_ref(RefResolver *c, int64_t r, int64_t at)
{
    if (r >= 0x8000)
        return -3;
    if (!r)
        return 0;
    if (at < c->lo || at >= c->hi) {
        c->s = segment_of(c->seg_pos, c->nseg, at, c->s);
        c->lo = c->s > 0 ? c->seg_pos[c->s] : INT64_MIN;
        c->hi = c->s + 1 < c->nseg ? c->seg_pos[c->s + 1] : INT64_MAX;
        c->gen = c->nseg ? c->seg_gen[c->s] : -1;
    }
    const int64_t key = c->gen * c->width + r;
    int64_t v = c->nkeys ? -1 : -2; /* (no dense table: the caller's lookup) */
    if (c->gen >= 0 && r > 0 && key >= 0 && key < c->nkeys) {
        v = c->value[key];
        if (c->check_first && v >= 0 && at <= c->first[key])
            v = -1;
    }
    return v;
}

/* rows ahead whose record words string_arg_ids requests before it reads them (and twice as far ahead, the
   rows' entries of record_word) */
#define STRING_REFS_AHEAD 16

PyDoc_STRVAR(string_arg_ids_doc,
"string_arg_ids(words, record_word, wide, rows, start, cut_words, cut_nargs, seg_pos, seg_gen, value, first,\n"
"               width, check_first, act, sid, sp_at, sp_ref, sp_word, sp_rec) -> (count, next, specials)\n\n"
"The strings the arguments of event rows[start:] use (int64 rows, ascending, each a valid row of record_word:\n"
"uint32, or int64 when wide), each record's arguments walked as arg_columns walks them (the header's count, or\n"
"cut_nargs[j] where cut_words[j], int64 ascending, is the record's word: the reader's cuts), a few rows ahead,\n"
"and resolved in the same pass: for each\n"
"argument its name, then its value if it is a string, act = i (int32) and sid its global string id (int32):\n"
"0 for ref 0, else through the table of the provider generation in force at the record (seg_gen[s], s the\n"
"last of seg_pos, int64 ascending, at or before the record's word; the first if none), key = gen * width +\n"
"ref, value[key] (int32; -1 past the table), -1 when check_first and the record's word is at or before\n"
"first[key] (int64: that key's one registration comes later). An inline stream (ref bit 15), a key\n"
"registered more than once (value -2), or any indexed ref when value is empty (no dense table) is left to the\n"
"caller: its sid is -3 or -2 and sp_at (its position among the outputs), sp_ref, sp_word (where its stream\n"
"would start) and sp_rec (its record's word) say where (int64, as many rooms as act). Stops before a row whose arguments (two strings each at most) do not fit the room\n"
"left: returns the strings written, the row to start the next call from and the strings left to the caller.\n"
"The search index's reader (fxscope.formats.fxt.arg_columns.string_arg_sids).");

static PyObject *string_arg_ids(PyObject *self, PyObject *args)
{
    Py_buffer w, rw, ro, cw, cn, sp, sg, va, fi, o_act, o_sid, o_at, o_ref, o_word, o_rec;
    int wide, check_first;
    Py_ssize_t start, width;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*py*ny*y*y*y*y*y*npw*w*w*w*w*w*", &w, &rw, &wide, &ro, &start, &cw, &cn, &sp, &sg,
                          &va, &fi, &width, &check_first, &o_act, &o_sid, &o_at, &o_ref, &o_word, &o_rec))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t isz = wide ? 8 : 4;
    if (check_buffer(&w, 8, "words") < 0 || check_buffer(&rw, isz, "record_word") < 0 ||
        check_buffer(&ro, 8, "rows") < 0 || check_buffer(&cw, 8, "cut_words") < 0 ||
        check_buffer(&sp, 8, "seg_pos") < 0 || check_buffer(&sg, 8, "seg_gen") < 0 ||
        check_buffer(&va, 4, "value") < 0 || check_buffer(&fi, 8, "first") < 0 ||
        check_buffer(&o_act, 4, "act") < 0 || check_buffer(&o_sid, 4, "sid") < 0 ||
        check_buffer(&o_at, 8, "sp_at") < 0 || check_buffer(&o_ref, 8, "sp_ref") < 0 ||
        check_buffer(&o_word, 8, "sp_word") < 0 || check_buffer(&o_rec, 8, "sp_rec") < 0)
        goto done;
    const Py_ssize_t m = ro.len / 8, nrec = rw.len / isz, ncut = cw.len / 8, cap = o_act.len / 4;
    const Py_ssize_t nseg = sp.len / 8, nkeys = va.len / 4;
    if (cn.len != ncut || sg.len / 8 != nseg || fi.len / 8 != nkeys || o_sid.len / 4 != cap ||
        o_at.len / 8 != cap || o_ref.len / 8 != cap || o_word.len / 8 != cap || o_rec.len / 8 != cap || width < 0) {
        PyErr_SetString(PyExc_ValueError, "string_arg_ids: column lengths differ");
        goto done;
    }
    if (start < 0 || start > m) {
        PyErr_SetString(PyExc_IndexError, "string_arg_ids: start out of range");
        goto done;
    }
    if (check_rows(&ro, nrec, "string_arg_ids") < 0)
        goto done;
    {
        const uint64_t *words = (const uint64_t *)w.buf;
        const int64_t n = (int64_t)(w.len / 8);
        const int64_t *rows = (const int64_t *)ro.buf, *cut_words = (const int64_t *)cw.buf;
        const uint8_t *cut_nargs = (const uint8_t *)cn.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_gen = (const int64_t *)sg.buf;
        const int32_t *value = (const int32_t *)va.buf;
        const int64_t *first = (const int64_t *)fi.buf;
        int32_t *act = (int32_t *)o_act.buf, *sid = (int32_t *)o_sid.buf;
        int64_t *sp_at = (int64_t *)o_at.buf, *sp_ref = (int64_t *)o_ref.buf, *sp_word = (int64_t *)o_word.buf;
        int64_t *sp_rec = (int64_t *)o_rec.buf;
        Py_ssize_t c = 0, k = 0, i = start;
        RefResolver rr;
        ref_resolver_init(&rr, seg_pos, seg_gen, nseg, value, first, nkeys, width, check_first);
        Py_BEGIN_ALLOW_THREADS
/* one string of row i's record at word `at`: ref (16 bits) whose stream would start at word WORD */
#define EMIT(REF, WORD)                                                                                          \
        do {                                                                                                     \
            const int64_t r_ = (REF);                                                                            \
            const int32_t v_ = (int32_t)resolve_ref(&rr, r_, at);                                                \
            if (v_ <= -2) {                                                                                      \
                sp_at[k] = c;                                                                                    \
                sp_ref[k] = r_;                                                                                  \
                sp_word[k] = (WORD);                                                                             \
                sp_rec[k] = at;                                                                                  \
                k++;                                                                                             \
            }                                                                                                    \
            act[c] = (int32_t)i;                                                                                 \
            sid[c] = v_;                                                                                         \
            c++;                                                                                                 \
        } while (0)
        for (; i < m; i++) {
            /* the rows are spread over the file: each record a cache (often a TLB) miss the loop would wait
               for, so later rows' record words and records are requested now */
            if (i + 2 * STRING_REFS_AHEAD < m)
                __builtin_prefetch(wide ? (const void *)((const int64_t *)rw.buf + rows[i + 2 * STRING_REFS_AHEAD])
                                        : (const void *)((const uint32_t *)rw.buf + rows[i + 2 * STRING_REFS_AHEAD]));
            if (i + STRING_REFS_AHEAD < m) {
                const int64_t at2 = record_at(rw.buf, wide, rows[i + STRING_REFS_AHEAD]);
                if (at2 >= 0 && at2 + 8 < n) {
                    __builtin_prefetch(words + at2);
                    __builtin_prefetch(words + at2 + 7);
                }
            }
            const int64_t at = record_at(rw.buf, wide, rows[i]);
            const uint64_t h = word_at(words, n, at);
            unsigned nargs = (unsigned)((h >> 20) & 0xF);
            if (nargs && ncut)
                nargs = cut_count(cut_words, cut_nargs, ncut, at, nargs);
            if (2 * (Py_ssize_t)nargs > cap - c)
                break; /* (the next call starts at this row) */
            int64_t p = at + args_skip(h);
            const int64_t e = at + (int64_t)((h >> 4) & 0xFFF);
            for (unsigned a = 0; a < nargs && p < e && p >= 0 && p < n; a++) {
                ArgHead ah;
                if (!arg_head(words, n, p, e, &ah))
                    break;
                EMIT(ah.ref, p + 1);
                if ((ah.h & 0xF) == 6) /* string: its value's ref in bits 32..47 */
                    EMIT((int64_t)((ah.h >> 32) & 0xFFFF), p + 1 + ah.name_words);
                p = ah.after;
            }
        }
#undef EMIT
        Py_END_ALLOW_THREADS
        result = Py_BuildValue("nnn", c, i, k);
    }
done:
    PyBuffer_Release(&w);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&ro);
    PyBuffer_Release(&cw);
    PyBuffer_Release(&cn);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&sg);
    PyBuffer_Release(&va);
    PyBuffer_Release(&fi);
    PyBuffer_Release(&o_act);
    PyBuffer_Release(&o_sid);
    PyBuffer_Release(&o_at);
    PyBuffer_Release(&o_ref);
    PyBuffer_Release(&o_word);
    PyBuffer_Release(&o_rec);
    return result;
}

PyDoc_STRVAR(ref_ids_doc,
"ref_ids(refs, record_words, seg_pos, seg_gen, value, first, width, check_first, out) -> specials\n\n"
"Global string ids (out, int64) of string refs (refs, int64) found in the records at record_words (int64, as\n"
"many; ascending costs one comparison a ref for the segment): 0 for ref 0, else through the table of the\n"
"provider generation in force at the record (seg_gen[s], s the last of seg_pos, int64 ascending, at or before\n"
"the record's word; the first if none), key = gen * width + ref, value[key] (int32; -1 past the table or a\n"
"negative ref), -1 when check_first and the record's word is at or before first[key] (that key's one\n"
"registration comes later). An inline stream (ref bit 15: -3), a key registered more than once (value -2) or\n"
"any indexed ref when value is empty (no dense table: -2) is left to the caller. Returns how many refs were\n"
"left (fxscope.formats.fxt.lazy_args.ArgDecoder.string_ids, as string_arg_ids resolves its refs).");

static PyObject *ref_ids(PyObject *self, PyObject *args)
{
    Py_buffer re, rw, sp, sg, va, fi, ou;
    Py_ssize_t width;
    int check_first;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*npw*", &re, &rw, &sp, &sg, &va, &fi, &width, &check_first, &ou))
        return NULL;
    PyObject *result = NULL;
    if (check_buffer(&re, 8, "refs") < 0 || check_buffer(&rw, 8, "record_words") < 0 ||
        check_buffer(&sp, 8, "seg_pos") < 0 || check_buffer(&sg, 8, "seg_gen") < 0 ||
        check_buffer(&va, 4, "value") < 0 || check_buffer(&fi, 8, "first") < 0 || check_buffer(&ou, 8, "out") < 0)
        goto done;
    const Py_ssize_t m = re.len / 8, nseg = sp.len / 8, nkeys = va.len / 4;
    if (rw.len / 8 != m || ou.len / 8 != m || sg.len / 8 != nseg || fi.len / 8 != nkeys || width < 0) {
        PyErr_SetString(PyExc_ValueError, "ref_ids: buffer lengths do not match");
        goto done;
    }
    {
        const int64_t *refs = (const int64_t *)re.buf, *words = (const int64_t *)rw.buf;
        const int64_t *seg_pos = (const int64_t *)sp.buf, *seg_gen = (const int64_t *)sg.buf;
        const int32_t *value = (const int32_t *)va.buf;
        const int64_t *first = (const int64_t *)fi.buf;
        int64_t *out = (int64_t *)ou.buf;
        Py_ssize_t left = 0;
        RefResolver rr;
        ref_resolver_init(&rr, seg_pos, seg_gen, nseg, value, first, nkeys, width, check_first);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) {
            const int64_t v = resolve_ref(&rr, refs[i], words[i]);
            left += v <= -2;
            out[i] = v;
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(left);
    }
done:
    PyBuffer_Release(&re);
    PyBuffer_Release(&rw);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&sg);
    PyBuffer_Release(&va);
    PyBuffer_Release(&fi);
    PyBuffer_Release(&ou);
    return result;
}

static PyMethodDef methods[] = {
    {"frame_split", frame_split, METH_VARARGS, frame_split_doc},
    {"walk_args", walk_args, METH_VARARGS, walk_args_doc},
    {"event_block", event_block, METH_VARARGS, event_block_doc},
    {"arg_columns", arg_columns, METH_VARARGS, arg_columns_doc},
    {"gather4", gather4, METH_VARARGS, gather4_doc},
    {"typed_args", typed_args, METH_VARARGS, typed_args_doc},
    {"event_times", event_times, METH_VARARGS, event_times_doc},
    {"ticks_to_ns", ticks_to_ns, METH_VARARGS, ticks_to_ns_doc},
    {"event_data", event_data, METH_VARARGS, event_data_doc},
    {"event_times_data", event_times_data, METH_VARARGS, event_times_data_doc},
    {"arg_blocks", arg_blocks, METH_VARARGS, arg_blocks_doc},
    {"decode_codes", decode_codes, METH_VARARGS, decode_codes_doc},
    {"event_fields", event_fields, METH_VARARGS, event_fields_doc},
    {"code_index", code_index, METH_VARARGS, code_index_doc},
    {"code_counts", code_counts, METH_VARARGS, code_counts_doc},
    {"code_escape", code_escape, METH_VARARGS, code_escape_doc},
    {"generation_refs", generation_refs, METH_VARARGS, generation_refs_doc},
    {"ref_ids", ref_ids, METH_VARARGS, ref_ids_doc},
    {"numeric_args", numeric_args, METH_VARARGS, numeric_args_doc},
    {"string_arg_ids", string_arg_ids, METH_VARARGS, string_arg_ids_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "record_scan",
    "The FXT reader's sequential inner loops (record chain, argument blocks), compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit_record_scan(void)
{
    return PyModule_Create(&module);
}
