/* codecache.c - see codecache.h.
 *
 * HotSpot keeps compiled code in one or more CodeHeaps. Each heap is cut into segments of
 * 2^log2_segment_size bytes; a byte map (the segment map) holds, for every segment, how many
 * segments to step back towards the start of its block (0 = this segment starts a block,
 * 0xFF = unused). A block starts with a HeapBlock header (whose _used flag tells a live blob
 * from a free block) and the CodeBlob follows it.
 */
#include "sample/codecache.h"

#include <link.h>
#include <string.h>

#include "sample/vmlayout.h"

/* Where libjvm's image is mapped: blob names are string constants in it (set once at init). */
static uintptr_t names_lo, names_hi;

#define MAX_HEAPS 8
#define MAX_HOPS 4096          /* segment-map steps back to a block start */
#define MAX_BLOB (64u << 20)   /* no code blob is larger */
#define NAME_MAX_LEN 32

static uintptr_t word_at(uintptr_t a)
{
    return *(const volatile uintptr_t *)a;
}

static int int_at(uintptr_t a)
{
    return *(const volatile int *)a;
}

int js_codecache_contains(uintptr_t pc)
{
    if (!js_vm.ok) return 0;
    return pc >= word_at(js_vm.low_bound_addr) && pc < word_at(js_vm.high_bound_addr);
}

/* The block start for pc in one heap, via the segment map; 0 if pc is not in a live block. *heap_hi gets
 * the end of the heap's committed memory (a blob's fields are never read past it). */
static uintptr_t block_in_heap(uintptr_t heap, uintptr_t pc, uintptr_t *heap_hi)
{
    uintptr_t lo = word_at(heap + (uintptr_t)js_vm.heap_memory + (uintptr_t)js_vm.vs_low);
    uintptr_t hi = word_at(heap + (uintptr_t)js_vm.heap_memory + (uintptr_t)js_vm.vs_high);
    if (pc < lo || pc >= hi) return 0;
    *heap_hi = hi;
    uintptr_t map_lo = word_at(heap + (uintptr_t)js_vm.heap_segmap + (uintptr_t)js_vm.vs_low);
    uintptr_t map_hi = word_at(heap + (uintptr_t)js_vm.heap_segmap + (uintptr_t)js_vm.vs_high);
    int shift = int_at(heap + (uintptr_t)js_vm.heap_log2_seg);
    if (shift < 4 || shift > 16 || map_hi <= map_lo) return 0;
    uintptr_t seg = (pc - lo) >> shift;
    if (seg >= map_hi - map_lo) return 0;
    const volatile uint8_t *map = (const volatile uint8_t *)map_lo;
    if (map[seg] == 0xFF) return 0;
    for (int hops = 0; map[seg] > 0; hops++) {
        uint8_t step = map[seg];
        if (hops >= MAX_HOPS || step == 0xFF || step > seg) return 0;
        seg -= step;
    }
    uintptr_t block = lo + (seg << shift);
    if (!*(const volatile uint8_t *)(block + (uintptr_t)js_vm.hb_used)) return 0; /* a free block */
    return block;
}

/* The blob's name if it is a string constant in libjvm (all nmethod and interpreter names are);
 * NULL for a name built at run time (some runtime stubs), which is then not read at all. */
static const char *blob_name(uintptr_t blob)
{
    uintptr_t p = word_at(blob + (uintptr_t)js_vm.cb_name);
    if (p < names_lo || p + NAME_MAX_LEN > names_hi) return NULL;
    const char *s = (const char *)p;
    for (int i = 0; i < NAME_MAX_LEN; i++)
        if (!s[i]) return s;
    return NULL;
}

/* Read and check the fields of the blob at start (its header lies below hi); JS_CC_FOUND or JS_CC_BAD. */
static int read_blob(uintptr_t start, uintptr_t hi, uintptr_t pc, js_blob *b)
{
    int size = int_at(start + (uintptr_t)js_vm.cb_size);
    if (size <= 0 || (unsigned)size > MAX_BLOB || pc >= start + (unsigned)size || start + (unsigned)size > hi)
        return JS_CC_BAD;
    b->start = start;
    b->end = start + (unsigned)size;
    if (js_vm.cb_code_begin >= 0) {
        b->code_begin = word_at(start + (uintptr_t)js_vm.cb_code_begin);
        b->code_end = word_at(start + (uintptr_t)js_vm.cb_code_end);
    } else {
        b->code_begin = start + (unsigned)int_at(start + (uintptr_t)js_vm.cb_code_offset);
        b->code_end = start + (unsigned)int_at(start + (uintptr_t)js_vm.cb_data_offset);
    }
    if (b->code_begin < start || b->code_end > b->end || b->code_begin > b->code_end) return JS_CC_BAD;
    b->frame_size = int_at(start + (uintptr_t)js_vm.cb_frame_size);
    b->frame_complete = js_vm.cb_frame_complete_bytes == 2
                            ? *(const volatile int16_t *)(start + (uintptr_t)js_vm.cb_frame_complete)
                            : int_at(start + (uintptr_t)js_vm.cb_frame_complete);
    b->name = blob_name(start);
    b->method = 0;
    if (!b->name) {
        b->kind = JS_BLOB_STUB;
    } else if (!strcmp(b->name, "nmethod") || !strcmp(b->name, "native nmethod")) {
        b->kind = JS_BLOB_NMETHOD;
        b->method = word_at(start + (uintptr_t)js_vm.nm_method);
    } else if (!strcmp(b->name, "Interpreter")) {
        b->kind = JS_BLOB_INTERPRETER;
    } else {
        b->kind = JS_BLOB_STUB;
    }
    return JS_CC_FOUND;
}

int js_codecache_find(uintptr_t pc, js_blob *b)
{
    if (!js_codecache_contains(pc)) return JS_CC_OUTSIDE;
    uintptr_t heaps = word_at(js_vm.heaps_addr);
    if (!heaps) return JS_CC_BAD;
    int n = int_at(heaps + (uintptr_t)js_vm.ga_len);
    uintptr_t data = word_at(heaps + (uintptr_t)js_vm.ga_data);
    if (n <= 0 || n > MAX_HEAPS || !data) return JS_CC_BAD;
    for (int i = 0; i < n; i++) {
        uintptr_t heap = word_at(data + (uintptr_t)i * sizeof(uintptr_t));
        uintptr_t hi = 0, block = heap ? block_in_heap(heap, pc, &hi) : 0;
        if (block) return read_blob(block + (uintptr_t)js_vm.hb_size, hi, pc, b);
    }
    return JS_CC_OUTSIDE;
}

void js_codecache_set_names_range(uintptr_t lo, uintptr_t hi)
{
    names_lo = lo;
    names_hi = hi;
}

/* dl_iterate_phdr callback: record the extent of libjvm's loaded segments. */
static int find_jvm(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (!slash || strcmp(slash + 1, "libjvm.so") != 0) return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    if (hi > lo) js_codecache_set_names_range(lo, hi);
    return 1;
}

int js_codecache_init(void)
{
    if (names_hi) return 0;
    dl_iterate_phdr(find_jvm, NULL);
    return names_hi ? 0 : -1;
}
