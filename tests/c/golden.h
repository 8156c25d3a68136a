/* golden.h — a minimal reader for the golden JSON files (the .json files in tests/golden) in the native C tests.
 *
 * Not a general JSON parser: it finds the "cases" array, splits it into case objects by bracket matching
 * (skipping strings), and inside one case finds `"key":` and reads the value after it: a string, a number,
 * null, or an array of numbers of any nesting (flattened, row-major). That is all the golden schema needs.
 *
 * The directory comes from $POSENC_GOLDEN, else tests/golden relative to the working directory (the
 * repository root, where the test runner starts the binaries). */
#ifndef PE_GOLDEN_H
#define PE_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct golden_doc {
    char *text; /* whole file, NUL-terminated */
    size_t len;
    const char *cases_begin, *cases_end; /* inside the "cases" array's brackets */
} golden_doc;

typedef struct golden_case {
    const char *begin, *end; /* the case object, '{' .. '}' inclusive */
} golden_case;

/* Past the end of a JSON string that starts at s (s points at the opening quote). */
static inline const char *golden__skip_string(const char *s, const char *end) {
    for (s++; s < end && *s != '"'; s++)
        if (*s == '\\' && s + 1 < end) s++;
    return s < end ? s + 1 : end;
}

/* Given s at '[' or '{', the position just past its matching close bracket (or end). */
static inline const char *golden__match(const char *s, const char *end) {
    int depth = 0;
    while (s < end) {
        char c = *s;
        if (c == '"') {
            s = golden__skip_string(s, end);
            continue;
        }
        if (c == '[' || c == '{') depth++;
        if (c == ']' || c == '}') {
            if (--depth == 0) return s + 1;
        }
        s++;
    }
    return end;
}

static inline const char *golden__ws(const char *s, const char *end) {
    while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) s++;
    return s;
}

/* Position of the value after `"key":` inside [begin, end), or NULL. Matches the key at any depth, first hit
 * (only as a key: the quoted name must be followed by ':'). */
static inline const char *golden__find_key(const char *begin, const char *end, const char *key) {
    size_t klen = strlen(key);
    const char *s = begin;
    while (s < end) {
        if (*s == '"') {
            const char *close = golden__skip_string(s, end);
            if ((size_t)(close - s) == klen + 2 && memcmp(s + 1, key, klen) == 0) {
                const char *c = golden__ws(close, end);
                if (c < end && *c == ':') return golden__ws(c + 1, end);
            }
            s = close;
            continue;
        }
        s++;
    }
    return NULL;
}

static inline const char *golden_dir(void) {
    const char *d = getenv("POSENC_GOLDEN");
    return d && *d ? d : "tests/golden";
}

/* Loads dir/name. Returns 0 on success; prints why and returns -1 otherwise. */
static inline int golden_load(golden_doc *doc, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", golden_dir(), name);
    memset(doc, 0, sizeof *doc);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "golden: cannot open %s (set POSENC_GOLDEN)\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0) {
        fclose(f);
        return -1;
    }
    doc->text = (char *)malloc((size_t)n + 1);
    if (!doc->text) {
        fclose(f);
        return -1;
    }
    doc->len = fread(doc->text, 1, (size_t)n, f);
    doc->text[doc->len] = 0;
    fclose(f);
    const char *end = doc->text + doc->len;
    const char *v = golden__find_key(doc->text, end, "cases");
    if (!v || *v != '[') {
        fprintf(stderr, "golden: %s has no cases array\n", path);
        free(doc->text);
        doc->text = NULL;
        return -1;
    }
    doc->cases_begin = v + 1;
    doc->cases_end = golden__match(v, end) - 1;
    return 0;
}

static inline void golden_free(golden_doc *doc) {
    free(doc->text);
    doc->text = NULL;
}

/* Iterates the cases: start with c->begin = NULL; returns 0 when there are no more. */
static inline int golden_next_case(const golden_doc *doc, golden_case *c) {
    const char *s = c->begin ? c->end : doc->cases_begin;
    while (s < doc->cases_end && *s != '{') s++;
    if (s >= doc->cases_end) return 0;
    c->begin = s;
    c->end = golden__match(s, doc->cases_end + 1);
    return 1;
}

/* Copies a string value into buf (empty string when missing or not a string). Returns 1 if found. */
static inline int golden_string(const golden_case *c, const char *key, char *buf, size_t n) {
    const char *v = golden__find_key(c->begin, c->end, key);
    buf[0] = 0;
    if (!v || *v != '"') return 0;
    const char *close = golden__skip_string(v, c->end);
    size_t len = (size_t)(close - v) - 2;
    if (len >= n) len = n - 1;
    memcpy(buf, v + 1, len);
    buf[len] = 0;
    return 1;
}

/* Is the value of key JSON null (or missing)? */
static inline int golden_is_null(const golden_case *c, const char *key) {
    const char *v = golden__find_key(c->begin, c->end, key);
    return !v || strncmp(v, "null", 4) == 0;
}

/* A single number; returns fallback when missing or not a number. */
static inline double golden_number(const golden_case *c, const char *key, double fallback) {
    const char *v = golden__find_key(c->begin, c->end, key);
    if (!v) return fallback;
    char *e;
    double x = strtod(v, &e);
    return e == v ? fallback : x;
}

/* Every number inside the (possibly nested) array value of key, flattened. Returns a malloc'd array and its
 * count in *n, or NULL (and *n = 0) when the key is missing or not an array. */
static inline double *golden_array(const golden_case *c, const char *key, size_t *n) {
    *n = 0;
    const char *v = golden__find_key(c->begin, c->end, key);
    if (!v || *v != '[') return NULL;
    const char *end = golden__match(v, c->end);
    size_t cap = 16, count = 0;
    double *out = (double *)malloc(cap * sizeof(double));
    if (!out) return NULL;
    for (const char *s = v; s < end;) {
        if ((*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.') {
            char *e;
            double x = strtod(s, &e);
            if (e == s) {
                s++;
                continue;
            }
            if (count == cap) {
                cap *= 2;
                double *grown = (double *)realloc(out, cap * sizeof(double));
                if (!grown) {
                    free(out);
                    return NULL;
                }
                out = grown;
            }
            out[count++] = x;
            s = e;
        } else {
            s++;
        }
    }
    *n = count;
    return out;
}

#endif
