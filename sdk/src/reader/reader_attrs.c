/*
 * reader_attrs.c — attribute lists and log bodies of `.jgr` records (jager_attr_next,
 * jager_log_body); no reader state, any thread.
 */
#include <string.h>

#include "reader_priv.h"

/* ---------------------------------------------------------------------------------- */
/* attribute lists and log bodies (any-thread: no reader state) */

int jager_attr_next(const uint8_t **cursor, const uint8_t *end, jager_attr_view *out)
{
    if (!cursor || !*cursor || !end || !out) return JAGER_E_INVALID;
    const uint8_t *p = *cursor;
    if (p == end) return 0;
    if (p > end || (size_t)(end - p) < 8) return JAGER_E_FORMAT;
    uint16_t key_len = jg_rd16(p), kind = jg_rd16(p + 2);
    uint32_t value_len = jg_rd32(p + 4);
    uint64_t total = 8 + pad8((uint64_t)key_len + value_len);
    if (total > (uint64_t)(end - p)) return JAGER_E_FORMAT;
    if (kind < JAGER_ATTR_I64 || kind > JAGER_ATTR_STR_ID) return JAGER_E_FORMAT;
    if (kind != JAGER_ATTR_STR && value_len != 8) return JAGER_E_FORMAT;
    memset(out, 0, sizeof *out);
    out->key = (const char *)p + 8;
    out->key_len = key_len;
    out->kind = kind;
    const uint8_t *v = p + 8 + key_len;
    switch (kind) {
    case JAGER_ATTR_I64:
    case JAGER_ATTR_BOOL:
    case JAGER_ATTR_STR_ID: out->i64 = (int64_t)jg_rd64(v); break;
    case JAGER_ATTR_F64: memcpy(&out->f64, v, 8); break;
    default:
        out->str = (const char *)v;
        out->str_len = value_len;
    }
    *cursor = p + total;
    return 1;
}

jager_status jager_log_body(const jager_rec_log *rec, const char **body, uint32_t *body_len, const uint8_t **attrs,
                            const uint8_t **attrs_end)
{
    if (!rec) return JAGER_E_INVALID;
    uint64_t size = (uint64_t)rec->h.words * 8u;
    if (rec->h.type != JAGER_EV_LOG || size < sizeof *rec || pad8(rec->body_len) > size - sizeof *rec)
        return JAGER_E_FORMAT;
    const uint8_t *base = (const uint8_t *)rec;
    if (body) *body = (const char *)(base + sizeof *rec);
    if (body_len) *body_len = rec->body_len;
    if (attrs) *attrs = base + sizeof *rec + pad8(rec->body_len);
    if (attrs_end) *attrs_end = base + size;
    return JAGER_OK;
}
