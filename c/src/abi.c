/* abi.c — struct layouts for the WebAssembly wrapper, so JS never hard-codes offsets. */
#include "posenc.h"

#include <stddef.h>

#define PE__OFF(field) (int32_t) offsetof(pe_rope_config, field)

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
