/* abi.c — what the WebAssembly wrapper reads from the module instead of hard-coding it: struct layouts,
 * status names and limits. */
#include "posenc.h"

#include <stddef.h>

#define PE__OFF_OF(type, field) (int32_t) offsetof(type, field)
#define PE__OFF(field) PE__OFF_OF(pe_rope_config, field)

static const int32_t pe__rope_config_layout[] = {
    PE__OFF(head_dim),
    PE__OFF(rotary_dim),
    PE__OFF(base),
    PE__OFF(type),
    PE__OFF(pairing),
    PE__OFF(factor),
    PE__OFF(max_position_embeddings),
    PE__OFF(original_max_position_embeddings),
    PE__OFF(attention_factor),
    PE__OFF(beta_fast),
    PE__OFF(beta_slow),
    PE__OFF(mscale),
    PE__OFF(mscale_all_dim),
    PE__OFF(yarn_no_truncate),
    PE__OFF(low_freq_factor),
    PE__OFF(high_freq_factor),
    PE__OFF(short_factor),
    PE__OFF(long_factor),
    (int32_t)sizeof(pe_rope_config),
    (int32_t)sizeof(pe_rope),
};

const int32_t *pe_abi_rope_config_layout(int32_t *count) {
    if (count) *count = (int32_t)(sizeof pe__rope_config_layout / sizeof pe__rope_config_layout[0]);
    return pe__rope_config_layout;
}

#define PE__A(field) PE__OFF_OF(pe_attention_config, field)
static const int32_t pe__attention_config_layout[] = {
    PE__A(batch),
    PE__A(heads),
    PE__A(kv_heads),
    PE__A(q_len),
    PE__A(k_len),
    PE__A(head_dim),
    PE__A(layout),
    PE__A(causal),
    PE__A(scale),
    PE__A(alibi_slopes),
    PE__A(rope),
    PE__A(q_positions),
    PE__A(k_positions),
    PE__A(rope_seq_len),
    PE__A(k_rotated),
    PE__A(per_batch_positions),
    PE__A(key_mask),
    PE__A(bias),
    PE__A(bias_batch),
    PE__A(bias_heads),
    PE__A(bias_q_len),
    PE__A(v_head_dim),
    PE__A(q_scale),
    PE__A(q_scale_per_batch),
    PE__A(q_strides),
    PE__A(k_strides),
    PE__A(v_strides),
    PE__A(out_strides),
    PE__A(q_offset),
    PE__A(k_offset),
    PE__A(v_offset),
    PE__A(out_offset),
    (int32_t)sizeof(pe_attention_config),
};

#define PE__S(field) PE__OFF_OF(pe_sinusoidal_config, field)
static const int32_t pe__sinusoidal_config_layout[] = {
    PE__S(base),
    PE__S(offset),
    PE__S(variant),
    PE__S(use_padding_idx),
    PE__S(padding_idx),
    PE__S(dtype),
    (int32_t)sizeof(pe_sinusoidal_config),
};

#define PE__RA(field) PE__OFF_OF(pe_rope_apply_config, field)
static const int32_t pe__rope_apply_config_layout[] = {
    PE__RA(batch),          PE__RA(seq),      PE__RA(heads),         PE__RA(layout),
    PE__RA(per_batch_rows), PE__RA(rotation), PE__RA(strides.batch), PE__RA(strides.seq),
    PE__RA(strides.heads),  PE__RA(offset),   PE__RA(dtype),         (int32_t)sizeof(pe_rope_apply_config),
};

#define PE__LA(field) PE__OFF_OF(pe_learned_add_config, field)
static const int32_t pe__learned_add_config_layout[] = {
    PE__LA(batch),  PE__LA(seq),         PE__LA(d_model),
    PE__LA(n_rows), PE__LA(row_offset),  PE__LA(per_batch_positions),
    PE__LA(dtype),  PE__LA(table_dtype), (int32_t)sizeof(pe_learned_add_config),
};

#define PE__LAYOUT_GETTER(name, table)                                 \
    const int32_t *name(int32_t *count) {                              \
        if (count) *count = (int32_t)(sizeof table / sizeof table[0]); \
        return table;                                                  \
    }
PE__LAYOUT_GETTER(pe_abi_attention_config_layout, pe__attention_config_layout)
static const int32_t pe__mrope_config_layout[] = {
    PE__OFF_OF(pe_mrope_config, section),
    PE__OFF_OF(pe_mrope_config, interleaved),
    (int32_t)sizeof(pe_mrope_config),
};
PE__LAYOUT_GETTER(pe_abi_mrope_config_layout, pe__mrope_config_layout)
PE__LAYOUT_GETTER(pe_abi_sinusoidal_config_layout, pe__sinusoidal_config_layout)
PE__LAYOUT_GETTER(pe_abi_rope_apply_config_layout, pe__rope_apply_config_layout)
PE__LAYOUT_GETTER(pe_abi_learned_add_config_layout, pe__learned_add_config_layout)

