/* Allocation counter for the A2A benchmark's server rows (bench/a2a/a2a_counts.py).
 *
 * Loaded with LD_PRELOAD into a server process; it replaces the C allocator's entry points
 * (malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc),
 * counts each call and passes it on to glibc's own allocator (__libc_malloc and siblings,
 * so no dlsym bootstrap is needed). Rust's System allocator, which every Rust row uses,
 * allocates through these functions; so does CPython's for objects pymalloc does not serve
 * (run Python with PYTHONMALLOC=malloc to send every object through them).
 *
 * The counts live in a shared file, BENCH_ALLOC_COUNTS's value followed by `.` and the process id
 * (created if missing; one file per process, so that replicas started with the same environment
 * keep apart), eight little-endian u64 slots updated with relaxed atomic adds:
 *   0 malloc calls, 1 calloc calls, 2 realloc calls, 3 aligned calls (posix_memalign,
 *   aligned_alloc, memalign, valloc, pvalloc), 4 free calls of non-null pointers,
 *   5 bytes requested by the allocating calls (realloc: its new size), 6 realloc(NULL, n)
 *   calls (also counted in slot 2), 7 a magic value (0xA110C0DE) once the file is mapped.
 * The reader (the benchmark runner) takes the difference of two snapshots around a window.
 * Calls made before the constructor has mapped the file (the dynamic loader's own, and
 * C++/Rust static initialisers that run first) are not counted; they are start-up, never
 * in a window. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

enum { MALLOC, CALLOC, REALLOC, ALIGNED, FREE, BYTES, REALLOC_NULL, MAGIC, SLOTS };

static uint64_t *counts;

static inline void add(int slot, uint64_t n) {
    uint64_t *c = counts;
    if (c != NULL) __atomic_fetch_add(&c[slot], n, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void map_counts(void) {
    const char *base = getenv("BENCH_ALLOC_COUNTS");
    if (base == NULL || *base == '\0') return;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s.%ld", base, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof path) return;
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, SLOTS * sizeof(uint64_t)) != 0) {
        close(fd);
        return;
    }
    void *m = mmap(NULL, SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    uint64_t *c = m;
    __atomic_store_n(&c[MAGIC], 0xA110C0DEu, __ATOMIC_RELAXED);
    __atomic_store_n(&counts, c, __ATOMIC_RELEASE);
}

void *malloc(size_t n) {
    add(MALLOC, 1);
    add(BYTES, n);
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n) {
    add(CALLOC, 1);
    add(BYTES, (uint64_t)k * n);
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n) {
    add(REALLOC, 1);
    add(BYTES, n);
    if (p == NULL) add(REALLOC_NULL, 1);
    return __libc_realloc(p, n);
}

void free(void *p) {
    if (p != NULL) add(FREE, 1);
    __libc_free(p);
}

static void *aligned(size_t align, size_t n) {
    add(ALIGNED, 1);
    add(BYTES, n);
    return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1)) != 0) return EINVAL;
    void *p = aligned(align, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n) { return aligned(align, n); }
void *memalign(size_t align, size_t n) { return aligned(align, n); }
void *valloc(size_t n) { return aligned((size_t)sysconf(_SC_PAGESIZE), n); }
void *pvalloc(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return aligned(page, (n + page - 1) & ~(page - 1));
}
