/*
 * Sums and counts over the model's columns, compiled: the Info tab's counts of one-byte columns
 * (core/trace/stats.py), the analysis panel's per-row self times, per-name sums and call-path nodes of an
 * area's slices (core/analysis/selection.py, core/analysis/call_tree.py), and the search's matches of a
 * gathered one-byte code column (core/trace/query.py column_matches).
 *
 * Why C: numpy makes each of these several passes over every row (a bincount per block that widens its input
 * to intp, a mask per depth level, gathers of the parents' nodes, a table of keys per level). Here each is one
 * or two passes with tables the size of the result (names, nodes). At 100M events (25M slices) the whole
 * trace's statistics and flame graph are a few of these passes.
 *
 * The numpy paths stay the reference (FXSCOPE_NO_COMPILED=1 forces them; tests/core/analysis compare both on
 * whole results). Every index read from a buffer is bounds-checked: an out-of-range parent, name or node
 * raises ValueError, and a tree the one forward pass does not describe (a parent after its child, a depth
 * that is not its parent's plus one) returns None: the callers then take the numpy path, which decides what
 * the result is. The GIL is released while the loops run.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

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

/* An item of a 4- or 8-byte signed column (parents, nodes). */
static inline int64_t int_at(const void *a, int wide, Py_ssize_t i)
{
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

/* An item of a 2- or 4-byte signed column (dense names). */
static inline int64_t name_at(const void *a, int wide, Py_ssize_t i)
{
    return wide ? (int64_t)((const int32_t *)a)[i] : (int64_t)((const int16_t *)a)[i];
}

/* ------------------------------------------------------------------------------- one-byte value counts */

PyDoc_STRVAR(byte_counts_doc,
"byte_counts(values, out)\n\n"
"Adds to ``out`` (256 int64) how many of the uint8 ``values`` hold each value: np.bincount without the\n"
"intp copy of its input.");

static PyObject *byte_counts(PyObject *self, PyObject *args)
{
    Py_buffer vb, ob;
    if (!PyArg_ParseTuple(args, "y*w*", &vb, &ob))
        return NULL;
    PyObject *ret = NULL;
    if (check_items(&ob, 8, 256, "out") == 0) {
        const uint8_t *v = vb.buf;
        int64_t *out = ob.buf;
        Py_ssize_t n = vb.len;
        Py_BEGIN_ALLOW_THREADS
        int64_t c[4][256];  /* four tables: no store waits on the one before it for runs of one value */
        memset(c, 0, sizeof c);
        Py_ssize_t i = 0;
        for (; i + 4 <= n; i += 4) {
            c[0][v[i]]++;
            c[1][v[i + 1]]++;
            c[2][v[i + 2]]++;
            c[3][v[i + 3]]++;
        }
        for (; i < n; i++)
            c[0][v[i]]++;
        for (int k = 0; k < 256; k++)
            out[k] += c[0][k] + c[1][k] + c[2][k] + c[3][k];
        Py_END_ALLOW_THREADS
        ret = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&vb);
    PyBuffer_Release(&ob);
    return ret;
}

/* ------------------------------------------------------------------------------------ self times */

PyDoc_STRVAR(self_times_doc,
"self_times(parent, parent_wide, clipped, dense, dense_wide, hit, out_self, out_total, out_self_total)\n\n"
"Each row's self time inside the range into ``out_self`` (float64): its ``clipped`` time (int64) minus its\n"
"children's (the rows whose ``parent``, a position among the rows or -1, is it; int32, int64 when\n"
"parent_wide), at least 0, as core/analysis/selection.py's clipped_self computes it. Then, over the rows\n"
"``hit`` marks (uint8, one a row; empty: every row), the sums of ``clipped`` and of the self times per\n"
"``dense`` name (0..k-1; int16, int32 when dense_wide) added to ``out_total`` and ``out_self_total`` (k\n"
"float64 each; an empty ``dense``: no sums). ValueError for a parent or name out of range.");

static PyObject *self_times(PyObject *self, PyObject *args)
{
    Py_buffer pb, cb, db, hb, sb, tb, stb;
    int pwide, dwide;
    if (!PyArg_ParseTuple(args, "y*py*y*py*w*w*w*", &pb, &pwide, &cb, &db, &dwide, &hb, &sb, &tb, &stb))
        return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = cb.len / 8;
    if (check_items(&cb, 8, -1, "clipped") || check_items(&pb, pwide ? 8 : 4, n, "parent")
        || check_items(&db, dwide ? 4 : 2, db.len ? n : 0, "dense") || check_items(&sb, 8, n, "out_self")
        || check_items(&tb, 8, -1, "out_total") || check_items(&stb, 8, tb.len / 8, "out_self_total"))
        goto done;
    if (hb.len != 0 && hb.len != n) {
        PyErr_SetString(PyExc_ValueError, "hit: one byte a row, or empty");
        goto done;
    }
    {
        const void *par = pb.buf, *dense = db.buf;
        const int64_t *clipped = cb.buf;
        const uint8_t *hit = hb.len ? hb.buf : NULL;
        double *child = sb.buf, *total = tb.buf, *self_total = stb.buf;
        Py_ssize_t k = tb.len / 8;
        Py_ssize_t bad = -1;
        Py_BEGIN_ALLOW_THREADS
        memset(child, 0, (size_t)n * sizeof(double));
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t p = int_at(par, pwide, i);
            if (p < -1 || p >= n) {
                bad = i;
                break;
            }
            if (p >= 0)
                child[p] += (double)clipped[i];
        }
        for (Py_ssize_t i = 0; bad < 0 && i < n; i++) {
            double s = (double)clipped[i] - child[i];
            s = s > 0 ? s : 0;  /* (np.maximum(x, 0): a NaN cannot arise from int64 times) */
            child[i] = s;
            if (!db.len || (hit && !hit[i]))
                continue;
            int64_t d = name_at(dense, dwide, i);
            if (d < 0 || d >= k) {
                bad = i;
                break;
            }
            total[d] += (double)clipped[i];
            self_total[d] += s;
        }
        Py_END_ALLOW_THREADS
        if (bad >= 0) {
            PyErr_Format(PyExc_ValueError, "row %zd: parent or name out of range", bad);
            goto done;
        }
        ret = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&pb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&db);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&stb);
    return ret;
}

/* -------------------------------------------------------------------------------- call-path nodes */

/* The nodes found so far (first-encounter order) and an open-addressing table of (parent node, name) keys
 * to node numbers. */
typedef struct {
    int64_t *parent, *name, *depth, *count;
    double *total, *self;
    Py_ssize_t n, cap;
    int64_t *slots;  /* node number + 1, 0 empty */
    size_t mask;
    /* while (nodes + 1) * names is at most DIRECT_KEYS: node number + 1 of (parent + 1) * names + name (a
     * row per parent node, appended as nodes are: no hashing for the few nodes of a usual tree) */
    int64_t *direct;
    Py_ssize_t names;
} Nodes;

#define DIRECT_KEYS (1 << 20)

static void nodes_free(Nodes *t)
{
    free(t->parent);
    free(t->name);
    free(t->depth);
    free(t->count);
    free(t->total);
    free(t->self);
    free(t->slots);
    free(t->direct);
}

