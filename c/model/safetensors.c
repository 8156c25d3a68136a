/* safetensors.c — the tiny model's file reader: a safetensors file (huggingface/safetensors) whose
 * __metadata__ holds the architecture, checked against it tensor by tensor (pe_model_open) and copied into the
 * caller's weights (pe_model_load). Shared by both wasm model builds and the native tools; model.c has the
 * forward. No allocation and no state outside the caller's pe_model: the parsed header (~13 KiB) lives on the
 * stack of each call.
 */
#include "posenc.h"
#include "model_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the safetensors loader assumes a little-endian host (x86, arm64, wasm)"
#endif

/* Format (huggingface/safetensors): 8 bytes little-endian u64 N, then N bytes of UTF-8 JSON (may end with
 * spaces), then the data. The JSON is an object: "__metadata__" (optional; string -> string) and, per tensor,
 * {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} with offsets relative to the data section.
 * The spec requires the tensors to cover the data section without holes or overlaps; we check that too.
 * The parser below reads exactly that grammar (any JSON value is accepted and skipped nowhere: an unknown key
 * inside a tensor entry is an error), bounded at every step by the header's end. */

#define PE__ST_MAX_ENTRIES (PE__MAX_TENSORS + 4)
#define PE__ST_MAX_META 32
#define PE__ST_KEY 64
#define PE__ST_VAL 64
#define PE__ST_MAX_HEADER (16u << 20)

typedef struct pe__st_entry {
    char name[PE__ST_KEY];
    char dtype[16];
    int32_t ndim;
    uint64_t shape[4];
    uint64_t begin, end;
} pe__st_entry;

typedef struct pe__st {
    pe__st_entry t[PE__ST_MAX_ENTRIES];
    int n;
    char meta_key[PE__ST_MAX_META][PE__ST_KEY];
    char meta_val[PE__ST_MAX_META][PE__ST_VAL];
    int n_meta;
    uint64_t data_start, data_size;
} pe__st;

typedef struct pe__json {
    const uint8_t *p, *end;
    pe__msg *e;
} pe__json;

/* "safetensors: tensor '<name>'<text>", the start of every message about one tensor. */
static void pe__st_tensor_msg(pe__msg *e, const char *name, const char *text) {
    pe__msg_s(e, "safetensors: tensor '");
    pe__msg_s(e, name);
    pe__msg_s(e, text);
}

static void pe__json_ws(pe__json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int pe__json_fail(pe__json *j, const char *what) {
    pe__msg_s(j->e, "safetensors: malformed JSON header: ");
    pe__msg_s(j->e, what);
    return 0;
}

static int pe__json_char(pe__json *j, char c) {
    pe__json_ws(j);
    if (j->p < j->end && *j->p == (uint8_t)c) {
        j->p++;
        return 1;
    }
    return 0;
}

/* A JSON string into out (truncation is an error: every string we keep is short). */
static int pe__json_string(pe__json *j, char *out, size_t cap) {
    pe__json_ws(j);
    if (j->p >= j->end || *j->p != '"') return pe__json_fail(j, "expected a string");
    j->p++;
    size_t n = 0;
    while (1) {
        if (j->p >= j->end) return pe__json_fail(j, "unterminated string");
        uint8_t ch = *j->p++;
        if (ch == '"') break;
        if (ch < 0x20) return pe__json_fail(j, "control character in a string");
        if (ch == '\\') {
            if (j->p >= j->end) return pe__json_fail(j, "unterminated escape");
            uint8_t esc = *j->p++;
            switch (esc) {
            case '"':
            case '\\':
            case '/': ch = esc; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                if (j->end - j->p < 4) return pe__json_fail(j, "short \\u escape");
                unsigned cp = 0;
                for (int k = 0; k < 4; k++) {
                    uint8_t h = *j->p++;
                    cp <<= 4;
                    if (h >= '0' && h <= '9')
                        cp |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f')
                        cp |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F')
                        cp |= (unsigned)(h - 'A' + 10);
                    else
                        return pe__json_fail(j, "bad \\u escape");
                }
                /* keep code points below 0x80 as they are; others become '?' (no name we read uses them) */
                ch = cp < 0x80 ? (uint8_t)cp : (uint8_t)'?';
                break;
            }
            default: return pe__json_fail(j, "bad escape");
            }
        }
        if (n + 1 >= cap) {
            pe__json_fail(j, "a string longer than ");
            pe__msg_u(j->e, cap - 1);
            pe__msg_s(j->e, " bytes");
            return 0;
        }
        out[n++] = (char)ch;
    }
    out[n] = 0;
    return 1;
}

