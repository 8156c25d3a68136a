/* abi.c — struct layouts for the WebAssembly wrapper, so JS never hard-codes offsets. */
#include "posenc.h"

#include <stddef.h>

#define PE__OFF_OF(type, field) (int32_t) offsetof(type, field)
#define PE__OFF(field) PE__OFF_OF(pe_rope_config, field)

static const int32_t pe__rope_config_layout[] = {
    PE__OFF(head_dim),         PE__OFF(rotary_dim),
    PE__OFF(base),             PE__OFF(type),
    PE__OFF(pairing),          PE__OFF(factor),
    PE__OFF(max_position_embeddings), PE__OFF(original_max_position_embeddings),
    PE__OFF(attention_factor), PE__OFF(beta_fast),
    PE__OFF(beta_slow),        PE__OFF(mscale),
    PE__OFF(mscale_all_dim),   PE__OFF(yarn_no_truncate),
    PE__OFF(low_freq_factor),  PE__OFF(high_freq_factor),
    PE__OFF(short_factor),     PE__OFF(long_factor),
    (int32_t) sizeof(pe_rope_config), (int32_t) sizeof(pe_rope),
};

const int32_t *pe_abi_rope_config_layout(int32_t *count) {
    if (count) *count = (int32_t)(sizeof pe__rope_config_layout / sizeof pe__rope_config_layout[0]);
    return pe__rope_config_layout;
}

#define PE__A(field) PE__OFF_OF(pe_attention_config, field)
static const int32_t pe__attention_config_layout[] = {
    PE__A(batch),   PE__A(heads),        PE__A(kv_heads), PE__A(q_len),       PE__A(k_len),
    PE__A(head_dim), PE__A(layout),      PE__A(causal),   PE__A(scale),       PE__A(alibi_slopes),
    PE__A(rope),    PE__A(q_positions),  PE__A(k_positions), PE__A(rope_seq_len),
    PE__A(k_rotated),
    (int32_t) sizeof(pe_attention_config),
};

#define PE__S(field) PE__OFF_OF(pe_sinusoidal_config, field)
static const int32_t pe__sinusoidal_config_layout[] = {
    PE__S(base), PE__S(offset), PE__S(variant), PE__S(use_padding_idx), PE__S(padding_idx),
    (int32_t) sizeof(pe_sinusoidal_config),
};

#define PE__RA(field) PE__OFF_OF(pe_rope_apply_config, field)
static const int32_t pe__rope_apply_config_layout[] = {
    PE__RA(batch), PE__RA(seq), PE__RA(heads), PE__RA(layout), PE__RA(per_batch_rows), PE__RA(rotation),
    (int32_t) sizeof(pe_rope_apply_config),
};

#define PE__LA(field) PE__OFF_OF(pe_learned_add_config, field)
static const int32_t pe__learned_add_config_layout[] = {
    PE__LA(batch),  PE__LA(seq), PE__LA(d_model), PE__LA(n_rows), PE__LA(row_offset), PE__LA(per_batch_positions),
    (int32_t) sizeof(pe_learned_add_config),
};

#define PE__LAYOUT_GETTER(name, table)                                                                    \
    const int32_t *name(int32_t *count) {                                                                  \
        if (count) *count = (int32_t)(sizeof table / sizeof table[0]);                                     \
        return table;                                                                                      \
    }
PE__LAYOUT_GETTER(pe_abi_attention_config_layout, pe__attention_config_layout)
PE__LAYOUT_GETTER(pe_abi_sinusoidal_config_layout, pe__sinusoidal_config_layout)
PE__LAYOUT_GETTER(pe_abi_rope_apply_config_layout, pe__rope_apply_config_layout)
PE__LAYOUT_GETTER(pe_abi_learned_add_config_layout, pe__learned_add_config_layout)