static inline size_t key_hash(int64_t parent, int64_t name)
{
    uint64_t h = (uint64_t)(parent + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)name * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static int nodes_grow(Nodes *t)
{
    Py_ssize_t cap = t->cap ? t->cap * 2 : 1024;
    int64_t **cols[] = {&t->parent, &t->name, &t->depth, &t->count};
    for (int c = 0; c < 4; c++) {
        int64_t *p = realloc(*cols[c], (size_t)cap * sizeof(int64_t));
        if (!p)
            return -1;
        *cols[c] = p;
    }
    double **sums[] = {&t->total, &t->self};
    for (int c = 0; c < 2; c++) {
        double *p = realloc(*sums[c], (size_t)cap * sizeof(double));
        if (!p)
            return -1;
        *sums[c] = p;
    }
    size_t slots = (size_t)cap * 2;
    int64_t *table = calloc(slots, sizeof(int64_t));
    if (!table)
        return -1;
    for (Py_ssize_t j = 0; j < t->n; j++) {
        size_t at = key_hash(t->parent[j], t->name[j]) & (slots - 1);
        while (table[at])
            at = (at + 1) & (slots - 1);
        table[at] = j + 1;
    }
    free(t->slots);
    t->slots = table;
    t->mask = slots - 1;
    if (t->direct) {  /* rows for the new parents, or no direct table past DIRECT_KEYS */
        if ((cap + 1) * t->names <= DIRECT_KEYS) {
            int64_t *d = realloc(t->direct, (size_t)((cap + 1) * t->names) * sizeof(int64_t));
            if (!d)
                return -1;
            memset(d + (t->cap + 1) * t->names, 0, (size_t)((cap - t->cap) * t->names) * sizeof(int64_t));
            t->direct = d;
        } else {
            free(t->direct);
            t->direct = NULL;
        }
    }
    t->cap = cap;
    return 0;
}

/* The node of (parent node, name) at ``depth``, made when new; -1 when out of memory. */
static inline int64_t node_of_key(Nodes *t, int64_t parent, int64_t name, int64_t depth)
{
    int64_t *cell = NULL;
    if (t->direct && name < t->names) {
        cell = &t->direct[(parent + 1) * t->names + name];
        if (*cell)
            return *cell - 1;
    }
    size_t at = key_hash(parent, name) & t->mask;
    for (;;) {
        int64_t s = t->slots[at];
        if (!s)
            break;
        if (t->parent[s - 1] == parent && t->name[s - 1] == name)
            return s - 1;
        at = (at + 1) & t->mask;
    }
    if (t->n == t->cap) {
        if (nodes_grow(t))
            return -1;
        return node_of_key(t, parent, name, depth);
    }
    Py_ssize_t j = t->n++;
    t->parent[j] = parent;
    t->name[j] = name;
    t->depth[j] = depth;
    t->count[j] = 0;
    t->total[j] = 0;
    t->self[j] = 0;
    t->slots[at] = j + 1;
    if (cell)
        *cell = j + 1;
    return j;
}

/* The nodes' columns as bytes: int64 parent node, dense name, depth, count; float64 total, self. */
static PyObject *node_columns(const Nodes *t)
{
    size_t ib = (size_t)t->n * sizeof(int64_t), fb = (size_t)t->n * sizeof(double);
    return Py_BuildValue("(y#y#y#y#y#y#)", (char *)t->parent, (Py_ssize_t)ib, (char *)t->name, (Py_ssize_t)ib,
                         (char *)t->depth, (Py_ssize_t)ib, (char *)t->count, (Py_ssize_t)ib, (char *)t->total,
                         (Py_ssize_t)fb, (char *)t->self, (Py_ssize_t)fb);
}

/* What a walk over the rows returns for its status: 1 a row's parent or name out of range (ValueError at
   row `at`), 2 not a walk it can take (None: the caller's other path), 3 out of memory; else the nodes'
   columns (an empty tuple when no nodes were asked for, t NULL). */
static PyObject *walk_result(int status, Py_ssize_t at, const Nodes *t)
{
    if (status == 1) {
        PyErr_Format(PyExc_ValueError, "row %zd: parent or name out of range", at);
        return NULL;
    }
    if (status == 2)
        return Py_NewRef(Py_None);
    if (status == 3)
        return PyErr_NoMemory();
    return t ? node_columns(t) : PyTuple_New(0);
}

/* The first nodes' room, and with a few ``names`` (0: not known) the direct table of their first 1024
 * nodes' rows; -1 when out of memory. */
static int nodes_start(Nodes *t, Py_ssize_t names)
{
    if (nodes_grow(t))
        return -1;
    if (names > 0 && (t->cap + 1) * names <= DIRECT_KEYS) {
        t->names = names;
        t->direct = calloc((size_t)((t->cap + 1) * names), sizeof(int64_t));
        if (!t->direct)
            return -1;
    }
    return 0;
}

/* ``node_of[i] = node`` in the column's type. */
static inline void put_node(void *node_of, int nwide, Py_ssize_t i, int64_t node)
{
    if (nwide)
        ((int64_t *)node_of)[i] = node;
    else
        ((int32_t *)node_of)[i] = (int32_t)node;
}

PyDoc_STRVAR(call_nodes_doc,
"call_nodes(parent, parent_wide, depth, dense, dense_wide, hit, clipped, self, node_of, node_wide[, names])\n"
"    -> (parent, name, depth, count, total, self) | None\n\n"
"The top-down tree's nodes of the rows in one forward pass: a row at depth 0 (uint16 ``depth``), or with\n"
"``parent`` -1, stands in the root node of its ``dense`` name; another in the node (its parent row's node,\n"
"its name). Each row's node (first-encounter numbering) goes to ``node_of`` (int32, int64 when node_wide);\n"
"per node, over the rows ``hit`` marks (empty: every row), the count and the sums of ``clipped`` (int64)\n"
"and ``self`` (float64) in row order. Returns the nodes' columns as bytes (int64 parent node, dense name,\n"
"depth, count; float64 total, self), or None when a row's parent is not an earlier row one level up (the\n"
"numpy path's levels then decide). ValueError for a parent or name out of range. ``names``: how many dense\n"
"names there are, when known (a few: the nodes are then found in a table of parent node x name, no hashing).");

static PyObject *call_nodes(PyObject *self_, PyObject *args)
{
    Py_buffer pb, deb, db, hb, cb, sb, nb;
    int pwide, dwide, nwide;
    Py_ssize_t names = 0;
    if (!PyArg_ParseTuple(args, "y*py*y*py*y*y*w*p|n", &pb, &pwide, &deb, &db, &dwide, &hb, &cb, &sb, &nb, &nwide,
                          &names))
        return NULL;
    PyObject *ret = NULL;
    Nodes t;
    memset(&t, 0, sizeof t);
    Py_ssize_t n = cb.len / 8;
    if (check_items(&cb, 8, -1, "clipped") || check_items(&pb, pwide ? 8 : 4, n, "parent")
        || check_items(&deb, 2, n, "depth") || check_items(&db, dwide ? 4 : 2, n, "dense")
        || check_items(&sb, 8, n, "self") || check_items(&nb, nwide ? 8 : 4, n, "node_of"))
        goto done;
    if (hb.len != 0 && hb.len != n) {
        PyErr_SetString(PyExc_ValueError, "hit: one byte a row, or empty");
        goto done;
    }
    if (!nwide && n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "node_of: int32 cannot number this many rows");
        goto done;
    }
    {
        const void *par = pb.buf, *dense = db.buf;
        const uint16_t *depth = deb.buf;
        const int64_t *clipped = cb.buf;
        const double *selfs = sb.buf;
        const uint8_t *hit = hb.len ? hb.buf : NULL;
        void *node_of = nb.buf;
        int status = 0;  /* 1: out of range, 2: not one forward pass, 3: out of memory */
        Py_ssize_t at = -1;
        Py_BEGIN_ALLOW_THREADS
        if (nodes_start(&t, names))
            status = 3;
        for (Py_ssize_t i = 0; !status && i < n; i++) {
            int64_t p = int_at(par, pwide, i), d = depth[i], name = name_at(dense, dwide, i);
            if (p < -1 || p >= n || name < 0) {
                status = 1;
                at = i;
                break;
            }
            int64_t pnode = -1;
            if (d > 0 && p >= 0) {
                if (p >= i) {
                    status = 2;
                    break;
                }
                pnode = int_at(node_of, nwide, p);
                if (t.depth[pnode] != d - 1) {
                    status = 2;
                    break;
                }
            } else {
                d = 0;  /* (a root, or a row whose parent is missing: a root) */
            }
            int64_t node = node_of_key(&t, pnode, name, d);
            if (node < 0) {
                status = 3;
                break;
            }
            put_node(node_of, nwide, i, node);
            if (hit && !hit[i])
                continue;
            t.count[node]++;
            t.total[node] += (double)clipped[i];
            t.self[node] += selfs[i];
        }
        Py_END_ALLOW_THREADS
        ret = walk_result(status, at, &t);
    }
done:
    nodes_free(&t);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&deb);
    PyBuffer_Release(&db);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&nb);
    return ret;
}