static int pe__json_u64(pe__json *j, uint64_t *out) {
    pe__json_ws(j);
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return pe__json_fail(j, "expected a non-negative integer");
    uint64_t v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        uint64_t d = (uint64_t)(*j->p++ - '0');
        if (v > (UINT64_MAX - d) / 10) return pe__json_fail(j, "integer overflow");
        v = v * 10 + d;
    }
    if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) return pe__json_fail(j, "expected an integer");
    *out = v;
    return 1;
}

static int pe__json_u64_array(pe__json *j, uint64_t *out, int32_t cap, int32_t *n) {
    if (!pe__json_char(j, '[')) return pe__json_fail(j, "expected '['");
    *n = 0;
    if (pe__json_char(j, ']')) return 1;
    do {
        uint64_t v = 0;
        if (!pe__json_u64(j, &v)) return 0;
        if (*n >= cap) {
            pe__json_fail(j, "an array longer than ");
            pe__msg_i(j->e, cap);
            return 0;
        }
        out[(*n)++] = v;
    } while (pe__json_char(j, ','));
    if (!pe__json_char(j, ']')) return pe__json_fail(j, "expected ']'");
    return 1;
}

static int pe__st_entry_parse(pe__json *j, pe__st_entry *t) {
    int have_dtype = 0, have_shape = 0, have_off = 0;
    if (!pe__json_char(j, '{')) return pe__json_fail(j, "a tensor entry must be an object");
    if (!pe__json_char(j, '}')) {
        do {
            char key[32];
            if (!pe__json_string(j, key, sizeof key)) return 0;
            if (!pe__json_char(j, ':')) return pe__json_fail(j, "expected ':'");
            if (strcmp(key, "dtype") == 0) {
                if (!pe__json_string(j, t->dtype, sizeof t->dtype)) return 0;
                have_dtype = 1;
            } else if (strcmp(key, "shape") == 0) {
                if (!pe__json_u64_array(j, t->shape, 4, &t->ndim)) return 0;
                have_shape = 1;
            } else if (strcmp(key, "data_offsets") == 0) {
                uint64_t o[2];
                int32_t n;
                if (!pe__json_u64_array(j, o, 2, &n)) return 0;
                if (n != 2) return pe__json_fail(j, "data_offsets must be [begin, end]");
                t->begin = o[0];
                t->end = o[1];
                have_off = 1;
            } else {
                pe__st_tensor_msg(j->e, t->name, "': unknown key '");
                pe__msg_s(j->e, key);
                pe__msg_s(j->e, "'");
                return 0;
            }
        } while (pe__json_char(j, ','));
        if (!pe__json_char(j, '}')) return pe__json_fail(j, "expected '}' after a tensor entry");
    }
    if (!have_dtype || !have_shape || !have_off) {
        pe__st_tensor_msg(j->e, t->name, "' lacks ");
        pe__msg_s(j->e, !have_dtype ? "dtype" : !have_shape ? "shape" : "data_offsets");
        return 0;
    }
    return 1;
}

