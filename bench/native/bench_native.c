/* bench_native.c — posenc's C kernels built natively (gcc -O3 -march=native, and SIMD through simd.h's native
 * mapping, -DPE_NATIVE_SIMD=1, as the wasm contender runs SIMD128), driven by bench/native.mjs.
 *
 * A separate process, as the benchmark asks, kept alive for the whole run so its samples interleave with the
 * wasm ones: the bench writes one command per line on stdin, this process sets the workload up once (cached
 * by its parameters), runs it `iters` times and answers with the seconds per iteration, measured here with
 * CLOCK_MONOTONIC. The work per iteration is the same as the wasm contender's (see bench/workloads.mjs):
 *
 *   rope B S H D pairing layout pos0 mode iters   q and k, positions pos0 .. pos0+S-1 (shared by the batch);
 *                                                 mode 0: one pe_rope_cos_sin table + pe_rope_apply_qk (what
 *                                                 rope.apply(q, { k }) does), mode 1: pe_rope_apply_qk only
 *   cossin N pos0 D iters                         pe_rope_cos_sin for N positions, D/2 frequencies
 *   sinus S DM iters                              pe_sinusoidal_table (S, DM)
 *   alibi H Q K causal iters                      pe_alibi_slopes + pe_alibi_bias
 *   attn B H Sq Sk D causal alibi rope iters      pe_attention, bhsd (alibi: standard slopes; rope: base 1e4)
 *   inplace N iters | copy N iters                x *= s over N floats | memcpy of N floats
 *   pagefault MiB                                 seconds per first touch of a fresh 4 KiB page (mmap'd anew)
 *   isa                                           the SIMD mapping compiled in (simd.h's PE_SIMD_ISA)
 *   clock cpu | clock wall                        time samples in process CPU time or CLOCK_MONOTONIC (default)
 *   quit
 */