/* ------------------------------------------------------------------ self times, sums and nodes in one pass */

/* A row of the forward pass while it is open: its descendants may still follow. */
typedef struct {
    int64_t row, node, name, clipped;
    double child;  /* the clipped times of its children so far */
    int64_t hit;
} OpenRow;

/* A row the walk has left, kept for a late child: a zero-length slice at its parent's end that sorts after
 * a slice of a level above starting there (direct-mapped by row). */
typedef struct {
    int64_t row, node;
} ClosedRow;

#define CLOSED_ROWS 4096

/* A row the walk leaves: its self time (as self_times computes it: the same additions in the same order)
 * summed into its node's (with ``t``: the names' sums are the nodes' summed after the pass), else into its
 * name's. */
static inline void close_row(const OpenRow *o, double *self_total, Nodes *t)
{
    double s = (double)o->clipped - o->child;
    s = s > 0 ? s : 0;
    if (!o->hit)
        return;
    if (t)
        t->self[o->node] += s;
    else
        self_total[o->name] += s;
}
/* below this sum of the clipped times every float sum of the pass is an exact integer, whatever the order
 * of its additions (the self times are summed as rows close, self_times sums them in row order) */
#define EXACT_SUMS ((uint64_t)1 << 53)

/* Where row ``p`` is among the open rows (their rows ascend from the bottom of the stack), or -1. */
static inline Py_ssize_t open_at(const OpenRow *open, Py_ssize_t sp, int64_t p)
{
    Py_ssize_t lo = 0, hi = sp;
    while (lo < hi) {
        const Py_ssize_t mid = lo + (hi - lo) / 2;
        if (open[mid].row < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sp && open[lo].row == p ? lo : -1;
}

PyDoc_STRVAR(area_pass_doc,
"area_pass(parent, parent_wide, depth, dense, dense_wide, hit, clipped, out_total, out_self_total, node_of,\n"
"          node_wide[, base]) -> () | (parent, name, depth, count, total, self) | None\n\n"
"self_times' per-name sums and, when ``node_of`` is not empty, call_nodes' nodes, in one forward pass that\n"
"keeps no per-row self time: the rows are read as a depth-first walk (each row's parent is one of the rows\n"
"still open: the row before it or one of that row's ancestors), so a row's self time is final when the walk\n"
"leaves it; only the open rows (a stack, one per level) are held. A row with no time in the range whose\n"
"parent was left shortly before (a zero-length slice at its parent's end, sorted after a slice of a level\n"
"above that starts there) takes its node under that parent while the parent is among the last 4,096 rows\n"
"left. Adds the sums of ``clipped`` and of the self times of the ``hit`` rows per ``dense`` name\n"
"(0..k-1) to ``out_total`` / ``out_self_total`` (k float64 each); with ``node_of``, writes each row's node\n"
"(first-encounter numbering) and returns the nodes' columns as call_nodes does. Returns None when the rows\n"
"are not such a walk, a depth is not its parent's plus one, or the clipped times sum to 2**53 ns or more\n"
"(float sums in another order than self_times': the outputs are then partial, self_times and call_nodes\n"
"decide). ValueError for a parent or name out of range. Same parameter types as self_times and\n"
"call_nodes. ``base``: the rows are those from ``base`` on of a larger table, whose positions the parents\n"
"are (a part of the rows that begins with a root: the parts of a walk run on two threads); a parent before\n"
"``base`` returns None. ``nodes_only``: the nodes are found and returned with ``node_of`` empty, no row's\n"
"node written (a flame graph's nodes without the 4 bytes a row that only a click on a node needs).");

static PyObject *area_pass(PyObject *self_, PyObject *args)
{
    Py_buffer pb, deb, db, hb, cb, tb, stb, nb;
    int pwide, dwide, nwide;
    (void)self_;
    Py_ssize_t base = 0;
    int nodes_only = 0;
    if (!PyArg_ParseTuple(args, "y*py*y*py*y*w*w*w*p|np", &pb, &pwide, &deb, &db, &dwide, &hb, &cb, &tb, &stb, &nb,
                          &nwide, &base, &nodes_only))
        return NULL;
    PyObject *ret = NULL;
    Nodes t;
    memset(&t, 0, sizeof t);
    Py_ssize_t n = cb.len / 8;
    const int nodes = nb.len != 0 || nodes_only, rows_nodes = nb.len != 0;
    if (check_items(&cb, 8, -1, "clipped") || check_items(&pb, pwide ? 8 : 4, n, "parent")
        || check_items(&deb, 2, nodes ? n : -1, "depth") || check_items(&db, dwide ? 4 : 2, n, "dense")
        || check_items(&tb, 8, -1, "out_total") || check_items(&stb, 8, tb.len / 8, "out_self_total")
        || (nodes_only && nb.len != 0 && (PyErr_SetString(PyExc_ValueError, "node_of: empty with nodes_only"), 1))
        || (rows_nodes && check_items(&nb, nwide ? 8 : 4, n, "node_of")))
        goto done;
    if (hb.len != 0 && hb.len != n) {
        PyErr_SetString(PyExc_ValueError, "hit: one byte a row, or empty");
        goto done;
    }
    if (rows_nodes && !nwide && n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "node_of: int32 cannot number this many rows");
        goto done;
    }
    {
        const void *par = pb.buf, *dense = db.buf;
        const uint16_t *depth = deb.buf;
        const int64_t *clipped = cb.buf;
        const uint8_t *hit = hb.len ? hb.buf : NULL;
        double *total = tb.buf, *self_total = stb.buf;
        void *node_of = nb.buf;
        Py_ssize_t k = tb.len / 8;
        int status = 0;  /* 1: out of range, 2: not a depth-first walk, 3: out of memory */
        Py_ssize_t at = -1, sp = 0, cap = 1024;
        uint64_t mass = 0;  /* the clipped times so far */
        OpenRow *open = NULL;
        ClosedRow *closed = NULL;
        Py_BEGIN_ALLOW_THREADS
        open = malloc((size_t)cap * sizeof(OpenRow));
        closed = malloc(CLOSED_ROWS * sizeof(ClosedRow));
        if (!open || !closed || (nodes && nodes_start(&t, k)))
            status = 3;
        for (Py_ssize_t c = 0; !status && c < CLOSED_ROWS; c++)
            closed[c].row = -1;
        for (Py_ssize_t i = 0; !status && i < n; i++) {
            const int64_t pb_ = int_at(par, pwide, i), name = name_at(dense, dwide, i), c = clipped[i];
            if (pb_ < -1 || pb_ - base >= n || name < 0 || name >= k) {
                status = 1;
                at = i;
                break;
            }
            const int64_t p = pb_ < 0 ? -1 : pb_ - base;
            if (pb_ >= 0 && p < 0) {  /* (a parent before the rows: part of a walk begun before them) */
                status = 2;
                break;
            }
            if (c < 0 || (uint64_t)c >= EXACT_SUMS - mass) {  /* (float sums past 2**53 depend on their order) */
                status = 2;
                break;
            }
            mass += (uint64_t)c;
            int64_t pnode = -1;  /* the parent's node; a parent left before (a late child): no open parent */
            OpenRow *up = NULL;
            if (p >= 0 && sp > 0 && open[sp - 1].row == p) {
                up = &open[sp - 1];
            } else {
                const Py_ssize_t j = p >= 0 ? open_at(open, sp, p) : -1;
                if (j >= 0 || p < 0) {
                    const Py_ssize_t keep = j + 1;
                    while (sp > keep) {  /* the rows the walk leaves: their self times are final */
                        const OpenRow *o = &open[--sp];
                        close_row(o, self_total, nodes ? &t : NULL);
                        closed[o->row & (CLOSED_ROWS - 1)] = (ClosedRow){o->row, o->node};
                    }
                    up = j >= 0 ? &open[j] : NULL;
                } else {
                    const ClosedRow *left = &closed[p & (CLOSED_ROWS - 1)];
                    if (left->row != p || c != 0) {  /* (long left, or time to add to a final self time) */
                        status = 2;
                        break;
                    }
                    pnode = left->node;
                }
            }
            if (up) {
                up->child += (double)c;
                pnode = up->node;
            }
            int64_t node = -1;
            if (nodes) {
                int64_t d = depth[i];
                if (d > 0 && p >= 0) {
                    if (t.depth[pnode] != d - 1) {
                        status = 2;
                        break;
                    }
                } else {
                    d = 0;  /* (a root, or a row whose parent is missing: a root) */
                    pnode = -1;
                }
                node = node_of_key(&t, pnode, name, d);
                if (node < 0) {
                    status = 3;
                    break;
                }
                if (rows_nodes)
                    put_node(node_of, nwide, i, node);
            }
            const int64_t h = !hit || hit[i];
            if (h) {
                if (nodes) {
                    t.count[node]++;
                    t.total[node] += (double)c;
                } else {
                    total[name] += (double)c;
                }
            }
            if (sp == cap) {
                OpenRow *grown = realloc(open, (size_t)cap * 2 * sizeof(OpenRow));
                if (!grown) {
                    status = 3;
                    break;
                }
                open = grown;
                cap *= 2;
            }
            open[sp++] = (OpenRow){i, node, name, c, 0.0, h};
        }
        while (!status && sp > 0)
            close_row(&open[--sp], self_total, nodes ? &t : NULL);
        for (Py_ssize_t j = 0; !status && nodes && j < t.n; j++) {  /* (exact: integers below 2**53) */
            total[t.name[j]] += t.total[j];
            self_total[t.name[j]] += t.self[j];
        }
        free(open);
        free(closed);
        Py_END_ALLOW_THREADS
        ret = walk_result(status, at, nodes ? &t : NULL);
    }
done:
    nodes_free(&t);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&deb);
    PyBuffer_Release(&db);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&stb);
    PyBuffer_Release(&nb);
    return ret;
}