/* Parses the header and checks the offsets against the data section. Status + message on failure. */
static pe_status pe__st_parse(pe__st *st, const uint8_t *file, size_t size, pe__msg *e) {
    memset(st, 0, sizeof *st);
    if (size < 8) {
        pe__msg_s(e, "safetensors: file too short (");
        pe__msg_u(e, size);
        pe__msg_s(e, " bytes) for the 8-byte header length");
        return PE_ERR_FIELD_VALUE;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | file[i];
    if (hlen > size - 8) {
        pe__msg_s(e, "safetensors: header length ");
        pe__msg_u(e, hlen);
        pe__msg_s(e, " runs past the end of the file (");
        pe__msg_u(e, size);
        pe__msg_s(e, " bytes): truncated or not a safetensors file");
        return PE_ERR_FIELD_VALUE;
    }
    if (hlen < 2 || hlen > PE__ST_MAX_HEADER) {
        pe__msg_s(e, "safetensors: implausible header length ");
        pe__msg_u(e, hlen);
        pe__msg_s(e, " (2 to ");
        pe__msg_u(e, PE__ST_MAX_HEADER);
        pe__msg_s(e, " bytes)");
        return PE_ERR_FIELD_VALUE;
    }
    st->data_start = 8 + hlen;
    st->data_size = size - 8 - hlen;
    pe__json j = {file + 8, file + 8 + hlen, e};
    if (!pe__json_char(&j, '{')) {
        pe__json_fail(&j, "the header must start with '{'");
        return PE_ERR_FIELD_VALUE;
    }
    if (!pe__json_char(&j, '}')) {
        do {
            char key[PE__ST_KEY];
            if (!pe__json_string(&j, key, sizeof key)) return PE_ERR_FIELD_VALUE;
            if (!pe__json_char(&j, ':')) {
                pe__json_fail(&j, "expected ':'");
                return PE_ERR_FIELD_VALUE;
            }
            if (strcmp(key, "__metadata__") == 0) {
                if (!pe__json_char(&j, '{')) {
                    pe__json_fail(&j, "__metadata__ must be an object");
                    return PE_ERR_FIELD_VALUE;
                }
                if (!pe__json_char(&j, '}')) {
                    do {
                        if (st->n_meta >= PE__ST_MAX_META) {
                            pe__json_fail(&j, "more __metadata__ entries than ");
                            pe__msg_i(e, PE__ST_MAX_META);
                            return PE_ERR_FIELD_VALUE;
                        }
                        if (!pe__json_string(&j, st->meta_key[st->n_meta], PE__ST_KEY)) return PE_ERR_FIELD_VALUE;
                        if (!pe__json_char(&j, ':')) {
                            pe__json_fail(&j, "expected ':'");
                            return PE_ERR_FIELD_VALUE;
                        }
                        if (!pe__json_string(&j, st->meta_val[st->n_meta], PE__ST_VAL)) return PE_ERR_FIELD_VALUE;
                        st->n_meta++;
                    } while (pe__json_char(&j, ','));
                    if (!pe__json_char(&j, '}')) {
                        pe__json_fail(&j, "expected '}' after __metadata__");
                        return PE_ERR_FIELD_VALUE;
                    }
                }
                continue;
            }
            if (st->n >= PE__ST_MAX_ENTRIES) {
                pe__json_fail(&j, "more tensors than ");
                pe__msg_i(e, PE__ST_MAX_ENTRIES);
                return PE_ERR_FIELD_VALUE;
            }
            pe__st_entry *t = &st->t[st->n++];
            strcpy(t->name, key);
            for (int i = 0; i < st->n - 1; i++) {
                if (strcmp(st->t[i].name, key) == 0) {
                    pe__st_tensor_msg(e, key, "' appears twice");
                    return PE_ERR_FIELD_VALUE;
                }
            }
            if (!pe__st_entry_parse(&j, t)) return PE_ERR_FIELD_VALUE;
        } while (pe__json_char(&j, ','));
        if (!pe__json_char(&j, '}')) {
            pe__json_fail(&j, "expected ',' or '}'");
            return PE_ERR_FIELD_VALUE;
        }
    }
    pe__json_ws(&j); /* the spec allows trailing spaces as padding */
    if (j.p != j.end) {
        pe__json_fail(&j, "unexpected bytes after the JSON object");
        return PE_ERR_FIELD_VALUE;
    }
    /* offsets: in bounds, sizes consistent with dtype and shape, no overlaps, no holes */
    uint64_t total = 0;
    for (int i = 0; i < st->n; i++) {
        pe__st_entry *t = &st->t[i];
        if (t->begin > t->end || t->end > st->data_size) {
            pe__st_tensor_msg(e, t->name, "': data_offsets [");
            pe__msg_u(e, t->begin);
            pe__msg_s(e, ", ");
            pe__msg_u(e, t->end);
            pe__msg_s(e, "] outside the data section of ");
            pe__msg_u(e, st->data_size);
            pe__msg_s(e, " bytes (truncated file?)");
            return PE_ERR_FIELD_VALUE;
        }
        total += t->end - t->begin;
        for (int k = 0; k < i; k++) {
            const pe__st_entry *u = &st->t[k];
            if (t->begin < u->end && u->begin < t->end) {
                pe__msg_s(e, "safetensors: tensors '");
                pe__msg_s(e, u->name);
                pe__msg_s(e, "' and '");
                pe__msg_s(e, t->name);
                pe__msg_s(e, "' overlap");
                return PE_ERR_FIELD_VALUE;
            }
        }
    }
    if (total != st->data_size) {
        pe__msg_s(e, "safetensors: the tensors cover ");
        pe__msg_u(e, total);
        pe__msg_s(e, " of the ");
        pe__msg_u(e, st->data_size);
        pe__msg_s(e, " data bytes (holes or trailing bytes)");
        return PE_ERR_FIELD_VALUE;
    }
    return PE_OK;
}

static const char *pe__st_meta(const pe__st *st, const char *key) {
    for (int i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta_key[i], key) == 0) return st->meta_val[i];
    return NULL;
}

