/* symbols.c - see symbols.h; the ELF and kallsyms readers are declared in symbols_int.h. */
#include "core/symbols.h"
#include "symbols_int.h"
#include "core/codenames.h"

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
#define NAME_CAP 1024              /* longest name kept of one symbol (longer ones are cut) */
#define NAMES_MAX (64u << 20)      /* most bytes of names kept of one object or of the kernel */

typedef struct {
    char path[512];
    uintptr_t bias, lo, hi; /* load bias; the executable segments' runtime range */
    int loaded;             /* symbols read (or tried) */
    js_symtab tab;
} object;

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Process-wide: code addresses mean the same in every session. */
static struct {
    pthread_mutex_t lock;
    object *objs;
    int nobjs;
    int demangler_looked;
    demangle_fn demangle;
    int kernel_loaded;
    js_symtab kernel; /* text symbols from /proc/kallsyms (addresses visible to root; all zeros otherwise: none) */
} Y = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int by_addr(const void *a, const void *b)
{
    uintptr_t x = ((const js_sym *)a)->addr, y = ((const js_sym *)b)->addr;
    return x < y ? -1 : x > y;
}

void js_symtab_free(js_symtab *t)
{
    free(t->syms);
    free(t->names);
    memset(t, 0, sizeof *t);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* One line of /proc/kallsyms, "ADDRESS TYPE NAME [MODULE]": 1 and the three fields (name: up to 255 characters,
 * not terminated), or 0. What sscanf("%llx %c %255s") took, without its cost: 120,000 lines cost 44 ms of CPU through
 * sscanf here, most of a profiler start's first kernel frame name. */
static int kallsyms_line(const char *p, unsigned long long *addr, char *type, const char **name, size_t *len)
{
    while (is_space(*p)) p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    unsigned long long a = 0;
    int digits = 0;
    for (;; p++, digits++) {
        int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
        if (v < 0) break;
        if (digits < 16) a = a << 4 | (unsigned)v;
        else a = ~0ULL; /* more than 64 bits: as strtoull, the largest value */
    }
    if (!digits) return 0;
    while (is_space(*p)) p++;
    if (!*p) return 0;
    *type = *p++;
    while (is_space(*p)) p++;
    const char *n = p;
    while (*p && !is_space(*p) && p - n < 255) p++;
    if (p == n) return 0;
    *addr = a;
    *name = n;
    *len = (size_t)(p - n);
    return 1;
}

int js_symtab_from_kallsyms(FILE *f, js_symtab *t)
{
    memset(t, 0, sizeof *t);
    size_t cap = 0, ncap = 0, noff = 0;
    char line[512];
    int sorted = 1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a;
        char type;
        const char *name;
        size_t nl;
        if (!kallsyms_line(line, &a, &type, &name, &nl) || !a || (type != 't' && type != 'T')) continue;
        size_t l = nl + 1;
        if (noff + l > NAMES_MAX) break;
        if (t->n == cap) {
            size_t c = cap ? cap * 2 : 65536;
            js_sym *g = realloc(t->syms, c * sizeof *g);
            if (!g) break;
            t->syms = g;
            cap = c;
        }
        if (noff + l > ncap) {
            size_t c = ncap ? ncap * 2 : (1u << 20);
            char *g = realloc(t->names, c);
            if (!g) break;
            t->names = g;
            ncap = c;
        }
        memcpy(t->names + noff, name, nl);
        t->names[noff + nl] = '\0';
        if (t->n && t->syms[t->n - 1].addr > (uintptr_t)a) sorted = 0;
        t->syms[t->n++] = (js_sym){(uintptr_t)a, 0, (uint32_t)noff};
        noff += l;
    }
    if (t->n && !sorted) qsort(t->syms, t->n, sizeof *t->syms, by_addr);
    return 0;
}

/* Index + 1 of the last symbol of t at or below pc, 0 if none. */
static size_t last_at_or_below(const js_symtab *t, uintptr_t pc)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->syms[mid].addr <= pc) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Name of kernel address pc; its symbol's address, or 0 if unknown. Caller holds the lock. */
static uintptr_t kernel_name(uintptr_t pc, char *buf, size_t len)
{
    if (!Y.kernel_loaded) {
        Y.kernel_loaded = 1;
        FILE *f = fopen("/proc/kallsyms", "re");
        if (f) {
            js_symtab_from_kallsyms(f, &Y.kernel);
            fclose(f);
        }
    }
    size_t i = last_at_or_below(&Y.kernel, pc);
    if (!i) {
        snprintf(buf, len, "[kernel]");
        return 0;
    }
    snprintf(buf, len, "%s", Y.kernel.names + Y.kernel.syms[i - 1].name);
    return Y.kernel.syms[i - 1].addr;
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

/* 1 if [off, off + size) lies within a file of fsize bytes and off is aligned for align (no sum that can wrap). */
static int within(uint64_t off, uint64_t size, size_t fsize, size_t align)
{
    return off <= fsize && size <= fsize - off && off % align == 0;
}

/* The ELF header of image f when it is a 64-bit ELF whose section headers lie within it; NULL otherwise. */
static const ElfW(Ehdr) *elf_header(const uint8_t *f, size_t fsize)
{
    if (fsize < sizeof(ElfW(Ehdr))) return NULL;
    const ElfW(Ehdr) *eh = (const void *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shentsize != sizeof(ElfW(Shdr)) ||
        !within(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)), fsize, _Alignof(ElfW(Shdr))))
        return NULL;
    return eh;
}