PyDoc_STRVAR(renumber_doc,
"renumber(node_of, node_wide, new, hit)\n\n"
"``node_of[i] = new[node_of[i]]`` (``new``: int64) for the rows ``hit`` marks (empty: every row), -1 for\n"
"the others, in place. ValueError for a node out of range.");

static PyObject *renumber(PyObject *self, PyObject *args)
{
    Py_buffer nb, wb, hb;
    int nwide;
    if (!PyArg_ParseTuple(args, "w*py*y*", &nb, &nwide, &wb, &hb))
        return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = nb.len / (nwide ? 8 : 4);
    if (check_items(&nb, nwide ? 8 : 4, -1, "node_of") || check_items(&wb, 8, -1, "new"))
        goto done;
    if (hb.len != 0 && hb.len != n) {
        PyErr_SetString(PyExc_ValueError, "hit: one byte a row, or empty");
        goto done;
    }
    {
        void *node_of = nb.buf;
        const int64_t *fresh = wb.buf;
        const uint8_t *hit = hb.len ? hb.buf : NULL;
        Py_ssize_t k = wb.len / 8, bad = -1;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t v = int_at(node_of, nwide, i);
            if (v < 0 || v >= k) {
                bad = i;
                break;
            }
            v = (hit && !hit[i]) ? -1 : fresh[v];
            if (nwide)
                ((int64_t *)node_of)[i] = v;
            else
                ((int32_t *)node_of)[i] = (int32_t)v;
        }
        Py_END_ALLOW_THREADS
        if (bad >= 0) {
            PyErr_Format(PyExc_ValueError, "row %zd: node out of range", bad);
            goto done;
        }
        ret = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&nb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&hb);
    return ret;
}

PyDoc_STRVAR(name_keys_doc,
"name_keys(dense, dense_wide, dur, bits, key, key_wide)\n\n"
"``key[i] = dense[i] << bits | dur[i]`` in the key's type (int32, int64 when key_wide; dense int16, int32\n"
"when dense_wide; dur int64), as numpy computes it: the shift in the key's type, the duration cast to it\n"
"(two's complement) before the or. One pass, where numpy casts the durations in buffered chunks.");

static PyObject *name_keys(PyObject *self, PyObject *args)
{
    Py_buffer db, ub, kb;
    int dwide, kwide, bits;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*py*iw*p", &db, &dwide, &ub, &bits, &kb, &kwide))
        return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = ub.len / 8;
    if (check_items(&ub, 8, -1, "dur") || check_items(&db, dwide ? 4 : 2, n, "dense")
        || check_items(&kb, kwide ? 8 : 4, n, "key"))
        goto done;
    if (bits < 0 || bits >= (kwide ? 63 : 31)) {
        PyErr_SetString(PyExc_ValueError, "bits: out of the key's range");
        goto done;
    }
    {
        const void *dense = db.buf;
        const int64_t *dur = ub.buf;
        Py_BEGIN_ALLOW_THREADS
        if (kwide) {
            int64_t *key = kb.buf;
            for (Py_ssize_t i = 0; i < n; i++)
                key[i] = (int64_t)((uint64_t)name_at(dense, dwide, i) << bits) | dur[i];
        } else {
            int32_t *key = kb.buf;
            for (Py_ssize_t i = 0; i < n; i++)
                key[i] = (int32_t)((uint32_t)name_at(dense, dwide, i) << bits) | (int32_t)(uint32_t)(uint64_t)dur[i];
        }
        Py_END_ALLOW_THREADS
        ret = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&db);
    PyBuffer_Release(&ub);
    PyBuffer_Release(&kb);
    return ret;
}

/* ------------------------------------------------------------------------------ per-name order statistics */

/* The counters every pass of name_ranks shares (uint32: 4 MB), and the most names it takes: each pass then
 * resolves at least 3 bits of a duration (five ranks a name, 8 buckets each). */
#define RANK_COUNTERS (1 << 20)
#define RANK_MAX_NAMES (1 << 14)
#define RANK_MAX_FRACTIONS 6

PyDoc_STRVAR(name_ranks_doc,
"name_ranks(dense, dense_wide, dur, bits, fractions, out_count, out_min, out_max, out_pct) -> bool\n\n"
"Per ``dense`` name (0..k-1; int16, int32 when dense_wide), the count, the shortest and longest of the\n"
"``dur`` (int64, each below 2**bits) and, per fraction f of ``fractions`` (float64), the duration of nearest\n"
"rank ``max(ceil(count * f) - 1, 0)`` among the name's durations in ascending order: stats.py's sort of\n"
"(name, duration) keys without the sort or the keys. A radix selection in passes over the rows: the first\n"
"counts each name's durations in buckets of their top bits, each next one only the durations in the buckets\n"
"that hold a wanted rank, by their next bits, until every bit is known; the counters (4 MB) are the only\n"
"memory. out_count, out_min, out_max: k int64; out_pct: k x len(fractions) int64 (a name's row after row).\n"
"Returns False, writing nothing meaningful, when it does not take the rows (a duration below 0 or past\n"
"``bits``, more names than it counts, 2**32 rows or more): the caller sorts. ValueError for a name out of\n"
"range or buffers that do not fit.");