/* pe_rope is read back after pe_rope_init: its config holds the resolved values (defaults filled in), as
 * sokol's sg_query_desc returns a desc with its defaults applied. */
#define PE__R(field) PE__OFF_OF(pe_rope, field)
static const int32_t pe__rope_layout[] = {
    PE__R(config), PE__R(rot_dim), PE__R(n_freq), PE__R(attention_scaling), (int32_t)sizeof(pe_rope),
};
PE__LAYOUT_GETTER(pe_abi_rope_layout, pe__rope_layout)

/* Status codes and limits by name, so the JS wrapper reads them from the module it runs instead of keeping
 * copies that could drift from the header. A status added to pe_status needs its name here too; one left out
 * reads as NULL, which the wrapper reports as "PE_STATUS_<n>". */
#define PE__NAME(s) [s] = #s
static const char *const pe__status_names[PE_STATUS_COUNT] = {
    PE__NAME(PE_OK),
    PE__NAME(PE_ERR_NULL),
    PE__NAME(PE_ERR_HEAD_DIM),
    PE__NAME(PE_ERR_ROTARY_DIM),
    PE__NAME(PE_ERR_BASE),
    PE__NAME(PE_ERR_FACTOR),
    PE__NAME(PE_ERR_ROPE_TYPE),
    PE__NAME(PE_ERR_PAIRING),
    PE__NAME(PE_ERR_LAYOUT),
    PE__NAME(PE_ERR_MISSING_FIELD),
    PE__NAME(PE_ERR_FIELD_VALUE),
    PE__NAME(PE_ERR_POSITION),
    PE__NAME(PE_ERR_SHAPE),
    PE__NAME(PE_ERR_SEQ_LEN),
    PE__NAME(PE_ERR_HEADS),
    PE__NAME(PE_ERR_SCALE),
    PE__NAME(PE_ERR_OUT_OF_RANGE),
    PE__NAME(PE_ERR_ATTENTION_FACTOR),
};

int32_t pe_abi_status_count(void) { return PE_STATUS_COUNT; }

const char *pe_abi_status_name(int32_t status) {
    if (status < 0 || status >= PE_STATUS_COUNT) return NULL;
    return pe__status_names[status];
}

/* Values as double: exact for every int32 limit and enum, and able to carry the floating-point bounds. */
#define PE__LIMIT(m) \
    { #m, (double)(m) }
static const struct {
    const char *name;
    double value;
} pe__limits[] = {
    PE__LIMIT(PE_ROPE_MAX_HEAD_DIM),
    PE__LIMIT(PE_ROPE_MAX_FREQ),
    PE__LIMIT(PE_ROPE_TYPE_COUNT),
    PE__LIMIT(PE_SEQ_LEN_NONE),
    PE__LIMIT(PE_SEQ_LEN_FROM_POSITIONS),
    PE__LIMIT(PE_ROTATE_FORWARD),
    PE__LIMIT(PE_ROTATE_INVERSE),
    PE__LIMIT(PE_LAYOUT_BSHD),
    PE__LIMIT(PE_LAYOUT_BHSD),
    PE__LIMIT(PE_PAIRING_HALF),
    PE__LIMIT(PE_PAIRING_INTERLEAVED),
    PE__LIMIT(PE_MAX_ANGLE),
    PE__LIMIT(PE_MAX_FREQUENCY),
    PE__LIMIT(PE_ROPE_MAX_INV_FREQ),
    PE__LIMIT(PE_ROPE_MAX_SCALE),
    PE__LIMIT(PE_ROPE_DEFAULT),
    PE__LIMIT(PE_ROPE_LINEAR),
    PE__LIMIT(PE_ROPE_DYNAMIC),
    PE__LIMIT(PE_ROPE_YARN),
    PE__LIMIT(PE_ROPE_LONGROPE),
    PE__LIMIT(PE_ROPE_LLAMA3),
    PE__LIMIT(PE_ROPE_PROPORTIONAL),
    PE__LIMIT(PE_SINUSOIDAL_INTERLEAVED),
    PE__LIMIT(PE_SINUSOIDAL_HALF),
    PE__LIMIT(PE_SINUSOIDAL_TENSOR2TENSOR),
    PE__LIMIT(PE_ROPE2D_PIXTRAL),
    PE__LIMIT(PE_ROPE2D_QWEN2_VL),
    PE__LIMIT(PE_ROPE2D_LLAMA4),
};
#define PE__LIMIT_COUNT ((int32_t)(sizeof pe__limits / sizeof pe__limits[0]))

int32_t pe_abi_limit_count(void) { return PE__LIMIT_COUNT; }

const char *pe_abi_limit_name(int32_t index) {
    return index >= 0 && index < PE__LIMIT_COUNT ? pe__limits[index].name : NULL;
}

double pe_abi_limit_value(int32_t index) { return index >= 0 && index < PE__LIMIT_COUNT ? pe__limits[index].value : 0; }
