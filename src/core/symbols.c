/* symbols.c - see symbols.h. */
#include "core/symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OBJECTS 1024
#define NAME_CAP 1024

typedef struct {
    uintptr_t addr; /* runtime address */
    uint32_t size;
    uint32_t name;  /* offset into the object's names */
} sym;

typedef struct {
    char path[512];
    uintptr_t bias, lo, hi; /* load bias; the executable segments' runtime range */
    int loaded;             /* symbols read (or tried) */
    sym *syms;
    size_t nsyms;
    char *names;
} object;

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Kernel text symbols from /proc/kallsyms (addresses visible to root; all zeros otherwise: then none). */
typedef struct {
    uintptr_t addr;
    uint32_t name;
} ksym;

/* Process-wide: code addresses mean the same in every session. */
static struct {
    pthread_mutex_t lock;
    object *objs;
    int nobjs;
    int demangler_looked;
    demangle_fn demangle;
    int kernel_loaded;
    ksym *ksyms;
    size_t nksyms;
    char *knames;
} Y = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int by_kaddr(const void *a, const void *b)
{
    uintptr_t x = ((const ksym *)a)->addr, y = ((const ksym *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Read /proc/kallsyms's text symbols once. Caller holds the lock. */
static void load_kernel(void)
{
    Y.kernel_loaded = 1;
    FILE *f = fopen("/proc/kallsyms", "re");
    if (!f) return;
    size_t cap = 0, ncap = 0, noff = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long a;
        char type, name[256];
        if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a || (type != 't' && type != 'T')) continue;
        size_t l = strlen(name) + 1;
        if (Y.nksyms == cap) {
            cap = cap ? cap * 2 : 65536;
            ksym *g = realloc(Y.ksyms, cap * sizeof *g);
            if (!g) break;
            Y.ksyms = g;
        }
        if (noff + l > ncap) {
            ncap = ncap ? ncap * 2 : (1u << 20);
            char *g = realloc(Y.knames, ncap);
            if (!g) break;
            Y.knames = g;
        }
        memcpy(Y.knames + noff, name, l);
        Y.ksyms[Y.nksyms++] = (ksym){(uintptr_t)a, (uint32_t)noff};
        noff += l;
    }
    fclose(f);
    if (Y.nksyms) qsort(Y.ksyms, Y.nksyms, sizeof *Y.ksyms, by_kaddr);
}

/* Name of kernel address pc; its symbol's address, or 0 if unknown. Caller holds the lock. */
static uintptr_t kernel_name(uintptr_t pc, char *buf, size_t len)
{
    if (!Y.kernel_loaded) load_kernel();
    size_t lo = 0, hi = Y.nksyms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (Y.ksyms[mid].addr <= pc) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) {
        snprintf(buf, len, "[kernel]");
        return 0;
    }
    snprintf(buf, len, "%s", Y.knames + Y.ksyms[lo - 1].name);
    return Y.ksyms[lo - 1].addr;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    if (Y.nobjs >= MAX_OBJECTS) return 1;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    if (hi <= lo) return 0;
    for (int i = 0; i < Y.nobjs; i++)
        if (Y.objs[i].lo == lo && Y.objs[i].hi == hi) return 0; /* known */
    object *o = &Y.objs[Y.nobjs++];
    memset(o, 0, sizeof *o);
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    if (name) snprintf(o->path, sizeof o->path, "%s", name);
    else if (readlink("/proc/self/exe", o->path, sizeof o->path - 1) < 0) o->path[0] = 0;
    o->bias = info->dlpi_addr;
    o->lo = lo;
    o->hi = hi;
    return 0;
}

/* The object holding pc, refreshing the list once if none does; NULL if none. Caller holds the lock. */
static object *object_of(uintptr_t pc)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < Y.nobjs; i++)
            if (pc >= Y.objs[i].lo && pc < Y.objs[i].hi) return &Y.objs[i];
        if (pass == 0) {
            if (!Y.objs && !(Y.objs = calloc(MAX_OBJECTS, sizeof *Y.objs))) return NULL;
            dl_iterate_phdr(add_object, NULL);
        }
    }
    return NULL;
}

