/* pe_strict.h — the strict-mode check for tests and fuzzers (not compiled into the library).
 *
 * posenc promises that a call it accepts (PE_OK) on finite inputs yields finite outputs: configurations
 * that would not are refused up front (PE_MAX_FREQUENCY, PE_ROPE_MAX_SCALE, PE_ERR_ATTENTION_FACTOR, see
 * posenc.h). pe__strict_check(status, out, n, allow, what) enforces that promise on one output array: if
 * status is PE_OK and out[0..n) holds a value the promise excludes, it prints what and the first offender
 * and aborts, which libFuzzer reports as a crash with the input that caused it. cos/sin tables also promise
 * |v| <= |scale| (give the bound; 0 means none).
 */
#ifndef PE_STRICT_H
#define PE_STRICT_H

#include "posenc.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

enum {
    PE__STRICT_FINITE = 0,       /* every value finite */
    PE__STRICT_ALLOW_NEG_INF = 1 /* -inf allowed (pe_alibi_bias's causal mask), NaN and +inf not */
};

/* Index of the first value of x[0..n) that the rule excludes (or whose magnitude exceeds bound > 0), or n. */
static inline size_t pe__strict_first_bad(const float *x, size_t n, int allow, double bound) {
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        if (allow == PE__STRICT_ALLOW_NEG_INF && v == -INFINITY) continue;
        if (!isfinite(v) || (bound > 0.0 && fabs((double)v) > bound)) return i;
    }
    return n;
}

static inline void pe__strict_check(pe_status status, const float *x, size_t n, int allow, double bound,
                                    const char *what) {
    if (status != PE_OK || !x) return;
    const size_t i = pe__strict_first_bad(x, n, allow, bound);
    if (i == n) return;
    fprintf(stderr, "posenc strict: %s accepted the input but element %zu of %zu is %.9g (bound %.9g)\n", what, i, n,
            (double)x[i], bound);
    abort();
}

#endif /* PE_STRICT_H */