static PyObject *name_ranks(PyObject *self, PyObject *args)
{
    Py_buffer db, ub, fb, cb, mnb, mxb, pb;
    int dwide, bits;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*py*iy*w*w*w*w*", &db, &dwide, &ub, &bits, &fb, &cb, &mnb, &mxb, &pb))
        return NULL;
    PyObject *ret = NULL;
    Py_ssize_t n = ub.len / 8, k = cb.len / 8, nf = fb.len / 8;
    if (check_items(&ub, 8, -1, "dur") || check_items(&db, dwide ? 4 : 2, n, "dense")
        || check_items(&fb, 8, -1, "fractions") || check_items(&cb, 8, -1, "out_count")
        || check_items(&mnb, 8, k, "out_min") || check_items(&mxb, 8, k, "out_max")
        || check_items(&pb, 8, k * nf, "out_pct"))
        goto done;
    if (bits < 0 || bits > 62 || nf > RANK_MAX_FRACTIONS) {
        PyErr_SetString(PyExc_ValueError, "name_ranks: bits past 62 or too many fractions");
        goto done;
    }
    if (k > RANK_MAX_NAMES || (uint64_t)n >= ((uint64_t)1 << 32)) {
        ret = Py_NewRef(Py_False);
        goto done;
    }
    {
        const void *dense = db.buf;
        const int64_t *dur = ub.buf;
        const double *frac = fb.buf;
        int64_t *count = cb.buf, *lo = mnb.buf, *hi = mxb.buf, *pct = pb.buf;
        int status = 0;  /* 1: a name out of range, 2: a duration it does not take, 3: out of memory */
        uint32_t *hist = NULL;
        /* per wanted rank (name x fraction): the duration's bits known so far (its top bits, above
         * ``shift``), its rank among the name's durations with those bits, and its counters' region */
        int64_t *prefix = NULL, *rank = NULL, *region = NULL;
        Py_BEGIN_ALLOW_THREADS
        const Py_ssize_t nw = nf + 2, nt = k * nw;  /* wanted a name: the shortest, the longest, the fractions */
        hist = calloc(RANK_COUNTERS, sizeof(uint32_t));
        prefix = malloc((size_t)(nt ? nt : 1) * sizeof(int64_t));
        rank = malloc((size_t)(nt ? nt : 1) * sizeof(int64_t));
        region = malloc((size_t)(nt ? nt : 1) * sizeof(int64_t));
        if (!hist || !prefix || !rank || !region) {
            status = 3;
            goto out;
        }
        /* the first pass: the counts of each name's durations by their top ``b`` bits (and nothing else: the
         * counts, shortest and longest follow from them) */
        int b = bits < 16 ? bits : 16;
        while (b > 0 && ((int64_t)k << b) > RANK_COUNTERS)
            b--;
        int shift = bits - b;
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t d = name_at(dense, dwide, i), v = dur[i];
            if (d < 0 || d >= k) {
                status = 1;
                goto out;
            }
            if (v < 0 || (v >> bits) != 0) {
                status = 2;
                goto out;
            }
            hist[(d << b) + (v >> shift)]++;
        }
        /* each wanted rank's bucket: the top bits of its duration */
        const int64_t width = (int64_t)1 << b;
        for (Py_ssize_t d = 0; d < k; d++) {
            const uint32_t *h = hist + (d << b);
            int64_t c = 0;
            for (int64_t q = 0; q < width; q++)
                c += h[q];
            count[d] = c;
            for (Py_ssize_t j = 0; j < nw; j++) {
                const Py_ssize_t t = d * nw + j;
                if (!c) {
                    prefix[t] = rank[t] = -1;
                    continue;
                }
                int64_t r = j == 0 ? 0 : (j == 1 ? c - 1 : (int64_t)ceil((double)c * frac[j - 2]) - 1);  /* (as numpy: float64 ops) */
                r = r < 0 ? 0 : (r >= c ? c - 1 : r);
                int64_t q = 0;
                while (q < width - 1 && r >= (int64_t)h[q])
                    r -= h[q++];
                prefix[t] = q;
                rank[t] = r;
            }
        }
        /* the next passes: the next bits of the durations in the wanted buckets (a region of counters per
         * distinct bucket of a name) */
        while (shift > 0) {
            Py_ssize_t regions = 0;
            for (Py_ssize_t t = 0; t < nt; t++) {
                region[t] = -1;
                if (prefix[t] < 0)
                    continue;
                const Py_ssize_t first = t - t % nw;  /* (the name's first wanted rank) */
                for (Py_ssize_t u = first; u < t; u++)
                    if (prefix[u] == prefix[t]) {
                        region[t] = region[u];
                        break;
                    }
                if (region[t] < 0)
                    region[t] = regions++;
            }
            int step = shift < 16 ? shift : 16;
            while (step > 1 && ((int64_t)regions << step) > RANK_COUNTERS)
                step--;
            const int next = shift - step;
            const int64_t mask = ((int64_t)1 << step) - 1;
            memset(hist, 0, (size_t)(regions << step) * sizeof(uint32_t));
            for (Py_ssize_t i = 0; i < n; i++) {
                const int64_t d = name_at(dense, dwide, i), v = dur[i], top = v >> shift;
                if (d < 0 || d >= k)  /* (checked in the first pass; a buffer changed since: no counts) */
                    continue;
                const int64_t *pre = prefix + d * nw;
                for (Py_ssize_t j = 0; j < nw; j++)
                    if (pre[j] == top) {
                        hist[(region[d * nw + j] << step) + ((v >> next) & mask)]++;
                        break;
                    }
            }
            for (Py_ssize_t t = 0; t < nt; t++) {
                if (prefix[t] < 0)
                    continue;
                const uint32_t *h = hist + (region[t] << step);
                int64_t r = rank[t], q = 0;
                while (q < mask && r >= (int64_t)h[q])
                    r -= h[q++];
                prefix[t] = (prefix[t] << step) | q;
                rank[t] = r;
            }
            shift = next;
        }
        for (Py_ssize_t d = 0; d < k; d++) {
            const int64_t *pre = prefix + d * nw;
            lo[d] = pre[0] < 0 ? 0 : pre[0];
            hi[d] = pre[1] < 0 ? 0 : pre[1];
            for (Py_ssize_t j = 0; j < nf; j++)
                pct[d * nf + j] = pre[j + 2] < 0 ? 0 : pre[j + 2];
        }
    out:
        free(hist);
        free(prefix);
        free(rank);
        free(region);
        Py_END_ALLOW_THREADS
        if (status == 1)
            PyErr_SetString(PyExc_ValueError, "name_ranks: a name out of range");
        else if (status == 3)
            PyErr_NoMemory();
        else
            ret = Py_NewRef(status == 2 ? Py_False : Py_True);
    }
done:
    PyBuffer_Release(&db);
    PyBuffer_Release(&ub);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&mnb);
    PyBuffer_Release(&mxb);
    PyBuffer_Release(&pb);
    return ret;
}

/* The place of row ``r`` among the ``n_rare`` ascending ``rare_rows`` (a frequency-coded column's rows coded
 * 255), -1 when it is not one of them. */