int js_symtab_from_elf(const uint8_t *f, size_t fsize, uintptr_t bias, js_symtab *t)
{
    memset(t, 0, sizeof *t);
    const ElfW(Ehdr) *eh = elf_header(f, fsize);
    if (!eh) return -1;
    const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff), *tab = NULL;
    for (int pass = 0; pass < 2 && !tab; pass++)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) && sh[i].sh_link < eh->e_shnum) tab = &sh[i];
    if (!tab || !within(tab->sh_offset, tab->sh_size, fsize, _Alignof(ElfW(Sym)))) return -1;
    const ElfW(Shdr) *strs = &sh[tab->sh_link];
    if (!within(strs->sh_offset, strs->sh_size, fsize, 1)) return -1;
    const ElfW(Sym) *s = (const void *)(f + tab->sh_offset);
    const char *str = (const char *)f + strs->sh_offset;
    size_t n = tab->sh_size / sizeof *s, names_len = 0, k = 0;
    for (size_t i = 0; i < n; i++) /* names are cut at NAME_CAP, and at most NAMES_MAX bytes of them are kept */
        if (ELF64_ST_TYPE(s[i].st_info) == STT_FUNC && s[i].st_value && s[i].st_name < strs->sh_size) {
            size_t l = strnlen(str + s[i].st_name, strs->sh_size - s[i].st_name);
            if (names_len + (l < NAME_CAP ? l : NAME_CAP) + 1 > NAMES_MAX) break;
            names_len += (l < NAME_CAP ? l : NAME_CAP) + 1;
        }
    t->syms = malloc((n ? n : 1) * sizeof *t->syms);
    t->names = malloc(names_len ? names_len : 1);
    if (!t->syms || !t->names) {
        js_symtab_free(t);
        return -1;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (ELF64_ST_TYPE(s[i].st_info) != STT_FUNC || !s[i].st_value || s[i].st_name >= strs->sh_size) continue;
        const char *nm = str + s[i].st_name;
        size_t l = strnlen(nm, strs->sh_size - s[i].st_name);
        if (l > NAME_CAP) l = NAME_CAP;
        if (off + l + 1 > names_len) break;
        memcpy(t->names + off, nm, l);
        t->names[off + l] = 0;
        t->syms[k++] = (js_sym){bias + s[i].st_value, (uint32_t)(s[i].st_size > UINT32_MAX ? UINT32_MAX : s[i].st_size),
                                (uint32_t)off};
        off += l + 1;
    }
    t->n = k;
    qsort(t->syms, k, sizeof *t->syms, by_addr);
    return 0;
}

int js_elf_debug_ref(const uint8_t *f, size_t fsize, char *build_id, size_t idlen, char *link, size_t linklen)
{
    build_id[0] = link[0] = 0;
    const ElfW(Ehdr) *eh = elf_header(f, fsize);
    if (!eh) return -1;
    const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB) return 1;
    const ElfW(Shdr) *names = eh->e_shstrndx < eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
    if (names && !within(names->sh_offset, names->sh_size, fsize, 1)) names = NULL;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (!within(sh[i].sh_offset, sh[i].sh_size, fsize, 1) || sh[i].sh_type == SHT_NOBITS) continue;
        const uint8_t *p = f + sh[i].sh_offset;
        uint64_t size = sh[i].sh_size;
        if (sh[i].sh_type == SHT_NOTE) { /* notes: namesz, descsz, type, name, desc (each padded to 4) */
            for (uint64_t o = 0; o + 12 <= size;) {
                uint32_t nsz, dsz, type;
                memcpy(&nsz, p + o, 4), memcpy(&dsz, p + o + 4, 4), memcpy(&type, p + o + 8, 4);
                uint64_t nal = ((uint64_t)nsz + 3) & ~3ULL, dal = ((uint64_t)dsz + 3) & ~3ULL;
                if (nal > size - o - 12 || dal > size - o - 12 - nal) break;
                if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + o + 12, "GNU", 4) && dsz > 1 &&
                    dsz * 2 < idlen) {
                    for (uint32_t k = 0; k < dsz; k++) snprintf(build_id + 2 * k, 3, "%02x", p[o + 12 + nal + k]);
                }
                o += 12 + nal + dal;
            }
        } else if (names && sh[i].sh_name < names->sh_size &&
                   !strncmp((const char *)f + names->sh_offset + sh[i].sh_name, ".gnu_debuglink",
                            names->sh_size - sh[i].sh_name)) {
            size_t l = strnlen((const char *)p, size);
            if (l && l < size && l < linklen && !memchr(p, '/', l)) memcpy(link, p, l), link[l] = 0;
        }
    }
    return 0;
}