static int by_addr(const void *a, const void *b)
{
    uintptr_t x = ((const sym *)a)->addr, y = ((const sym *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Read o's function symbols from its file (.symtab, else .dynsym). */
static void load_symbols(object *o)
{
    o->loaded = 1;
    int fd = o->path[0] ? open(o->path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0) return;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
        close(fd);
        return;
    }
    size_t fsize = (size_t)st.st_size;
    const uint8_t *f = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED) return;
    const ElfW(Ehdr) *eh = (const void *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > fsize)
        goto out;
    const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff), *tab = NULL;
    for (int pass = 0; pass < 2 && !tab; pass++)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) && sh[i].sh_link < eh->e_shnum) tab = &sh[i];
    if (!tab || tab->sh_offset + tab->sh_size > fsize) goto out;
    const ElfW(Shdr) *strs = &sh[tab->sh_link];
    if (strs->sh_offset + strs->sh_size > fsize) goto out;
    const ElfW(Sym) *s = (const void *)(f + tab->sh_offset);
    size_t n = tab->sh_size / sizeof *s, names_len = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (ELF64_ST_TYPE(s[i].st_info) == STT_FUNC && s[i].st_value && s[i].st_name < strs->sh_size)
            names_len += strnlen((const char *)f + strs->sh_offset + s[i].st_name, strs->sh_size - s[i].st_name) + 1;
    o->syms = malloc((n ? n : 1) * sizeof *o->syms);
    o->names = malloc(names_len ? names_len : 1);
    if (!o->syms || !o->names) goto out;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (ELF64_ST_TYPE(s[i].st_info) != STT_FUNC || !s[i].st_value || s[i].st_name >= strs->sh_size) continue;
        const char *nm = (const char *)f + strs->sh_offset + s[i].st_name;
        size_t l = strnlen(nm, strs->sh_size - s[i].st_name);
        memcpy(o->names + off, nm, l);
        o->names[off + l] = 0;
        o->syms[k++] = (sym){o->bias + s[i].st_value, (uint32_t)(s[i].st_size > UINT32_MAX ? UINT32_MAX : s[i].st_size),
                             (uint32_t)off};
        off += l + 1;
    }
    o->nsyms = k;
    qsort(o->syms, k, sizeof *o->syms, by_addr);
out:
    munmap((void *)f, fsize);
}

/* The symbol of o containing pc, or NULL. */
static const sym *find(const object *o, uintptr_t pc)
{
    size_t lo = 0, hi = o->nsyms;
    while (lo < hi) { /* the last symbol starting at or below pc */
        size_t mid = (lo + hi) / 2;
        if (o->syms[mid].addr <= pc) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 4;) { /* a few candidates: aliases and nested sizes */
        const sym *s = &o->syms[i];
        if (pc >= s->addr && pc - s->addr < (s->size ? s->size : 1)) return s;
    }
    return NULL;
}

/* __cxa_demangle if the process has one (looked up once). Caller holds the lock. */
static demangle_fn demangler(void)
{
    if (!Y.demangler_looked) {
        Y.demangler_looked = 1;
        Y.demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (!Y.demangle) {
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h) Y.demangle = (demangle_fn)dlsym(h, "__cxa_demangle");
        }
    }
    return Y.demangle;
}

/* The last path component of p. */
static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void js_symbols_name(uintptr_t pc, char *buf, size_t len, js_symbol_info *info)
{
    js_symbol_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    info->start = pc;
    pthread_mutex_lock(&Y.lock);
    if (pc >= 0xffff800000000000ULL) {
        info->kernel = 1;
        uintptr_t start = kernel_name(pc, buf, len);
        info->start = start ? start : 0xffff800000000000ULL;
        pthread_mutex_unlock(&Y.lock);
        return;
    }
    object *o = object_of(pc);
    if (!o) {
        pthread_mutex_unlock(&Y.lock);
        snprintf(buf, len, "[unknown_native]");
        return;
    }
    if (!o->loaded) load_symbols(o);
    info->in_jvm = strstr(base_name(o->path), "libjvm") != NULL;
    snprintf(info->lib, sizeof info->lib, "%s", base_name(o->path));
    const sym *s = find(o, pc);
    if (!s) { /* no symbol there (a stripped library's internal function): the library itself */
        info->start = o->lo;
        snprintf(buf, len, "[%s]", base_name(o->path));
        pthread_mutex_unlock(&Y.lock);
        return;
    }
    info->start = s->addr;
    const char *name = o->names + s->name;
    demangle_fn d = name[0] == '_' && name[1] == 'Z' ? demangler() : NULL;
    pthread_mutex_unlock(&Y.lock); /* the names stay: objects are only added, never freed while running */
    int status = -1;
    char *dm = d ? d(name, NULL, NULL, &status) : NULL;
    snprintf(buf, len, "%s", dm && status == 0 ? dm : name);
    free(dm);
}

void js_symbols_clear(void)
{
    pthread_mutex_lock(&Y.lock);
    for (int i = 0; i < Y.nobjs; i++) {
        free(Y.objs[i].syms);
        free(Y.objs[i].names);
    }
    free(Y.objs);
    Y.objs = NULL;
    Y.nobjs = 0;
    free(Y.ksyms);
    free(Y.knames);
    Y.ksyms = NULL;
    Y.knames = NULL;
    Y.nksyms = 0;
    Y.kernel_loaded = 0;
    pthread_mutex_unlock(&Y.lock);
}