static inline Py_ssize_t rare_place(const int64_t *rare_rows, Py_ssize_t n_rare, int64_t r)
{
    Py_ssize_t lo = 0, hi = n_rare;
    while (lo < hi) {
        const Py_ssize_t mid = lo + (hi - lo) / 2;
        if (rare_rows[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n_rare && rare_rows[lo] == r ? lo : -1;
}

/* rows ahead whose code dense_names and coded_matches prefetch (a gather through event rows jumps across a
 * code column of every event, past the caches; 128: the best of 32-512 at 30M and 100M events) */
#define CODED_AHEAD 128

PyDoc_STRVAR(dense_names_doc,
"dense_names(source, source_wide, index, index_wide, out[, codes]) -> bytes\n\n"
"The names of rows ``index`` (int32, int64 when index_wide) of the string-id column ``source`` (int16, int32\n"
"when source_wide), renumbered 0..k-1 in ascending order of their ids, into ``out`` (the source's type);\n"
"returns the k ids (int64, ascending) as bytes. selection.py's dense_ids of the gathered names, without the\n"
"gathered copy's passes. With ``codes`` (uint8, a one-byte code column), the column is ``source[codes]``:\n"
"``source`` holds its values; with ``rare_rows`` (int64, ascending) and ``rare_values`` (the source's type)\n"
"too, a row coded 255 holds the rare value at its row's place in rare_rows (a names column coded by\n"
"frequency). ValueError for a row or code out of range, a row coded 255 not among the rare rows, or an id\n"
"below -1.");

static PyObject *dense_names(PyObject *self, PyObject *args)
{
    Py_buffer sb, ib, ob, cb = {0}, rb = {0}, vb = {0};
    int swide, iwide;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*py*pw*|y*y*y*", &sb, &swide, &ib, &iwide, &ob, &cb, &rb, &vb))
        return NULL;
    PyObject *ret = NULL;
    const uint8_t *codes = cb.buf;  /* (NULL: no code column) */
    const int64_t *rare_rows = rb.obj ? (const int64_t *)rb.buf : NULL;  /* (NULL: no rare rows) */
    const void *rare_values = vb.obj ? vb.buf : NULL;
    Py_ssize_t n = ib.len / (iwide ? 8 : 4), n_values = sb.len / (swide ? 4 : 2), m = codes ? cb.len : n_values;
    Py_ssize_t n_rare = rb.len / 8;
    if (check_items(&sb, swide ? 4 : 2, -1, "source") || check_items(&ib, iwide ? 8 : 4, -1, "index")
        || check_items(&ob, swide ? 4 : 2, n, "out"))
        goto done;
    if ((rb.obj != NULL) != (vb.obj != NULL) || (rb.obj && (!codes || check_items(&rb, 8, -1, "rare_rows")
                                                           || check_items(&vb, swide ? 4 : 2, n_rare, "rare_values")))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "rare_rows and rare_values go together, with codes");
        goto done;
    }
    {
        const void *source = sb.buf, *index = ib.buf;
        void *out = ob.buf;
        int status = 0;  /* 1: out of range, 2: out of memory */
        int64_t top = -1;
        int64_t *map = NULL;
        int64_t *ids = NULL;
        Py_ssize_t k = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {  /* the gather, and the largest id */
            int64_t r = int_at(index, iwide, i);
            if (r < 0 || r >= m) {
                status = 1;
                break;
            }
            if (codes && i + CODED_AHEAD < n) {  /* (as coded_matches: the code rows ahead on its way) */
                const int64_t ahead = int_at(index, iwide, i + CODED_AHEAD);
                if (ahead >= 0 && ahead < m)
                    __builtin_prefetch(codes + ahead);
            }
            int64_t v;
            if (codes && codes[r] == 255 && rare_rows) {  /* a rare value: its row's place among the rare rows */
                const Py_ssize_t at = rare_place(rare_rows, n_rare, r);
                if (at < 0) {
                    status = 1;
                    break;
                }
                v = name_at(rare_values, swide, at);
            } else {
                if (codes) {
                    r = codes[r];
                    if (r >= n_values) {
                        status = 1;
                        break;
                    }
                }
                v = name_at(source, swide, r);
            }
            if (v < -1) {
                status = 1;
                break;
            }
            if (swide)
                ((int32_t *)out)[i] = (int32_t)v;
            else
                ((int16_t *)out)[i] = (int16_t)v;
            top = v > top ? v : top;
        }
        if (!status) {
            map = calloc((size_t)(top + 2), sizeof(int64_t));  /* 1 + id -> used, then its dense number */
            ids = malloc((size_t)(top + 2) * sizeof(int64_t));
            if (!map || !ids)
                status = 2;
        }
        if (!status) {
            for (Py_ssize_t i = 0; i < n; i++)
                map[name_at(out, swide, i) + 1] = 1;
            for (int64_t v = 0; v < top + 2; v++)
                if (map[v]) {
                    ids[k] = v - 1;
                    map[v] = k++;
                }
            for (Py_ssize_t i = 0; i < n; i++) {
                int64_t d = map[name_at(out, swide, i) + 1];
                if (swide)
                    ((int32_t *)out)[i] = (int32_t)d;
                else
                    ((int16_t *)out)[i] = (int16_t)d;
            }
        }
        Py_END_ALLOW_THREADS
        if (status == 1)
            PyErr_SetString(PyExc_ValueError, "a row past the source or a string id below -1");
        else if (status == 2)
            PyErr_NoMemory();
        else
            ret = PyBytes_FromStringAndSize((const char *)ids, (Py_ssize_t)(k * sizeof(int64_t)));
        free(map);
        free(ids);
    }
done:
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ib);
    PyBuffer_Release(&ob);
    if (cb.obj)
        PyBuffer_Release(&cb);
    if (rb.obj)
        PyBuffer_Release(&rb);
    if (vb.obj)
        PyBuffer_Release(&vb);
    return ret;
}

/* ------------------------------------------------------------------------------------ coded matches */

PyDoc_STRVAR(coded_matches_doc,
"coded_matches(index, index_wide, run_ends, cursor, first_below, below, window, out, codes, lut, rare_rows,\n"
"rare_match[, codes2, lut2, rare_rows2, rare_match2])\n\n"
"The search's match of rows ``index`` (int32, int64 when index_wide) of a one-byte code column ``codes``\n"
"(uint8): ``out[i] = lut[codes[index[i]]]`` (``lut`` 256 uint8: 0 or 1, 2 for a code that names no value;\n"
"``out`` one byte a row); with ``codes2`` and ``lut2`` too, the match of either column (a table's names or its\n"
"categories: one read of the rows for both). ``rare_rows`` (int64, ascending; empty: none) and ``rare_match``\n"
"(uint8, one per rare row): a row coded 255 reads the match at its row's place in rare_rows (a names column\n"
"coded by frequency). The rows are read for the positions ``i`` of each run (the runs end at ``run_ends``,\n"
"int64 ascending, the last ``len(index)``; each starts at the one before's end, the first at 0) from the\n"
"run's ``cursor`` (int64, one a run: updated) on while its row is below a limit rising from ``first_below``\n"
"by ``window`` rows to ``below``: the runs (pieces of a table's threads, each ascending) read one window of\n"
"the code columns together, in the caches, rather than each thread the whole column past them; a run that\n"
"is not ascending is read all the same (its rows past ``below`` wait for a later call). query.py's\n"
"column_matches of gathered code columns, without the decoded ids' passes. ValueError for a row out of\n"
"range, a code that names no value, a row coded 255 that is not among the rare rows, or runs and cursors\n"
"that do not cover the index (nothing is then known of ``out``).");

/* One code column of coded_matches: its codes, their match, and its rare rows' (n_rare 0: none). */
typedef struct {
    const uint8_t *codes, *lut, *rare_match;
    const int64_t *rare_rows;
    Py_ssize_t m, n_rare;
} CodedMatch;

/* The match (0 or 1) of row ``r`` of column ``c``, -1 when out of range or unknown. */
static inline int coded_match(const CodedMatch *c, int64_t r)
{
    if (r < 0 || r >= c->m)
        return -1;
    const uint8_t code = c->codes[r];
    if (code == 255 && c->n_rare) {  /* a rare value: its row's place among the rare rows */
        const Py_ssize_t at = rare_place(c->rare_rows, c->n_rare, r);
        return at < 0 ? -1 : c->rare_match[at] != 0;
    }
    return c->lut[code] > 1 ? -1 : c->lut[code];
}

/* Checks the buffers of one column and fills ``c``; -1 with an exception set. */
static int coded_column(CodedMatch *c, Py_buffer *cb, Py_buffer *lb, Py_buffer *rb, Py_buffer *mb)
{
    if (check_items(lb, 1, 256, "lut") || check_items(rb, 8, -1, "rare_rows")
        || check_items(mb, 1, rb->len / 8, "rare_match"))
        return -1;
    c->codes = cb->buf;
    c->m = cb->len;
    c->lut = lb->buf;
    c->rare_rows = rb->buf;
    c->n_rare = rb->len / 8;
    c->rare_match = mb->buf;
    return 0;
}

static PyObject *coded_matches(PyObject *self, PyObject *args)
{
    Py_buffer ib, eb, kb, ob, cb, lb, rb, mb, cb2 = {0}, lb2 = {0}, rb2 = {0}, mb2 = {0};
    int iwide;
    long long first_below, below, window;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*py*w*LLLw*y*y*y*y*|y*y*y*y*", &ib, &iwide, &eb, &kb, &first_below, &below,
                          &window, &ob, &cb, &lb, &rb, &mb, &cb2, &lb2, &rb2, &mb2))
        return NULL;
    PyObject *ret = NULL;
    const int two = cb2.obj != NULL;
    Py_ssize_t n = ib.len / (iwide ? 8 : 4), n_runs = eb.len / 8;
    CodedMatch col[2];
    if (check_items(&ib, iwide ? 8 : 4, -1, "index") || check_items(&ob, 1, n, "out")
        || check_items(&eb, 8, -1, "run_ends") || check_items(&kb, 8, n_runs, "cursor"))
        goto done;
    if (window <= 0 || first_below > below) {
        PyErr_SetString(PyExc_ValueError, "coded_matches: window must be positive, first_below at most below");
        goto done;
    }
    if (two && (lb2.obj == NULL || rb2.obj == NULL || mb2.obj == NULL)) {
        PyErr_SetString(PyExc_ValueError, "codes2 goes with lut2, rare_rows2 and rare_match2");
        goto done;
    }
    if (coded_column(&col[0], &cb, &lb, &rb, &mb) || (two && coded_column(&col[1], &cb2, &lb2, &rb2, &mb2)))
        goto done;
    {
        const int64_t *run_end = eb.buf;
        int64_t *cursor = kb.buf;
        int64_t run_start = 0;
        for (Py_ssize_t k = 0; k < n_runs; k++) {  /* the runs cover the index, each cursor inside its run */
            if (run_end[k] < run_start || run_end[k] > n || cursor[k] < run_start || cursor[k] > run_end[k]
                || (k == n_runs - 1 && run_end[k] != n)) {
                PyErr_SetString(PyExc_ValueError, "run_ends and cursor do not cover the index");
                goto done;
            }
            run_start = run_end[k];
        }
        if (n_runs == 0 && n != 0) {
            PyErr_SetString(PyExc_ValueError, "run_ends and cursor do not cover the index");
            goto done;
        }
        const void *index = ib.buf;
        uint8_t *out = ob.buf;
        const uint8_t *codes = col[0].codes, *codes2 = two ? col[1].codes : NULL;
        const int64_t m = col[0].m, m2 = two ? col[1].m : 0;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        for (int64_t limit = first_below;; limit = below - limit > window ? limit + window : below) {
        for (Py_ssize_t k = 0; k < n_runs && !bad; k++) {
            const Py_ssize_t end = (Py_ssize_t)run_end[k];
            Py_ssize_t i = (Py_ssize_t)cursor[k];
            for (; i < end; i++) {
                const int64_t r = int_at(index, iwide, i);
                if (r >= limit)  /* (the run's next window) */
                    break;
                if (i + CODED_AHEAD < end) {  /* the codes a few dozen rows on: their cache lines on the way */
                    const int64_t ahead = int_at(index, iwide, i + CODED_AHEAD);
                    if (ahead >= 0 && ahead < limit) {
                        if (ahead < m)
                            __builtin_prefetch(codes + ahead);
                        if (two && ahead < m2)
                            __builtin_prefetch(codes2 + ahead);
                    }
                }
                const int a = coded_match(&col[0], r);
                const int b = two ? coded_match(&col[1], r) : 0;
                if (a < 0 || b < 0) {
                    bad = 1;
                    break;
                }
                out[i] = (uint8_t)(a | b);
            }
            cursor[k] = i;
        }
        if (bad || limit >= below)
            break;
        }
        Py_END_ALLOW_THREADS
        if (bad)
            PyErr_SetString(PyExc_ValueError, "a row past the codes, a code past the values, or a row coded 255 "
                                              "not among the rare rows");
        else
            ret = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&ib);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&mb);
    if (cb2.obj)
        PyBuffer_Release(&cb2);
    if (lb2.obj)
        PyBuffer_Release(&lb2);
    if (rb2.obj)
        PyBuffer_Release(&rb2);
    if (mb2.obj)
        PyBuffer_Release(&mb2);
    return ret;
}