/* A metadata number: the whole string must parse. */
static int pe__meta_number(const pe__st *st, const char *key, double *out, pe__msg *e, pe_status *status) {
    const char *v = pe__st_meta(st, key);
    if (!v) {
        pe__msg_s(e, "safetensors: __metadata__ lacks '");
        pe__msg_s(e, key);
        pe__msg_s(e, "' (not a posenc model file?)");
        *status = PE_ERR_MISSING_FIELD;
        return 0;
    }
    char *endp = NULL;
    double d = strtod(v, &endp);
    if (endp == v || *endp != 0 || !isfinite(d)) {
        pe__msg_s(e, "safetensors: __metadata__ '");
        pe__msg_s(e, key);
        pe__msg_s(e, "' = '");
        pe__msg_s(e, v);
        pe__msg_s(e, "' is not a number");
        *status = PE_ERR_FIELD_VALUE;
        return 0;
    }
    *out = d;
    return 1;
}

static int pe__meta_int(const pe__st *st, const char *key, int32_t *out, pe__msg *e, pe_status *status) {
    double d;
    if (!pe__meta_number(st, key, &d, e, status)) return 0;
    if (d != floor(d) || d < -2147483648.0 || d > 2147483647.0) {
        pe__msg_s(e, "safetensors: __metadata__ '");
        pe__msg_s(e, key);
        pe__msg_s(e, "' is not an integer");
        *status = PE_ERR_FIELD_VALUE;
        return 0;
    }
    *out = (int32_t)d;
    return 1;
}

