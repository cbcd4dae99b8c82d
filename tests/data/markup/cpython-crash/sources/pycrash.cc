/* A CPython embedding (C++: its own frames have mangled names) that crashes inside the interpreter (faulthandler._sigsegv) and prints its crash
 * report in symbolizer markup from a SIGSEGV handler: banner, modules and mmaps of every loaded ELF
 * object, the faulting pc, a data address in libpython and the backtrace through libpython and libc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <Python.h>
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <string>
#include <vector>

extern "C" void call_with_guard(void (*fn)(void *), void *arg); /* guard.S */

static int module_id;

static int print_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    const unsigned char *id = NULL;
    size_t id_len = 0;
    for (int i = 0; i < info->dlpi_phnum && !id; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof(*n), *desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                id = (const unsigned char *)desc;
                id_len = n->n_descsz;
                break;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    if (!id) return 0;
    const char *path = info->dlpi_name[0] ? info->dlpi_name : "pycrash";
    const char *base = strrchr(path, '/');
    int mod = module_id++;
    printf("{{{module:%d:%s:elf:", mod, base ? base + 1 : path);
    for (size_t i = 0; i < id_len; i++) printf("%02x", id[i]);
    printf("}}}\n");
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        unsigned long start = (info->dlpi_addr + ph->p_vaddr) & ~0xffful;
        unsigned long end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        printf("{{{mmap:%#lx:%#lx:load:%d:%s%s%s:%#lx}}}\n", start, end - start, mod, ph->p_flags & PF_R ? "r" : "",
               ph->p_flags & PF_W ? "w" : "", ph->p_flags & PF_X ? "x" : "", (unsigned long)ph->p_vaddr & ~0xffful);
    }
    return 0;
}

static void on_crash(int sig, siginfo_t *si, void *context) {
    ucontext_t *uc = static_cast<ucontext_t *>(context);
    void *pcs[64];
    int n = backtrace(pcs, 64);
    printf("pycrash: fatal signal %d (%s) at fault address %p, thread %d\n", sig, strsignal(sig), si->si_addr,
           (int)gettid());
    printf("{{{reset}}}\n");
    module_id = 0;
    dl_iterate_phdr(print_module, NULL);
    void *lib = dlopen("libpython3.11.so.1.0", RTLD_NOW | RTLD_NOLOAD);
    char *runtime = lib ? static_cast<char *>(dlsym(lib, "_PyRuntime")) : NULL;
    printf("pc {{{pc:%#lx}}} None is {{{data:%p}}}, runtime state {{{data:%p}}}\n",
           (unsigned long)uc->uc_mcontext.gregs[REG_RIP], (void *)Py_None, (void *)(runtime + 16));
    for (int i = 0; i < n; i++) printf("{{{bt:%d:%p:ra}}}\n", i, pcs[i]);
    fflush(stdout);
    _exit(128 + sig);
}

namespace {
template <typename Script> void run_all(const std::vector<Script> &scripts) {
    for (const Script &script : scripts) PyRun_SimpleString(script.c_str());
}

void run_scripts(void *arg) { run_all(*static_cast<std::vector<std::string> *>(arg)); }
}  // namespace

int main() {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    Py_Initialize();
    printf("pycrash: interpreter up, running the script\n");
    fflush(stdout);
    std::vector<std::string> scripts{"import faulthandler\n"
                                     "def deep(n):\n"
                                     "    return deep(n - 1) if n else sorted([3, 1, 2], key=lambda v: faulthandler._sigsegv() or v)\n"
                                     "deep(2)\n"};
    call_with_guard(run_scripts, &scripts);
    return 0;
}