/* ----------------------------------------------------------------------------------- counter series */

/* A signed integer of a 1-, 2-, 4- or 8-byte column (the samples' names come as the name column's type). */
static inline int64_t signed_at(const void *a, int size, Py_ssize_t i)
{
    switch (size) {
    case 1:
        return ((const int8_t *)a)[i];
    case 2:
        return ((const int16_t *)a)[i];
    case 4:
        return ((const int32_t *)a)[i];
    default:
        return ((const int64_t *)a)[i];
    }
}

/* A series' key: (process koid, name, counter id, argument name), compared in that order (koid and id
 * unsigned, the string ids signed: -1 unresolved), as numpy orders the dense ranks of each column. */
typedef struct {
    uint64_t pid, cid;
    int64_t name, arg;
} SeriesKey;

static int key_cmp(const SeriesKey *a, const SeriesKey *b)
{
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    if (a->cid != b->cid)
        return a->cid < b->cid ? -1 : 1;
    if (a->arg != b->arg)
        return a->arg < b->arg ? -1 : 1;
    return 0;
}

static int key_order_cmp(const void *pa, const void *pb)
{
    return key_cmp(pa, pb);
}

static inline uint64_t series_hash(const SeriesKey *k)
{
    uint64_t h = k->pid * 0x9E3779B97F4A7C15ull;
    h ^= (h >> 29) ^ ((uint64_t)k->name * 0xC2B2AE3D27D4EB4Full);
    h ^= (h >> 31) ^ (k->cid * 0x165667B19E3779F9ull);
    h ^= (h >> 27) ^ ((uint64_t)k->arg * 0xBF58476D1CE4E5B9ull);
    h ^= h >> 33;
    return h * 0xff51afd7ed558ccdull;
}

/* A sample of a series being sorted by time: (time, position in the series' run) */
typedef struct {
    int64_t ts;
    int64_t at;
} TimeAt;

