/* A program that prints symbolizer markup for its own backtrace (module, mmaps, bt), as a crash handler
 * would: the end-to-end test compiles it with gcc -O2 -g, runs it and symbolizes what it printed.
 * Lines marked LINE:<name> are where the test expects each frame. */
#define _GNU_SOURCE
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

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
    printf("{{{module:0:selfcrash:elf:");
    for (size_t i = 0; i < id_len; i++) printf("%02x", id[i]);
    printf("}}}\n");
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        printf("{{{mmap:%#lx:%#lx:load:0:%s%s%s:%#lx}}}\n", (unsigned long)(info->dlpi_addr + ph->p_vaddr),
               (unsigned long)ph->p_memsz, ph->p_flags & PF_R ? "r" : "", ph->p_flags & PF_W ? "w" : "",
               ph->p_flags & PF_X ? "x" : "", (unsigned long)ph->p_vaddr);
    }
    return 1; /* the main program comes first: stop there */
}

__attribute__((noinline)) void report(void) {
    void *pcs[32];
    int n = backtrace(pcs, 32); /* LINE:report */
    printf("*** selfcrash: fatal error, backtrace follows ***\n{{{reset}}}\n");
    dl_iterate_phdr(print_module, NULL);
    for (int i = 0; i < n; i++) printf("{{{bt:%d:%p:ra}}}\n", i, pcs[i]);
    fflush(stdout);
}

static inline int leaf(int x) {
    report(); /* LINE:leaf */
    return x + 1;
}

__attribute__((noinline)) int middle(int x) {
    return leaf(x) * 2; /* LINE:middle */
}

int main(int argc, char **argv) {
    (void)argv;
    return middle(argc) == 0; /* LINE:main */
}
