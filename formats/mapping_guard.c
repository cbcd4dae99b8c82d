/* A SIGBUS guard for the memory-mapped trace file (optional; see mapped_file.py).
 *
 * Why: the trace's event times, data words and arguments are read from the file's memory map on demand. When
 * another program truncates the file in place while it is mapped (a tracer re-run with the same output path
 * opens it with O_TRUNC), a read of a page past the new end raises SIGBUS and the process dies. This module
 * installs a SIGBUS handler that, for a fault inside a registered mapping, maps anonymous zero pages over the
 * map from the faulting page to its end (mmap MAP_FIXED, a system call, async-signal-safe on Linux in
 * practice), counts the fault and returns: the faulting read retries and reads zeros. The reads themselves
 * cost nothing more.
 *
 * Any other SIGBUS (outside the registered ranges, or one sent with kill/raise) is passed on once to the handler
 * that was installed before (Python's faulthandler, when enabled), with the disposition handed back to it; a
 * second one, or none before, gets the default action (the process dies as it would have).
 *
 * The range table is a fixed array read lock-free by the handler: registration happens with the GIL held
 * (so one writer at a time); a slot's end is stored after its start on registration and cleared before it on
 * release, so the handler never matches a half-written slot.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS 64

static _Atomic uintptr_t slot_start[SLOTS];
static _Atomic uintptr_t slot_end[SLOTS];
static _Atomic unsigned long slot_faults[SLOTS];
static _Atomic unsigned long passed_on;
static struct sigaction previous;
static uintptr_t page_mask;

static int is_ours(const struct sigaction *act);

static void on_sigbus(int sig, siginfo_t *info, void *context) {
    if (info != NULL && info->si_code > 0) { /* raised by the kernel for a fault (not kill/raise) */
        uintptr_t addr = (uintptr_t)info->si_addr;
        for (int i = 0; i < SLOTS; i++) {
            uintptr_t end = atomic_load(&slot_end[i]);
            uintptr_t start = atomic_load(&slot_start[i]);
            if (end != 0 && addr >= start && addr < end) {
                /* the file ends before this page: every page of the map from here on is past its end too
                 * (one system call for the rest, not a fault a page: a whole-column read of a large file cut
                 * to nothing would fault ~250,000 times a GB) */
                uintptr_t page = addr & page_mask;
                void *got = mmap((void *)page, (size_t)(end - page), PROT_READ,
                                 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (got != MAP_FAILED) {
                    atomic_fetch_add(&slot_faults[i], 1);
                    return; /* the read retries and sees zeros */
                }
                break;
            }
        }
    }
    /* not ours: the handler before, once (it may dump a traceback and re-raise), else the default action */
    if (atomic_fetch_add(&passed_on, 1) == 0 && !is_ours(&previous)) {
        if (previous.sa_flags & SA_SIGINFO) {
            if (previous.sa_sigaction != NULL) {
                sigaction(sig, &previous, NULL);
                previous.sa_sigaction(sig, info, context);
                return;
            }
        } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
            sigaction(sig, &previous, NULL);
            previous.sa_handler(sig);
            return;
        }
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (info == NULL || info->si_code <= 0)
        raise(sig); /* a sent signal does not repeat by itself: send it again, now to the default action */
    /* a fault repeats when the read retries, now with the default action */
}

static int is_ours(const struct sigaction *act) {
    return (act->sa_flags & SA_SIGINFO) && act->sa_sigaction == on_sigbus;
}

/* Install the handler unless it is the current one (someone may have installed theirs since: it becomes the
 * one passed on to). Returns 0, or -1 with errno set. */
static int install(void) {
    struct sigaction current;
    if (sigaction(SIGBUS, NULL, &current) != 0)
        return -1;
    if (is_ours(&current))
        return 0;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_sigbus;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    previous = current;
    atomic_store(&passed_on, 0);
    return sigaction(SIGBUS, &act, NULL);
}

static PyObject *guard_register(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    uintptr_t start = (uintptr_t)view.buf;
    uintptr_t end = start + (uintptr_t)view.len;
    PyBuffer_Release(&view);
    if (end == start)
        return PyLong_FromLong(-1); /* nothing mapped: nothing to guard */
    if (install() != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    /* whole pages: the map's last page reads zeros past the file's end, the fault is at a page's address */
    start &= page_mask;
    end = (end + ~page_mask) & page_mask;
    for (int i = 0; i < SLOTS; i++) {
        if (atomic_load(&slot_end[i]) == 0 && atomic_load(&slot_start[i]) == 0) {
            atomic_store(&slot_faults[i], 0);
            atomic_store(&slot_start[i], start);
            atomic_store(&slot_end[i], end);
            return PyLong_FromLong(i);
        }
    }
    return PyLong_FromLong(-1); /* table full: this map is not guarded (the caller checks the file instead) */
}

static int slot_arg(PyObject *args, int *slot) {
    if (!PyArg_ParseTuple(args, "i", slot))
        return -1;
    if (*slot < 0 || *slot >= SLOTS) {
        PyErr_SetString(PyExc_ValueError, "no such guard slot");
        return -1;
    }
    return 0;
}

static PyObject *guard_unregister(PyObject *self, PyObject *args) {
    int slot;
    if (slot_arg(args, &slot) != 0)
        return NULL;
    atomic_store(&slot_end[slot], 0);
    atomic_store(&slot_start[slot], 0);
    Py_RETURN_NONE;
}

static PyObject *guard_faults(PyObject *self, PyObject *args) {
    int slot;
    if (slot_arg(args, &slot) != 0)
        return NULL;
    return PyLong_FromUnsignedLong(atomic_load(&slot_faults[slot]));
}

static PyObject *guard_install(PyObject *self, PyObject *unused) {
    if (install() != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

static PyObject *guard_installed(PyObject *self, PyObject *unused) {
    struct sigaction current;
    if (sigaction(SIGBUS, NULL, &current) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    return PyBool_FromLong(is_ours(&current));
}

static PyMethodDef methods[] = {
    {"register", guard_register, METH_VARARGS,
     "register(buffer) -> slot: guard the mapping under ``buffer`` (installs the handler); -1 when not guarded"},
    {"unregister", guard_unregister, METH_VARARGS, "unregister(slot): stop guarding (before the map is closed)"},
    {"faults", guard_faults, METH_VARARGS, "faults(slot) -> faults of that mapping turned into zeros so far"},
    {"install", guard_install, METH_NOARGS,
     "install(): make the handler SIGBUS's current one again (one installed since is passed on to)"},
    {"installed", guard_installed, METH_NOARGS, "installed() -> whether the handler is SIGBUS's current one"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "mapping_guard", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_mapping_guard(void) {
    long size = sysconf(_SC_PAGESIZE);
    page_mask = ~(uintptr_t)((size > 0 ? size : 4096) - 1);
    return PyModule_Create(&module);
}