/* The config from __metadata__, and the tensor table checked against the file. */
static pe_status pe__st_check(pe_model_config *cfg, pe__tensor_info *t, int *nt, int *file_index, const pe__st *st,
                              pe__msg *e) {
    pe_status status = PE_OK;
    pe_model_config c;
    memset(&c, 0, sizeof c);
    const char *pos = pe__st_meta(st, "position_encoding");
    if (!pos) {
        pe__msg_s(e, "safetensors: __metadata__ lacks 'position_encoding' (not a posenc model file?)");
        return PE_ERR_MISSING_FIELD;
    }
    c.position_encoding = pe__position_from_name(pos);
    if (c.position_encoding < 0) {
        pe__msg_s(e, "safetensors: unknown position_encoding '");
        pe__msg_s(e, pos);
        pe__msg_s(e, "' (none, sinusoidal, learned, rope, alibi)");
        return PE_ERR_FIELD_VALUE;
    }
    if (!pe__meta_int(st, "vocab_size", &c.vocab_size, e, &status) ||
        !pe__meta_int(st, "hidden_size", &c.hidden_size, e, &status) ||
        !pe__meta_int(st, "num_hidden_layers", &c.num_hidden_layers, e, &status) ||
        !pe__meta_int(st, "num_attention_heads", &c.num_attention_heads, e, &status) ||
        !pe__meta_int(st, "intermediate_size", &c.intermediate_size, e, &status) ||
        !pe__meta_int(st, "max_position_embeddings", &c.max_position_embeddings, e, &status) ||
        !pe__meta_number(st, "rope_theta", &c.rope_theta, e, &status) ||
        !pe__meta_number(st, "rms_norm_eps", &c.rms_norm_eps, e, &status) ||
        !pe__meta_number(st, "embedding_multiplier", &c.embedding_multiplier, e, &status))
        return status;
    const char *act = pe__st_meta(st, "hidden_act");
    if (act && strcmp(act, "gelu_pytorch_tanh") != 0) {
        pe__msg_s(e, "safetensors: hidden_act '");
        pe__msg_s(e, act);
        pe__msg_s(e, "' is not supported (gelu_pytorch_tanh)");
        return PE_ERR_FIELD_VALUE;
    }
    status = pe__model_resolve(cfg, &c, e->p);
    if (status != PE_OK) {
        e->n = strlen(e->p);
        return status;
    }
    *nt = pe__model_tensors(t, cfg);
    for (int i = 0; i < st->n; i++) {
        int k = 0;
        while (k < *nt && strcmp(t[k].name, st->t[i].name) != 0) k++;
        if (k == *nt) {
            pe__msg_s(e, "safetensors: unexpected tensor '");
            pe__msg_s(e, st->t[i].name);
            pe__msg_s(e, "' for this architecture");
            return PE_ERR_SHAPE;
        }
    }
    for (int k = 0; k < *nt; k++) {
        int i = 0;
        while (i < st->n && strcmp(t[k].name, st->t[i].name) != 0) i++;
        if (i == st->n) {
            pe__msg_s(e, "safetensors: missing tensor '");
            pe__msg_s(e, t[k].name);
            pe__msg_s(e, "'");
            return PE_ERR_MISSING_FIELD;
        }
        const pe__st_entry *f = &st->t[i];
        if (strcmp(f->dtype, "F32") != 0) {
            pe__st_tensor_msg(e, f->name, "': dtype ");
            pe__msg_s(e, f->dtype);
            pe__msg_s(e, ", only F32 is supported");
            return PE_ERR_FIELD_VALUE;
        }
        int ok = f->ndim == t[k].ndim;
        for (int d = 0; ok && d < t[k].ndim; d++) ok = f->shape[d] == (uint64_t)t[k].shape[d];
        if (!ok) {
            pe__st_tensor_msg(e, f->name, "': shape [");
            for (int d = 0; d < f->ndim; d++) {
                if (d) pe__msg_s(e, ", ");
                pe__msg_u(e, f->shape[d]);
            }
            pe__msg_s(e, "], expected [");
            for (int d = 0; d < t[k].ndim; d++) {
                if (d) pe__msg_s(e, ", ");
                pe__msg_i(e, t[k].shape[d]);
            }
            pe__msg_s(e, "]");
            return PE_ERR_SHAPE;
        }
        if (f->end - f->begin != (uint64_t)t[k].numel * 4u) {
            pe__st_tensor_msg(e, f->name, "': data_offsets span ");
            pe__msg_u(e, f->end - f->begin);
            pe__msg_s(e, " bytes, its shape needs ");
            pe__msg_u(e, (uint64_t)t[k].numel * 4u);
            return PE_ERR_FIELD_VALUE;
        }
        file_index[k] = i;
    }
    return PE_OK;
}