static int time_at_cmp(const void *pa, const void *pb)
{
    const TimeAt *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

PyDoc_STRVAR(counter_series_doc,
"counter_series(pid, name, name_size, cid, arg, ts, ev, value, out_ev, out_value, out_ts, key_pid, key_name,\n"
"               key_cid, key_arg, starts) -> n_series\n\n"
"The counters' samples (core/trace/counters.py build_counters) grouped into their series and each series\n"
"sorted by time, ties in sample order: what numpy does with dense ranks of the four key columns, a radix\n"
"sort of the series numbers, a sort of each series out of time order and gathers of the events, values and\n"
"times by that order (~15 passes over the samples and their temporaries) in one hashing pass, a counting\n"
"sort and one writing pass. Per sample: pid, cid uint64, name (signed, name_size bytes), arg int32, ts int64,\n"
"ev int32, value float64. The samples' events, values and times are written in series order (series by\n"
"(pid, name, cid, arg); out_* as long as the samples); the series' keys to key_* (uint64, int64, uint64,\n"
"int64) and where each starts to starts (int64, one more). Returns the number of series, or -1 when there\n"
"are more than key_pid holds (nothing written: the caller sorts with numpy). ValueError for columns of\n"
"different lengths.");

static PyObject *counter_series(PyObject *self, PyObject *args)
{
    Py_buffer pb, nb, cb, ab, tb, eb, vb, oeb, ovb, otb, kpb, knb, kcb, kab, sb;
    int name_size;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*iy*y*y*y*y*w*w*w*w*w*w*w*w*", &pb, &nb, &name_size, &cb, &ab, &tb, &eb, &vb,
                          &oeb, &ovb, &otb, &kpb, &knb, &kcb, &kab, &sb))
        return NULL;
    PyObject *ret = NULL;
    const Py_ssize_t n = pb.len / 8, cap = kpb.len / 8;
    if (name_size != 1 && name_size != 2 && name_size != 4 && name_size != 8) {
        PyErr_SetString(PyExc_ValueError, "counter_series: name_size is not 1, 2, 4 or 8");
        goto done;
    }
    if (check_items(&pb, 8, n, "pid") || check_items(&nb, name_size, n, "name") || check_items(&cb, 8, n, "cid")
        || check_items(&ab, 4, n, "arg") || check_items(&tb, 8, n, "ts") || check_items(&eb, 4, n, "ev")
        || check_items(&vb, 8, n, "value") || check_items(&oeb, 4, n, "out_ev") || check_items(&ovb, 8, n, "out_value")
        || check_items(&otb, 8, n, "out_ts") || check_items(&kpb, 8, cap, "key_pid")
        || check_items(&knb, 8, cap, "key_name") || check_items(&kcb, 8, cap, "key_cid")
        || check_items(&kab, 8, cap, "key_arg") || check_items(&sb, 8, cap + 1, "starts"))
        goto done;
    if (cap >= (Py_ssize_t)1 << 30) {
        PyErr_SetString(PyExc_ValueError, "counter_series: room for 2**30 series or more");
        goto done;
    }
    {
        const uint64_t *pid = pb.buf, *cid = cb.buf;
        const int32_t *arg = ab.buf, *ev = eb.buf;
        const int64_t *ts = tb.buf;
        const double *value = vb.buf;
        int32_t *out_ev = oeb.buf;
        double *out_value = ovb.buf;
        int64_t *out_ts = otb.buf, *starts = sb.buf, *key_name = knb.buf, *key_arg = kab.buf;
        uint64_t *key_pid = kpb.buf, *key_cid = kcb.buf;
        Py_ssize_t k = 0;
        int failed = 0; /* 1: out of memory, 2: more series than room */
        /* the series' table: open addressing over twice the room (a power of two), slot = series + 1 */
        size_t slots = 16;
        while (slots < 2 * (size_t)(cap > 0 ? cap : 1))
            slots *= 2;
        int32_t *slot = NULL, *rank_of = NULL;
        uint32_t *sid = NULL;
        SeriesKey *keys = NULL;
        int64_t *pos = NULL;
        TimeAt *run = NULL;
        Py_BEGIN_ALLOW_THREADS
        slot = calloc(slots, sizeof(int32_t));
        keys = malloc((size_t)(cap > 0 ? cap : 1) * sizeof(SeriesKey));
        sid = malloc((size_t)(n > 0 ? n : 1) * sizeof(uint32_t));
        if (!slot || !keys || !sid) {
            failed = 1;
            goto out;
        }
        /* each sample's series, numbered as first seen (a sample of the last one's series: no lookup) */
        Py_ssize_t last = -1;
        SeriesKey prev = {0, 0, 0, 0};
        for (Py_ssize_t i = 0; i < n; i++) {
            const SeriesKey key = {pid[i], cid[i], signed_at(nb.buf, name_size, i), (int64_t)arg[i]};
            if (last >= 0 && !key_cmp(&key, &prev)) {
                sid[i] = (uint32_t)last;
                continue;
            }
            size_t at = (size_t)series_hash(&key) & (slots - 1);
            for (;;) {
                const int32_t s = slot[at];
                if (!s) {
                    if (k == cap) {
                        failed = 2;
                        goto out;
                    }
                    keys[k] = key;
                    slot[at] = (int32_t)++k;
                    last = k - 1;
                    break;
                }
                if (!key_cmp(&keys[s - 1], &key)) {
                    last = s - 1;
                    break;
                }
                at = (at + 1) & (slots - 1);
            }
            sid[i] = (uint32_t)last;
            prev = key;
        }
        /* the series in key order: each one's rank, key and start */
        free(slot);
        slot = NULL;
        rank_of = malloc((size_t)(k > 0 ? k : 1) * sizeof(int32_t));
        pos = calloc((size_t)k + 1, sizeof(int64_t));
        SeriesKey *sorted = malloc((size_t)(k > 0 ? k : 1) * sizeof(SeriesKey));
        if (!rank_of || !pos || !sorted) {
            free(sorted);
            failed = 1;
            goto out;
        }
        memcpy(sorted, keys, (size_t)k * sizeof(SeriesKey));
        qsort(sorted, (size_t)k, sizeof(SeriesKey), key_order_cmp);
        for (Py_ssize_t r = 0; r < k; r++) {
            key_pid[r] = sorted[r].pid;
            key_name[r] = sorted[r].name;
            key_cid[r] = sorted[r].cid;
            key_arg[r] = sorted[r].arg;
        }
        for (Py_ssize_t s = 0; s < k; s++) { /* (keys are distinct: a binary search finds each one's rank) */
            Py_ssize_t lo = 0, hi = k;
            while (lo < hi) {
                const Py_ssize_t mid = lo + (hi - lo) / 2;
                if (key_cmp(&sorted[mid], &keys[s]) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            rank_of[s] = (int32_t)lo;
        }
        free(sorted);
        /* a counting sort by rank (stable: sample order within a series), written as it goes */
        for (Py_ssize_t i = 0; i < n; i++)
            pos[rank_of[sid[i]] + 1]++;
        for (Py_ssize_t r = 0; r < k; r++)
            pos[r + 1] += pos[r];
        memcpy(starts, pos, ((size_t)k + 1) * sizeof(int64_t));
        for (Py_ssize_t i = 0; i < n; i++) {
            const int64_t p = pos[rank_of[sid[i]]]++;
            out_ev[p] = ev[i];
            out_value[p] = value[i];
            out_ts[p] = ts[i];
        }
        /* each series out of time order sorted by time, ties in sample order */
        for (Py_ssize_t r = 0; r < k && !failed; r++) {
            const int64_t a = starts[r], b = starts[r + 1];
            int64_t j = a + 1;
            while (j < b && out_ts[j - 1] <= out_ts[j])
                j++;
            if (j >= b)
                continue;
            const size_t len = (size_t)(b - a);
            run = malloc(len * sizeof(TimeAt));
            int32_t *ev_tmp = malloc(len * sizeof(int32_t));
            double *value_tmp = malloc(len * sizeof(double));
            if (!run || !ev_tmp || !value_tmp) {
                free(ev_tmp);
                free(value_tmp);
                failed = 1;
                break;
            }
            for (size_t q = 0; q < len; q++) {
                run[q].ts = out_ts[a + (int64_t)q];
                run[q].at = (int64_t)q;
            }
            qsort(run, len, sizeof(TimeAt), time_at_cmp);
            memcpy(ev_tmp, out_ev + a, len * sizeof(int32_t));
            memcpy(value_tmp, out_value + a, len * sizeof(double));
            for (size_t q = 0; q < len; q++) {
                out_ts[a + (int64_t)q] = run[q].ts;
                out_ev[a + (int64_t)q] = ev_tmp[run[q].at];
                out_value[a + (int64_t)q] = value_tmp[run[q].at];
            }
            free(ev_tmp);
            free(value_tmp);
            free(run);
            run = NULL;
        }
    out:
        free(slot);
        free(keys);
        free(sid);
        free(rank_of);
        free(pos);
        free(run);
        Py_END_ALLOW_THREADS
        if (failed == 1)
            PyErr_NoMemory();
        else
            ret = PyLong_FromSsize_t(failed == 2 ? -1 : k);
    }
done:
    PyBuffer_Release(&pb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&ab);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&oeb);
    PyBuffer_Release(&ovb);
    PyBuffer_Release(&otb);
    PyBuffer_Release(&kpb);
    PyBuffer_Release(&knb);
    PyBuffer_Release(&kcb);
    PyBuffer_Release(&kab);
    PyBuffer_Release(&sb);
    return ret;
}

static PyMethodDef methods[] = {
    {"dense_names", dense_names, METH_VARARGS, dense_names_doc},
    {"coded_matches", coded_matches, METH_VARARGS, coded_matches_doc},
    {"name_keys", name_keys, METH_VARARGS, name_keys_doc},
    {"name_ranks", name_ranks, METH_VARARGS, name_ranks_doc},
    {"byte_counts", byte_counts, METH_VARARGS, byte_counts_doc},
    {"self_times", self_times, METH_VARARGS, self_times_doc},
    {"call_nodes", call_nodes, METH_VARARGS, call_nodes_doc},
    {"area_pass", area_pass, METH_VARARGS, area_pass_doc},
    {"renumber", renumber, METH_VARARGS, renumber_doc},
    {"counter_series", counter_series, METH_VARARGS, counter_series_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "summary_kernels",
    "Sums and counts over the model's columns (Info counts, the analysis panel's self times and call paths), "
    "compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit_summary_kernels(void)
{
    return PyModule_Create(&module);
}