/* Map the regular file at path read-only: its bytes, or NULL; *size its length. */
static const uint8_t *map_file(const char *path, size_t *size)
{
    int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0) return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
        close(fd);
        return NULL;
    }
    *size = (size_t)st.st_size;
    const uint8_t *f = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    return f == MAP_FAILED ? NULL : f;
}

/* The separate debug file of the object at path (f its image) that exists, into out: by build id under
 * /usr/lib/debug/.build-id, else by .gnu_debuglink beside it, in .debug/ beside it, or under /usr/lib/debug.
 * 0, or -1 if it has a .symtab itself or none is found. */
static int debug_file(const uint8_t *f, size_t fsize, const char *path, char *out, size_t len)
{
    char id[130], link[256];
    if (js_elf_debug_ref(f, fsize, id, sizeof id, link, sizeof link) != 0) return -1;
    if (strlen(id) > 2 && snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2) < (int)len &&
        access(out, R_OK) == 0)
        return 0;
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path) : 0;
    static const char *const forms[] = {"%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s"};
    for (size_t i = 0; link[0] && slash && i < sizeof forms / sizeof forms[0]; i++)
        if (snprintf(out, len, forms[i], dir, path, link) < (int)len && strcmp(out, path) != 0 && access(out, R_OK) == 0)
            return 0;
    return -1;
}

/* Read o's function symbols from its file (.symtab; else a separate debug file's, when installed; else .dynsym). */
static void load_symbols(object *o)
{
    o->loaded = 1;
    int fd = o->path[0] ? open(o->path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0) return;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
        close(fd);
        return;
    }
    size_t fsize = (size_t)st.st_size;
    const uint8_t *f = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED) return;
    char dbg[600];
    size_t dsize = 0;
    const uint8_t *d = debug_file(f, fsize, o->path, dbg, sizeof dbg) == 0 ? map_file(dbg, &dsize) : NULL;
    if (!d || js_symtab_from_elf(d, dsize, o->bias, &o->tab) != 0 || o->tab.n == 0) {
        js_symtab_free(&o->tab);
        js_symtab_from_elf(f, fsize, o->bias, &o->tab);
    }
    if (d) munmap((void *)d, dsize);
    munmap((void *)f, fsize);
}

/* How plain a name is, of aliases at one address (a debug file's table has them all): a versioned name
 * ("pow@GLIBC_2.2.5") or glibc's internal alias ("__GI___clone3") is less so; then fewer leading underscores. */
static int plainness(const char *n)
{
    int u = 0;
    while (n[u] == '_') u++;
    return (strchr(n, '@') ? 0 : 100) + (strncmp(n, "__GI_", 5) ? 10 : 0) - (u < 9 ? u : 9);
}

const js_sym *js_symtab_find(const js_symtab *t, uintptr_t pc)
{
    size_t lo = last_at_or_below(t, pc);
    const js_sym *best = NULL;
    for (size_t i = lo; i-- > 0 && lo - i <= 8;) { /* a few candidates: aliases and nested sizes */
        const js_sym *s = &t->syms[i];
        if (best && s->addr != best->addr) break; /* the aliases of the match found */
        if (!(pc >= s->addr && pc - s->addr < (s->size ? s->size : 1))) continue;
        if (!best || plainness(t->names + s->name) > plainness(t->names + best->name)) best = s;
    }
    return best;
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
        uintptr_t start;
        if (js_codenames_find(pc, buf, len, &start) == 0) info->start = start; /* the JVM's generated code */
        else snprintf(buf, len, "[unknown_native]");
        return;
    }
    if (!o->loaded) load_symbols(o);
    info->in_jvm = strstr(base_name(o->path), "libjvm") != NULL;
    snprintf(info->lib, sizeof info->lib, "%s", base_name(o->path));
    const js_sym *s = js_symtab_find(&o->tab, pc);
    if (!s) { /* no symbol there (a stripped library's internal function): the library itself */
        info->start = o->lo;
        info->no_symbol = 1;
        snprintf(buf, len, "[%s]", base_name(o->path));
        pthread_mutex_unlock(&Y.lock);
        return;
    }
    info->start = s->addr;
    const char *name = o->tab.names + s->name;
    demangle_fn d = name[0] == '_' && name[1] == 'Z' ? demangler() : NULL;
    pthread_mutex_unlock(&Y.lock); /* the names stay: objects are only added, never freed while running */
    int status = -1;
    char *dm = d ? d(name, NULL, NULL, &status) : NULL;
    snprintf(buf, len, "%s", dm && status == 0 ? dm : name);
    free(dm);
}