pe_status pe_model_open(pe_model *m, size_t *n_weights, const uint8_t *file, size_t file_size) {
    if (!m) return PE_ERR_NULL;
    memset(m, 0, sizeof *m);
    pe__msg e = pe__msg_start(m->message, sizeof m->message);
    if (!file || !n_weights) {
        pe__msg_s(&e, "open: file and n_weights must not be NULL");
        return PE_ERR_NULL;
    }
    pe__st st; /* ~13 KiB of the 256 KiB wasm stack */
    pe__tensor_info t[PE__MAX_TENSORS];
    int nt = 0, idx[PE__MAX_TENSORS];
    pe_status s = pe__st_parse(&st, file, file_size, &e);
    if (s == PE_OK) s = pe__st_check(&m->config, t, &nt, idx, &st, &e);
    if (s != PE_OK) return s;
    m->n_weights = t[nt - 1].offset + t[nt - 1].numel;
    *n_weights = m->n_weights;
    return PE_OK;
}

pe_status pe_model_load(pe_model *m, float *weights, size_t n_floats, const uint8_t *file, size_t file_size) {
    if (!m) return PE_ERR_NULL;
    pe__msg e = pe__msg_start(m->message, sizeof m->message);
    if (!file || !weights) {
        pe__msg_s(&e, "load: file and weights must not be NULL");
        return PE_ERR_NULL;
    }
    pe__st st;
    pe__tensor_info t[PE__MAX_TENSORS];
    int nt = 0, idx[PE__MAX_TENSORS];
    pe_model_config cfg;
    pe_status s = pe__st_parse(&st, file, file_size, &e);
    if (s == PE_OK) s = pe__st_check(&cfg, t, &nt, idx, &st, &e);
    if (s != PE_OK) return s;
    const size_t need = t[nt - 1].offset + t[nt - 1].numel;
    if (n_floats < need) {
        pe__msg_s(&e, "load: weights hold ");
        pe__msg_u(&e, n_floats);
        pe__msg_s(&e, " floats, the model needs ");
        pe__msg_u(&e, need);
        return PE_ERR_SHAPE;
    }
    for (int k = 0; k < nt; k++) {
        const pe__st_entry *f = &st.t[idx[k]];
        memcpy(weights + t[k].offset, file + st.data_start + f->begin, t[k].numel * sizeof(float));
    }
    /* Finite is not enough: a weight of 1e31 is finite and its logits are not. Within PE_MODEL_MAX_WEIGHT every
     * activation stays finite for every size the PE_MODEL_* limits allow (posenc.h gives the bound's reason). */
    for (size_t i = 0; i < need; i++) {
        if (!(fabsf(weights[i]) <= (float)PE_MODEL_MAX_WEIGHT)) {
            int k = nt - 1;
            while (k > 0 && t[k].offset > i) k--;
            pe__msg_s(&e, "load: tensor '");
            pe__msg_s(&e, t[k].name);
            pe__msg_s(&e, isfinite(weights[i]) ? "' holds a value beyond +-"
                                               : "' holds a NaN or infinity; weights must be within +-");
            pe__msg_i(&e, (long long)PE_MODEL_MAX_WEIGHT);
            pe__msg_s(&e, " (PE_MODEL_MAX_WEIGHT), at element ");
            pe__msg_u(&e, i - t[k].offset);
            return PE_ERR_FIELD_VALUE;
        }
    }
    s = pe__model_bind(m, &cfg, weights);
    if (s != PE_OK && !m->message[0]) {
        e = pe__msg_start(m->message, sizeof m->message);
        pe__msg_s(&e, "load: ");
        pe__msg_s(&e, pe_status_string(s));
    }
    return s;
}
