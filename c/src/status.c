/* status.c — names for pe_status values. */
#include "posenc.h"

#define PE__STR2(x) #x
#define PE__STR(x) PE__STR2(x) /* a macro's value as a string literal, so the messages follow the header */

static const char *const pe__status_strings[PE_STATUS_COUNT] = {
    [PE_OK] = "ok",
    [PE_ERR_NULL] = "a required pointer is NULL",
    [PE_ERR_HEAD_DIM] = "head_dim must be an even integer in [2, " PE__STR(PE_ROPE_MAX_HEAD_DIM) "]",
    [PE_ERR_ROTARY_DIM] = "rotary_dim must be an even integer in [2, head_dim]",
    [PE_ERR_BASE] =
        "base must be finite and > 0 and keep every frequency <= PE_MAX_FREQUENCY (" PE__STR(PE_MAX_FREQUENCY) ")",
    [PE_ERR_FACTOR] =
        "a scaling factor must be finite and > 0 and keep every inverse frequency <= PE_ROPE_MAX_INV_FREQ (" PE__STR(
            PE_MAX_FREQUENCY) ")",
    [PE_ERR_ROPE_TYPE] = "unknown rope type",
    [PE_ERR_PAIRING] = "unknown pairing (half-split or interleaved)",
    [PE_ERR_LAYOUT] = "unknown layout (BSHD or BHSD)",
    [PE_ERR_MISSING_FIELD] = "a field required by this rope type is missing",
    [PE_ERR_FIELD_VALUE] = "a field is outside its documented range",
    [PE_ERR_POSITION] = "positions must be >= 0",
    [PE_ERR_SHAPE] = "a dimension is out of range, the sizes do not fit together or cannot be addressed",
    [PE_ERR_SEQ_LEN] = "seq_len must be >= 0 (or PE_SEQ_LEN_FROM_POSITIONS where accepted)",
    [PE_ERR_HEADS] = "head counts must be >= 1 and kv_heads must divide heads",
    [PE_ERR_SCALE] = "a scale must be finite (RoPE tables: |attention factor * extra_scale| <= 2^127)",
    [PE_ERR_OUT_OF_RANGE] = "an index is past the end of its table",
    [PE_ERR_ATTENTION_FACTOR] = "the attention factor must be finite with magnitude <= PE_ROPE_MAX_SCALE (2^127)",
};

const char *pe_status_string(pe_status status) {
    if ((unsigned)status >= (unsigned)PE_STATUS_COUNT || !pe__status_strings[status]) return "unknown status";
    return pe__status_strings[status];
}