void js_symbols_cut_arguments(char *name)
{
    char *p = strrchr(name, ')');
    if (!p) return;
    for (int depth = 1; --p > name;) {
        if (*p == ')') depth++;
        else if (*p == '(' && --depth == 0) {
            *p = 0;
            return;
        }
    }
}

uintptr_t js_symbols_lookup(uintptr_t pc, const char *name)
{
    uintptr_t addr = 0;
    pthread_mutex_lock(&Y.lock);
    object *o = object_of(pc);
    if (o && !o->loaded) load_symbols(o);
    for (size_t i = 0; o && i < o->tab.n && !addr; i++)
        if (strcmp(o->tab.names + o->tab.syms[i].name, name) == 0) addr = o->tab.syms[i].addr;
    pthread_mutex_unlock(&Y.lock);
    return addr;
}

int js_symbols_ranges(uintptr_t pc, const char *const *prefixes, int np, uintptr_t (*out)[2], int max)
{
    int n = 0;
    pthread_mutex_lock(&Y.lock);
    object *o = object_of(pc);
    if (o && !o->loaded) load_symbols(o);
    for (size_t i = 0; o && i < o->tab.n && n < max; i++) { /* the table is sorted by address */
        const char *name = o->tab.names + o->tab.syms[i].name;
        for (int k = 0; k < np; k++)
            if (strncmp(name, prefixes[k], strlen(prefixes[k])) == 0) {
                out[n][0] = o->tab.syms[i].addr;
                out[n][1] = o->tab.syms[i].addr + (o->tab.syms[i].size ? o->tab.syms[i].size : 1);
                n++;
                break;
            }
    }
    pthread_mutex_unlock(&Y.lock);
    return n;
}

/* 1 if the ELF name raw is name: as it is, or demangled without its parameter list (raw is then mangled and holds
 * name's last component: "_ZN15G1CollectedHeap22humongous_obj_allocateEm" for the C++ name). Caller holds the lock. */
static int same_function(const char *raw, const char *name, const char *last)
{
    if (strcmp(raw, name) == 0) return 1;
    if (raw[0] != '_' || raw[1] != 'Z' || !strstr(raw, last) || !demangler()) return 0;
    int status = -1;
    char *dm = Y.demangle(raw, NULL, NULL, &status);
    int same = 0;
    if (dm && status == 0) {
        js_symbols_cut_arguments(dm);
        same = strcmp(dm, name) == 0;
    }
    free(dm);
    return same;
}

uintptr_t js_symbols_find(const char *name)
{
    return js_symbols_find_sized(name, NULL);
}

uintptr_t js_symbols_find_sized(const char *name, size_t *size)
{
    const char *colons = strstr(name, "::"), *last = name;
    for (const char *c = colons; c; c = strstr(c + 2, "::")) last = c + 2;
    uintptr_t addr = 0;
    pthread_mutex_lock(&Y.lock);
    if (!Y.objs) Y.objs = calloc(MAX_OBJECTS, sizeof *Y.objs);
    if (Y.objs) dl_iterate_phdr(add_object, NULL);
    for (int i = 0; Y.objs && i < Y.nobjs && !addr; i++) {
        object *o = &Y.objs[i];
        if (!o->loaded) load_symbols(o);
        for (size_t k = 0; k < o->tab.n && !addr; k++)
            if (same_function(o->tab.names + o->tab.syms[k].name, name, last)) {
                addr = o->tab.syms[k].addr;
                if (size) *size = o->tab.syms[k].size;
            }
    }
    pthread_mutex_unlock(&Y.lock);
    return addr;
}

void js_symbols_clear(void)
{
    pthread_mutex_lock(&Y.lock);
    for (int i = 0; i < Y.nobjs; i++) js_symtab_free(&Y.objs[i].tab);
    free(Y.objs);
    Y.objs = NULL;
    Y.nobjs = 0;
    js_symtab_free(&Y.kernel);
    Y.kernel_loaded = 0;
    pthread_mutex_unlock(&Y.lock);
}