#define _DEFAULT_SOURCE
#include "posenc.h"
#include "simd.h" /* PE_SIMD_ISA only: the kernels were built with the same flags as this file */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* "clock cpu": this process's CPU time (what bench/clock.mjs uses on a shared machine: other processes' load
   does not count), "clock wall": CLOCK_MONOTONIC (the default) */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void) {
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xmalloc(size_t n) {
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "bench_native: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

static void fill_random(float *x, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
    }
}

/* One cached workload: buffers and a closure-like run function. */
typedef struct work {
    char key[160];
    int kind;
    int a[10];
    float *x, *y, *z, *w, *cos, *sin, *scratch, *slopes;
    int32_t *pos;
    size_t n, nscratch;
    pe_rope rope;
    struct work *next;
} work;

static work *cache = NULL;

enum {
    K_ROPE,
    K_COSSIN,
    K_SINUS,
    K_ALIBI,
    K_ATTN,
    K_INPLACE,
    K_COPY
};

static void check(pe_status st, const char *what) {
    if (st != PE_OK) {
        fprintf(stderr, "bench_native: %s: %s\n", what, pe_status_string(st));
        exit(1);
    }
}

static void rope_init(pe_rope *r, int D, int pairing) {
    pe_rope_config cfg = {0};
    cfg.head_dim = D;
    cfg.pairing = pairing;
    check(pe_rope_init(r, &cfg), "pe_rope_init");
}

static work *setup(const char *key, int kind, const int *a, int na) {
    for (work *w = cache; w; w = w->next)
        if (strcmp(w->key, key) == 0) return w;
    work *w = calloc(1, sizeof *w);
    snprintf(w->key, sizeof w->key, "%s", key);
    w->kind = kind;
    memcpy(w->a, a, sizeof(int) * (size_t)na);
    switch (kind) {
    case K_ROPE: { /* B S H D pairing layout pos0 mode */
        int B = a[0], S = a[1], H = a[2], D = a[3];
        rope_init(&w->rope, D, a[4]);
        w->n = (size_t)B * S * H * D;
        w->x = xmalloc(w->n * 4);
        w->y = xmalloc(w->n * 4);
        fill_random(w->x, w->n, 1);
        fill_random(w->y, w->n, 2);
        w->pos = xmalloc((size_t)S * 4);
        for (int s = 0; s < S; s++) w->pos[s] = a[6] + s;
        w->cos = xmalloc((size_t)S * w->rope.n_freq * 4);
        w->sin = xmalloc((size_t)S * w->rope.n_freq * 4);
        check(pe_rope_cos_sin(w->cos, w->sin, &w->rope, w->pos, S, PE_SEQ_LEN_FROM_POSITIONS, 1.0), "cos_sin");
        break;
    }
    case K_COSSIN: { /* N pos0 D */
        rope_init(&w->rope, a[2], 0);
        w->pos = xmalloc((size_t)a[0] * 4);
        for (int s = 0; s < a[0]; s++) w->pos[s] = a[1] + s;
        w->cos = xmalloc((size_t)a[0] * w->rope.n_freq * 4);
        w->sin = xmalloc((size_t)a[0] * w->rope.n_freq * 4);
        break;
    }
    case K_SINUS: w->x = xmalloc((size_t)a[0] * a[1] * 4); break;
    case K_ALIBI:
        w->slopes = xmalloc((size_t)a[0] * 4);
        w->x = xmalloc((size_t)a[0] * a[1] * a[2] * 4);
        break;
    case K_ATTN: { /* B H Sq Sk D causal alibi rope */
        int B = a[0], H = a[1], Sq = a[2], Sk = a[3], D = a[4];
        size_t nq = (size_t)B * H * Sq * D, nk = (size_t)B * H * Sk * D;
        w->x = xmalloc(nq * 4);
        w->y = xmalloc(nk * 4);
        w->z = xmalloc(nk * 4);
        w->w = xmalloc(nq * 4);
        fill_random(w->x, nq, 3);
        fill_random(w->y, nk, 4);
        fill_random(w->z, nk, 5);
        w->slopes = xmalloc((size_t)H * 4);
        check(pe_alibi_slopes(w->slopes, H), "slopes");
        if (a[7]) rope_init(&w->rope, D, 0);
        pe_attention_config cfg = {0};
        cfg.batch = B, cfg.heads = H, cfg.q_len = Sq, cfg.k_len = Sk, cfg.head_dim = D;
        cfg.layout = PE_LAYOUT_BHSD, cfg.causal = a[5];
        cfg.alibi_slopes = a[6] ? w->slopes : NULL;
        cfg.rope = a[7] ? &w->rope : NULL;
        check(pe_attention_scratch_size(&w->nscratch, &cfg), "scratch size");
        w->scratch = w->nscratch ? xmalloc(w->nscratch * 4) : NULL;
        break;
    }
    case K_INPLACE:
    case K_COPY:
        w->n = (size_t)a[0];
        w->x = xmalloc(w->n * 4);
        w->y = xmalloc(w->n * 4);
        fill_random(w->x, w->n, 6);
        break;
    }
    w->next = cache;
    cache = w;
    return w;
}

static volatile float g_scale = 1.0f;

static void run_once(work *w) {
    const int *a = w->a;
    switch (w->kind) {
    case K_ROPE: {
        int B = a[0], S = a[1], H = a[2], layout = a[5];
        const pe_rope_apply_config ac = {.batch = B, .seq = S, .heads = H, .layout = layout};
        if (a[7] == 0)
            check(pe_rope_cos_sin(w->cos, w->sin, &w->rope, w->pos, S, PE_SEQ_LEN_FROM_POSITIONS, 1.0), "cos_sin");
        check(pe_rope_apply_qk(&w->rope, w->x, w->y, w->cos, w->sin, &ac, &ac), "apply_qk");
        break;
    }
    case K_COSSIN:
        check(pe_rope_cos_sin(w->cos, w->sin, &w->rope, w->pos, a[0], PE_SEQ_LEN_FROM_POSITIONS, 1.0), "cos_sin");
        break;
    case K_SINUS: check(pe_sinusoidal_table(w->x, a[0], a[1], NULL), "sinusoidal"); break;
    case K_ALIBI:
        check(pe_alibi_slopes(w->slopes, a[0]), "slopes");
        check(pe_alibi_bias(w->x, w->slopes, a[0], a[1], a[2], a[3]), "bias");
        break;
    case K_ATTN: {
        pe_attention_config cfg = {0};
        cfg.batch = a[0], cfg.heads = a[1], cfg.q_len = a[2], cfg.k_len = a[3], cfg.head_dim = a[4];
        cfg.layout = PE_LAYOUT_BHSD, cfg.causal = a[5];
        cfg.alibi_slopes = a[6] ? w->slopes : NULL;
        cfg.rope = a[7] ? &w->rope : NULL;
        check(pe_attention(w->w, NULL, w->x, w->y, w->z, w->scratch, w->nscratch, &cfg), "attention");
        break;
    }
    case K_INPLACE: {
        float s = g_scale;
        for (size_t i = 0; i < w->n; i++) w->x[i] *= s;
        break;
    }
    case K_COPY: memcpy(w->y, w->x, w->n * 4); break;
    }
}

int main(void) {
    char line[512];
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    while (fgets(line, sizeof line, stdin)) {
        char cmd[32];
        int v[11] = {0}, nv = 0, off = 0, len;
        if (sscanf(line, "%31s%n", cmd, &off) != 1) continue;
        if (strcmp(cmd, "quit") == 0) break;
        if (strcmp(cmd, "isa") == 0) {
            printf("%s\n", PE_SIMD_ISA);
            continue;
        }
        if (strcmp(cmd, "clock") == 0) {
            char which[8] = "";
            sscanf(line + off, "%7s", which);
            bench_clock = strcmp(which, "cpu") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
            printf("%s\n", bench_clock == CLOCK_MONOTONIC ? "wall" : "cpu");
            continue;
        }
        if (strcmp(cmd, "pagefault") == 0) {
            /* what this machine charges for first-touching memory: allocators that hand out fresh pages for
               every large buffer (per-call outputs) pay this per 4 KiB */
            int mib = 64;
            sscanf(line + off, "%d", &mib);
            size_t bytes = (size_t)mib << 20;
            char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) {
                printf("error mmap\n");
                continue;
            }
            double t0 = now();
            memset(p, 1, bytes);
            double t1 = now();
            memset(p, 2, bytes);
            double t2 = now();
            munmap(p, bytes);
            printf("%.9e\n", ((t1 - t0) - (t2 - t1)) / (double)(bytes / 4096));
            continue;
        }
        while (nv < 11 && sscanf(line + off, "%d%n", &v[nv], &len) == 1) {
            off += len;
            nv++;
        }
        int kind, nargs;
        if (!strcmp(cmd, "rope"))
            kind = K_ROPE, nargs = 8;
        else if (!strcmp(cmd, "cossin"))
            kind = K_COSSIN, nargs = 3;
        else if (!strcmp(cmd, "sinus"))
            kind = K_SINUS, nargs = 2;
        else if (!strcmp(cmd, "alibi"))
            kind = K_ALIBI, nargs = 4;
        else if (!strcmp(cmd, "attn"))
            kind = K_ATTN, nargs = 8;
        else if (!strcmp(cmd, "inplace"))
            kind = K_INPLACE, nargs = 1;
        else if (!strcmp(cmd, "copy"))
            kind = K_COPY, nargs = 1;
        else {
            printf("error unknown command %s\n", cmd);
            continue;
        }
        if (nv != nargs + 1) {
            printf("error %s takes %d arguments and iters\n", cmd, nargs);
            continue;
        }
        char key[160];
        int ko = snprintf(key, sizeof key, "%s", cmd);
        for (int i = 0; i < nargs; i++) ko += snprintf(key + ko, sizeof key - (size_t)ko, " %d", v[i]);
        work *w = setup(key, kind, v, nargs);
        int iters = v[nargs] < 1 ? 1 : v[nargs];
        double t0 = now();
        for (int i = 0; i < iters; i++) run_once(w);
        double t = (now() - t0) / iters;
        printf("%.9e\n", t);
    }
    return 0;
}
