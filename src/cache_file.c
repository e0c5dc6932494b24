/* cache_file.c: the plan cache file (docs/cache-format.md): little-endian serialization,
 * a parser that survives any bytes, reading a file, and save with merge under a file lock.
 * The layer below the cache object (cache.c): it calls nothing of it (the load, which puts
 * entries into the object, is cache.c's). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "internal.h"

/* ================================================================ the file format */
static const unsigned char file_magic[8] = {'N', 'N', 'O', 'P', 'C', 'A', 'C', 'H'};
static const unsigned char entry_marker[4] = {'N', 'N', 'C', 'E'};
/* 2: entries end with their io list (1 had none; its files are rejected like any other). */
#define FORMAT_VERSION 2u
#define HEADER_FIXED   32u /* magic 8, version 4, header_len 4, cudnn 8, key_len 4, crc 4 */
#define RECORD_HEAD    12u /* marker 4, payload_len 4, crc 4 */
/* Payload: fp 16, engine 8, flags 4, time 4, workspace 8, n_knobs 4, knobs, blob_len 4, blob,
 * n_io 4, io. PAYLOAD_FIXED counts every field but knobs, blob and io. */
#define PAYLOAD_FIXED 52u
#define KNOB_AT       44u /* first knob; blob_len follows the knobs */
#define KNOB_BYTES    16u /* type 8, value 8 */
#define IO_BYTES      16u /* uid 8, bytes 8 */
#define PAYLOAD_MAX                                                                                \
    (PAYLOAD_FIXED + NNOP_CACHE_MAX_KNOBS * KNOB_BYTES + NNOP_CACHE_MAX_BLOB +                     \
     NNOP_CACHE_MAX_IO * IO_BYTES)
/* Largest file read: a bound on what a corrupted or hostile file can make us allocate. */
#define FILE_MAX ((size_t)1 << 30)

/* ---------------------------------------------------------------- entries */
int nnop__cache_entry_valid(const nnop__cache_entry *e)
{
    return e->n_knobs >= 0 && e->n_knobs <= NNOP_CACHE_MAX_KNOBS &&
           e->blob_len <= NNOP_CACHE_MAX_BLOB && (e->blob || e->blob_len == 0) && e->n_io >= 0 &&
           e->n_io <= NNOP_CACHE_MAX_IO;
}

/* Bytes an entry with a blob of blob_len bytes is charged against max_bytes. */
size_t nnop__cache_entry_cost(size_t blob_len)
{
    return sizeof(nnop__cache_node) + blob_len;
}

/* ---------------------------------------------------------------- little-endian buffers */
typedef struct bytebuf {
    unsigned char *p;
    size_t len, cap;
    int oom;
} bytebuf;

static void bb_reserve(bytebuf *b, size_t more)
{
    size_t cap;
    unsigned char *p;
    if (b->oom || b->cap - b->len >= more)
        return;
    cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more && cap < ((size_t)-1) / 2)
        cap *= 2;
    p = cap - b->len >= more ? (unsigned char *)realloc(b->p, cap) : NULL;
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void bb_put(bytebuf *b, const void *data, size_t n)
{
    bb_reserve(b, n);
    if (b->oom || !n)
        return;
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void bb_u32(bytebuf *b, uint32_t v)
{
    unsigned char le[4];
    int i;
    for (i = 0; i < 4; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    bb_put(b, le, 4);
}

static void bb_u64(bytebuf *b, uint64_t v)
{
    bb_u32(b, (uint32_t)v);
    bb_u32(b, (uint32_t)(v >> 32));
}

static uint32_t rd_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd_u64(const unsigned char *p)
{
    return (uint64_t)rd_u32(p) | (uint64_t)rd_u32(p + 4) << 32;
}

static void put_u32_at(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* ---------------------------------------------------------------- writing */
static void write_header(bytebuf *b, uint64_t cudnn_version, const char *device_key)
{
    size_t start = b->len, key_len = strlen(device_key);
    if (key_len > NNOP_CACHE_KEY_MAX)
        key_len = NNOP_CACHE_KEY_MAX;
    bb_put(b, file_magic, sizeof file_magic);
    bb_u32(b, FORMAT_VERSION);
    bb_u32(b, (uint32_t)(HEADER_FIXED + key_len));
    bb_u64(b, cudnn_version);
    bb_u32(b, (uint32_t)key_len);
    bb_put(b, device_key, key_len);
    if (!b->oom)
        bb_u32(b, nnop__crc32(0, b->p + start, b->len - start));
}

/* Bytes of a payload with these counts: the writer's length and what the reader demands. */
static size_t payload_len(size_t n_knobs, size_t blob_len, size_t n_io)
{
    return PAYLOAD_FIXED + n_knobs * KNOB_BYTES + blob_len + n_io * IO_BYTES;
}

static int io_count_ok(const nnop__cache_entry *e)
{
    return e->n_io >= 0 && e->n_io <= NNOP_CACHE_MAX_IO;
}

static void write_record(bytebuf *b, const nnop__fp *fp, const nnop__cache_entry *e)
{
    int32_t i, n_io = io_count_ok(e) ? e->n_io : 0; /* never read past io[]: 0 is "unknown" */
    size_t start, plen = payload_len((size_t)e->n_knobs, e->blob_len, (size_t)n_io);
    uint32_t time_bits;
    memcpy(&time_bits, &e->time_us, sizeof time_bits);
    bb_put(b, entry_marker, sizeof entry_marker);
    start = b->len;
    bb_u32(b, (uint32_t)plen);
    bb_u32(b, 0); /* crc, patched below */
    bb_u64(b, fp->lo);
    bb_u64(b, fp->hi);
    bb_u64(b, (uint64_t)e->engine_id);
    bb_u32(b, e->flags);
    bb_u32(b, time_bits);
    bb_u64(b, (uint64_t)e->workspace_bytes);
    bb_u32(b, (uint32_t)e->n_knobs);
    for (i = 0; i < e->n_knobs; i++) {
        bb_u64(b, (uint64_t)e->knobs[i].type);
        bb_u64(b, (uint64_t)e->knobs[i].value);
    }
    bb_u32(b, (uint32_t)e->blob_len);
    bb_put(b, e->blob, e->blob_len);
    bb_u32(b, (uint32_t)n_io);
    for (i = 0; i < n_io; i++) {
        bb_u64(b, (uint64_t)e->io[i].uid);
        bb_u64(b, (uint64_t)e->io[i].bytes);
    }
    if (!b->oom) {
        /* the checksum covers the length field and the payload */
        uint32_t crc = nnop__crc32(0, b->p + start, 4);
        crc = nnop__crc32(crc, b->p + start + 8, plen);
        put_u32_at(b->p + start + 4, crc);
    }
}

nnop_status nnop__cache_serialize(uint64_t cudnn_version, const char *device_key, size_t n,
                                  const nnop__fp *fps, const nnop__cache_entry *entries,
                                  unsigned char **out, size_t *out_len)
{
    bytebuf b = {0};
    size_t i;
    if (!device_key || !out || !out_len || (n && (!fps || !entries)))
        return NNOP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    *out_len = 0;
    for (i = 0; i < n; i++)
        if (!nnop__cache_entry_valid(&entries[i]) || !io_count_ok(&entries[i]))
            return NNOP_ERR_INVALID_ARGUMENT;
    write_header(&b, cudnn_version, device_key);
    for (i = 0; i < n; i++)
        write_record(&b, &fps[i], &entries[i]);
    if (b.oom) {
        free(b.p);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    *out = b.p;
    *out_len = b.len;
    return NNOP_OK;
}

/* ---------------------------------------------------------------- parsing */
static void report_problem(nnop__cache_report *rep, nnop_status st, size_t off, const char *fmt,
                           ...) NNOP_PRINTF(4, 5);

static void report_problem(nnop__cache_report *rep, nnop_status st, size_t off, const char *fmt,
                           ...)
{
    va_list ap;
    int n;
    if (rep->status != NNOP_OK)
        return; /* keep the first */
    rep->status = st;
    rep->offset = off;
    n = snprintf(rep->message, sizeof rep->message, "offset %zu: ", off);
    if (n < 0 || (size_t)n >= sizeof rep->message)
        return;
    va_start(ap, fmt);
    vsnprintf(rep->message + n, sizeof rep->message - (size_t)n, fmt, ap);
    va_end(ap);
}

/* Check the header; *header_len and the file's identity out. 0 when the file is unusable. */
static int parse_header(const unsigned char *buf, size_t len, size_t *header_len,
                        uint64_t *cudnn_version, char *key, nnop__cache_report *rep)
{
    uint32_t version, hlen, key_len;
    if (len < sizeof file_magic || memcmp(buf, file_magic, sizeof file_magic) != 0) {
        report_problem(rep, NNOP_ERR_FORMAT, 0, "not an nnop plan cache (bad magic)");
        return 0;
    }
    if (len < 16) {
        report_problem(rep, NNOP_ERR_FORMAT, len, "header cut short");
        return 0;
    }
    version = rd_u32(buf + 8);
    hlen = rd_u32(buf + 12);
    if (version != FORMAT_VERSION) {
        report_problem(rep, NNOP_ERR_FORMAT, 8, "format version %u, this nnop reads %u",
                       (unsigned)version, FORMAT_VERSION);
        return 0;
    }
    if (hlen < HEADER_FIXED || hlen > HEADER_FIXED + NNOP_CACHE_KEY_MAX) {
        report_problem(rep, NNOP_ERR_FORMAT, 12, "bad header length");
        return 0;
    }
    if (len < hlen) {
        report_problem(rep, NNOP_ERR_FORMAT, len, "header cut short");
        return 0;
    }
    key_len = rd_u32(buf + 24);
    if (key_len != hlen - HEADER_FIXED || nnop__crc32(0, buf, hlen - 4) != rd_u32(buf + hlen - 4)) {
        report_problem(rep, NNOP_ERR_FORMAT, hlen - 4, "header checksum mismatch");
        return 0;
    }
    *cudnn_version = rd_u64(buf + 16);
    memcpy(key, buf + 28, key_len);
    key[key_len] = '\0';
    *header_len = hlen;
    return 1;
}

/* The fixed fields and the knobs of a payload already checked by decode_payload. */
static void decode_choice(const unsigned char *p, nnop__fp *fp, nnop__cache_entry *e)
{
    uint32_t time_bits = rd_u32(p + 28);
    int32_t i;
    fp->lo = rd_u64(p);
    fp->hi = rd_u64(p + 8);
    e->engine_id = (int64_t)rd_u64(p + 16);
    e->flags = rd_u32(p + 24);
    memcpy(&e->time_us, &time_bits, sizeof time_bits);
    e->workspace_bytes = (int64_t)rd_u64(p + 32);
    e->n_knobs = (int32_t)rd_u32(p + 40);
    for (i = 0; i < e->n_knobs; i++) {
        e->knobs[i].type = (int64_t)rd_u64(p + KNOB_AT + (size_t)i * KNOB_BYTES);
        e->knobs[i].value = (int64_t)rd_u64(p + KNOB_AT + (size_t)i * KNOB_BYTES + 8);
    }
}

/* The largest tensor or workspace a file may name: a valid checksum says nothing about the
 * values (a crafted or stale file), and GPU scratch memory is sized from them. */
#define IO_BYTES_MAX (NNOP_MAX_TENSOR_ELEMENTS * 4)

/* 1 when every value of a decoded entry is in range: each io pair names a tensor of 1 to
 * IO_BYTES_MAX bytes under a uid no other pair has, the workspace is -1 (unknown) or 0 to
 * IO_BYTES_MAX. */
static int values_ok(const nnop__cache_entry *e)
{
    int32_t i, j;
    if (e->workspace_bytes < -1 || e->workspace_bytes > IO_BYTES_MAX)
        return 0;
    for (i = 0; i < e->n_io; i++) {
        if (e->io[i].bytes < 1 || e->io[i].bytes > IO_BYTES_MAX)
            return 0;
        for (j = 0; j < i; j++)
            if (e->io[j].uid == e->io[i].uid)
                return 0;
    }
    return 1;
}

/* Decode a payload whose checksum matched. 0 if its fields are inconsistent: each count is
 * checked against its bound and the bytes present before the field after it is read, and
 * the counts must add up to plen exactly. */
static int decode_payload(const unsigned char *p, size_t plen, nnop__fp *fp, nnop__cache_entry *e)
{
    uint32_t n_knobs, blob_len, n_io, i;
    size_t blob_at, io_at;
    if (plen < PAYLOAD_FIXED)
        return 0;
    n_knobs = rd_u32(p + 40);
    if (n_knobs > NNOP_CACHE_MAX_KNOBS || plen < payload_len(n_knobs, 0, 0))
        return 0;
    blob_at = KNOB_AT + (size_t)n_knobs * KNOB_BYTES + 4;
    blob_len = rd_u32(p + blob_at - 4);
    if (blob_len > NNOP_CACHE_MAX_BLOB || plen < payload_len(n_knobs, blob_len, 0))
        return 0;
    io_at = blob_at + blob_len + 4;
    n_io = rd_u32(p + io_at - 4);
    if (n_io > NNOP_CACHE_MAX_IO || plen != payload_len(n_knobs, blob_len, n_io))
        return 0;
    memset(e, 0, sizeof *e);
    decode_choice(p, fp, e);
    e->blob_len = blob_len;
    e->blob = blob_len ? (void *)(uintptr_t)(p + blob_at) : NULL;
    e->n_io = (int32_t)n_io;
    for (i = 0; i < n_io; i++) {
        e->io[i].uid = (int64_t)rd_u64(p + io_at + (size_t)i * IO_BYTES);
        e->io[i].bytes = (int64_t)rd_u64(p + io_at + (size_t)i * IO_BYTES + 8);
    }
    return values_ok(e);
}

/* Next entry marker after off, or len if none: how parsing resumes after a damaged entry. */
static size_t resync(const unsigned char *buf, size_t len, size_t off)
{
    for (off++; off + sizeof entry_marker <= len; off++)
        if (memcmp(buf + off, entry_marker, sizeof entry_marker) == 0)
            return off;
    return len;
}

/* One record at off: 1 and *next on a checked payload (*fp, *e filled), 0 when damaged
 * (problem reported, *next = where to resume). *failed_bytes counts the bytes checksummed for
 * records whose checksum did not match: records that pass never overlap, so they cost at most
 * len in all, but damaged ones may (back-to-back heads, each claiming the rest of the file,
 * made the parse quadratic). Once the damaged ones would pass 2 len, the rest of the file is
 * ignored (*next = len): the parse checksums at most 3 len bytes (and 4 per record head), yet
 * one or two damaged lengths still leave the records after them readable. */
static int parse_record(const unsigned char *buf, size_t len, size_t off, size_t *next,
                        nnop__fp *fp, nnop__cache_entry *e, size_t *failed_bytes,
                        nnop__cache_report *rep)
{
    size_t plen;
    uint32_t crc;
    *next = len;
    if (len - off < RECORD_HEAD) {
        report_problem(rep, NNOP_ERR_FORMAT, off, "entry cut short (truncated file)");
        return 0;
    }
    if (memcmp(buf + off, entry_marker, sizeof entry_marker) != 0) {
        report_problem(rep, NNOP_ERR_FORMAT, off, "bad entry marker");
        *next = resync(buf, len, off);
        return 0;
    }
    plen = rd_u32(buf + off + 4);
    if (plen > PAYLOAD_MAX || plen > len - off - RECORD_HEAD) {
        report_problem(rep, NNOP_ERR_FORMAT, off + 4,
                       plen > PAYLOAD_MAX ? "entry length out of range"
                                          : "entry cut short (truncated file)");
        *next = resync(buf, len, off);
        return 0;
    }
    if ((uint64_t)*failed_bytes + plen > 2 * (uint64_t)len) {
        report_problem(rep, NNOP_ERR_FORMAT, off,
                       "too many damaged entries: the rest of the file is ignored");
        return 0;
    }
    crc = nnop__crc32(0, buf + off + 4, 4);
    crc = nnop__crc32(crc, buf + off + RECORD_HEAD, plen);
    rep->bytes_checksummed += 4 + plen;
    if (crc != rd_u32(buf + off + 8)) {
        *failed_bytes += plen;
        report_problem(rep, NNOP_ERR_FORMAT, off, "entry checksum mismatch");
        *next = resync(buf, len, off);
        return 0;
    }
    *next = off + RECORD_HEAD + plen;
    if (!decode_payload(buf + off + RECORD_HEAD, plen, fp, e)) {
        report_problem(rep, NNOP_ERR_FORMAT, off, "malformed entry");
        return 0;
    }
    return 1;
}

void nnop__cache_parse(const unsigned char *buf, size_t len, uint64_t cudnn_version,
                       const char *device_key, nnop__cache_entry_fn fn, void *user,
                       nnop__cache_report *rep)
{
    char key[NNOP_CACHE_KEY_MAX + 1], want[NNOP_CACHE_KEY_MAX + 1];
    uint64_t file_cudnn = 0;
    size_t off = 0, next, failed_bytes = 0;
    int other_device = 0, other_cudnn = 0;
    nnop__cache_report local;
    if (!rep)
        rep = &local;
    memset(rep, 0, sizeof *rep);
    if (!buf || !parse_header(buf, len, &off, &file_cudnn, key, rep)) {
        rep->rejected = 1;
        return;
    }
    if (device_key) {
        snprintf(want, sizeof want, "%s", device_key);
        other_device = strcmp(key, want) != 0;
        other_cudnn = file_cudnn != cudnn_version;
        if (other_device || other_cudnn) {
            report_problem(rep, NNOP_ERR_VERSION, 16, "written for \"%s\", cuDNN %llu", key,
                           (unsigned long long)file_cudnn);
        }
    }
    while (off < len) {
        nnop__fp fp;
        nnop__cache_entry e;
        if (!parse_record(buf, len, off, &next, &fp, &e, &failed_bytes, rep)) {
            rep->ignored_corrupt++;
        } else if (other_device) {
            rep->ignored_other_device++;
        } else if (other_cudnn) {
            rep->ignored_other_cudnn++;
        } else {
            rep->entries_ok++;
            if (fn && fn(user, &fp, &e))
                return;
        }
        off = next;
    }
}

/* ---------------------------------------------------------------- file I/O */
/* Read at most FILE_MAX bytes of path into *buf (malloc'd). *missing when it does not
 * exist (NNOP_OK, *buf NULL). Regular files only: a FIFO or device is refused without being
 * read (NNOP_ERR_IO), so that neither a load nor a save ever blocks on one. *why says what
 * failed (may be NULL). */
nnop_status nnop__cache_read_file(const char *path, unsigned char **buf, size_t *len, int *missing,
                                  nnop__open_result *why)
{
    nnop__open_result local;
    int longer; /* a longer file reads as one cut at FILE_MAX: its last entry, truncated */
    if (!why)
        why = &local;
    *missing = 0;
    if (nnop__read_file(path, FILE_MAX, buf, len, &longer, why) == 0)
        return NNOP_OK;
    *missing = *why == NNOP__OPEN_MISSING;
    return *missing ? NNOP_OK : *why == NNOP__OPEN_NO_MEMORY ? NNOP_ERR_OUT_OF_MEMORY : NNOP_ERR_IO;
}

/* ---------------------------------------------------------------- save with merge */
typedef struct merge_state {
    const nnop__fp *mem_fps; /* sorted, for bsearch */
    size_t n_mem;
    bytebuf disk;     /* records from the file that memory lacks, file order (oldest first) */
    size_t *rec_end;  /* end offset in disk of each record */
    size_t *rec_cost; /* entry_cost of each record */
    size_t n_rec, cap_rec;
    int oom;
} merge_state;

static int fp_cmp(const void *a, const void *b)
{
    const nnop__fp *x = (const nnop__fp *)a, *y = (const nnop__fp *)b;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return 0;
}

static int merge_one(void *user, const nnop__fp *fp, const nnop__cache_entry *e)
{
    merge_state *m = (merge_state *)user;
    if (m->n_mem && bsearch(fp, m->mem_fps, m->n_mem, sizeof *fp, fp_cmp))
        return 0; /* memory wins */
    if (m->n_rec == m->cap_rec) {
        size_t cap = m->cap_rec ? 2 * m->cap_rec : 64;
        size_t *ends = (size_t *)realloc(m->rec_end, cap * sizeof *ends);
        size_t *costs = ends ? (size_t *)realloc(m->rec_cost, cap * sizeof *costs) : NULL;
        if (ends)
            m->rec_end = ends;
        if (!costs) {
            m->oom = 1;
            return 1;
        }
        m->rec_cost = costs;
        m->cap_rec = cap;
    }
    write_record(&m->disk, fp, e);
    if (m->disk.oom) {
        m->oom = 1;
        return 1;
    }
    m->rec_end[m->n_rec] = m->disk.len;
    m->rec_cost[m->n_rec] = nnop__cache_entry_cost(e->blob_len);
    m->n_rec++;
    return 0;
}

/* Memory entries, oldest first, as records in *mem; their fingerprints sorted in *fps. */
static nnop_status snapshot(nnop_plan_cache *c, bytebuf *mem, nnop__fp **fps, size_t *n,
                            size_t *bytes)
{
    nnop__cache_node *node;
    size_t i = 0;
    nnop__mutex_lock(c->mu);
    *n = c->n;
    *bytes = c->bytes;
    *fps = (nnop__fp *)malloc((c->n ? c->n : 1) * sizeof **fps);
    for (node = c->oldest; node && *fps; node = node->newer) {
        (*fps)[i++] = node->fp;
        write_record(mem, &node->fp, &node->e);
    }
    nnop__mutex_unlock(c->mu);
    if (!*fps || mem->oom)
        return NNOP_ERR_OUT_OF_MEMORY;
    qsort(*fps, *n, sizeof **fps, fp_cmp);
    return NNOP_OK;
}

/* A file that exists, is not empty and does not start like a cache file is somebody else's:
 * never overwrite it (a cache_path pointing at the wrong file must not destroy it). */
static int foreign_file(const unsigned char *buf, size_t len)
{
    size_t n = len < sizeof file_magic ? len : sizeof file_magic;
    return len > 0 && memcmp(buf, file_magic, n) != 0;
}

static void set_msg(char *msg, size_t msg_len, const char *fmt, ...) NNOP_PRINTF(3, 4);

static void set_msg(char *msg, size_t msg_len, const char *fmt, ...)
{
    va_list ap;
    if (!msg || !msg_len)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, msg_len, fmt, ap);
    va_end(ap);
}

/* head + disk[from..] + mem into a temporary file renamed over path. */
static nnop_status write_atomic(nnop_plan_cache *c, const char *path, const bytebuf *head,
                                const unsigned char *disk, size_t disk_len, const bytebuf *mem,
                                char *msg, size_t msg_len)
{
    size_t tlen = strlen(path) + 80;
    char *tmp = (char *)malloc(tlen);
    FILE *f;
    int ok;
    uint64_t seq;
    nnop__open_result why;
    if (!tmp) {
        set_msg(msg, msg_len, "out of memory saving %s", path);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    nnop__mutex_lock(c->mu);
    seq = c->tmp_seq++;
    nnop__mutex_unlock(c->mu);
    snprintf(tmp, tlen, "%s.tmp.%llu.%llx.%llu", path, (unsigned long long)nnop__process_id(),
             (unsigned long long)(uintptr_t)c, (unsigned long long)seq);
    f = nnop__fopen_create(tmp, &why);
    if (!f) {
        set_msg(msg, msg_len, "cannot create a temporary file next to %s: %s", path,
                nnop__open_problem(why));
        free(tmp);
        return why == NNOP__OPEN_NO_MEMORY ? NNOP_ERR_OUT_OF_MEMORY : NNOP_ERR_IO;
    }
    ok = fwrite(head->p, 1, head->len, f) == head->len;
    ok = ok && (!disk_len || fwrite(disk, 1, disk_len, f) == disk_len);
    ok = ok && (!mem->len || fwrite(mem->p, 1, mem->len, f) == mem->len);
    ok = ok && nnop__fsync(f) == 0;
    ok = (fclose(f) == 0) && ok;
    ok = ok && nnop__rename_replace(tmp, path) == 0;
    if (!ok) {
        nnop__remove(tmp);
        set_msg(msg, msg_len, "cannot write %s (disk full or no permission?)", path);
    }
    free(tmp);
    return ok ? NNOP_OK : NNOP_ERR_IO;
}

/* ---------------------------------------------------------------- stale temporary files */
typedef struct stale_state {
    const char *dir;  /* "" for the current directory */
    const char *base; /* the cache file's name in dir */
    size_t base_len;
    char *path; /* scratch for dir + name */
    size_t path_cap;
} stale_state;

/* n digits of set ("0123456789" or hex) at *p, at least one; advances *p. */
static int skip_run(const char **p, const char *set)
{
    const char *s = *p;
    while (*s && strchr(set, *s))
        s++;
    if (s == *p)
        return 0;
    *p = s;
    return 1;
}

/* 1 when name is a temporary file of write_atomic for base: base.tmp.<pid>.<hex>.<seq>. */
static int is_our_temporary(const char *name, const char *base, size_t base_len)
{
    const char *p = name;
    if (strncmp(p, base, base_len) != 0 || strncmp(p + base_len, ".tmp.", 5) != 0)
        return 0;
    p += base_len + 5;
    return skip_run(&p, "0123456789") && *p++ == '.' && skip_run(&p, "0123456789abcdef") &&
           *p++ == '.' && skip_run(&p, "0123456789") && *p == '\0';
}

static void remove_if_stale(void *user, const char *name)
{
    stale_state *s = (stale_state *)user;
    size_t need;
    if (!is_our_temporary(name, s->base, s->base_len))
        return;
    need = strlen(s->dir) + strlen(name) + 1;
    if (need > s->path_cap)
        return; /* cannot happen: path_cap covers any name this pattern can match */
    snprintf(s->path, s->path_cap, "%s%s", s->dir, name);
    (void)nnop__remove(s->path);
}

/* Remove the temporary files of earlier saves of path whose writer was killed mid-write.
 * Called with the file lock held: every save writes its temporary file only under it, so any
 * temporary file present now is stale. Best effort (out of memory: left for a later save). */
static void remove_stale_temporaries(const char *path)
{
    stale_state s;
    const char *slash = strrchr(path, '/');
    char *dir;
    size_t dir_len;
#ifdef _WIN32
    const char *bslash = strrchr(path, '\\');
    if (bslash && (!slash || bslash > slash))
        slash = bslash;
#endif
    dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    s.base = path + dir_len;
    s.base_len = strlen(s.base);
    if (!s.base_len)
        return;
    dir = (char *)malloc(dir_len + 1);
    s.path_cap = strlen(path) + 80;
    s.path = (char *)malloc(s.path_cap);
    if (dir && s.path) {
        memcpy(dir, path, dir_len);
        dir[dir_len] = '\0';
        s.dir = dir;
        (void)nnop__list_dir(dir, remove_if_stale, &s);
    }
    free(dir);
    free(s.path);
}

/* The locked part of a save: merge with the file, bound, write. */
static nnop_status save_locked_file(nnop_plan_cache *c, const char *path, uint64_t cudnn,
                                    const char *key, char *msg, size_t msg_len)
{
    merge_state m;
    bytebuf head = {0}, mem = {0};
    nnop__fp *fps = NULL;
    nnop__cache_report rep;
    unsigned char *old = NULL;
    size_t old_len = 0, n_mem = 0, mem_bytes = 0, k, n_keep = 0, cost = 0;
    int missing = 0;
    nnop__open_result why = NNOP__OPEN_OK;
    nnop_status st;
    memset(&m, 0, sizeof m);
    st = snapshot(c, &mem, &fps, &n_mem, &mem_bytes);
    if (st == NNOP_OK) {
        remove_stale_temporaries(path);
        st = nnop__cache_read_file(path, &old, &old_len, &missing, &why);
        /* never replace what could not be read: it may hold another writer's entries (an
         * allocation failed) or be somebody else's file (write-only, a FIFO, a directory) */
        if (st != NNOP_OK)
            set_msg(msg, msg_len, "cannot read %s (%s): not replaced", path,
                    nnop__open_problem(why));
    }
    if (st == NNOP_OK && foreign_file(old, old_len)) {
        set_msg(msg, msg_len, "%s exists and is not an nnop plan cache: not overwritten", path);
        st = NNOP_ERR_IO;
    }
    if (st == NNOP_OK && old) {
        m.mem_fps = fps;
        m.n_mem = n_mem;
        nnop__cache_parse(old, old_len, cudnn, key, merge_one, &m, &rep);
        st = m.oom ? NNOP_ERR_OUT_OF_MEMORY : NNOP_OK;
        if (m.oom)
            set_msg(msg, msg_len, "out of memory merging %s: not replaced", path);
    }
    /* keep the newest file records that fit beside memory's entries */
    for (k = m.n_rec; k > 0 && st == NNOP_OK; k--) {
        if (n_mem + n_keep + 1 > c->max_entries ||
            mem_bytes + cost + m.rec_cost[k - 1] > c->max_bytes)
            break;
        n_keep++;
        cost += m.rec_cost[k - 1];
    }
    write_header(&head, cudnn, key);
    if (st == NNOP_OK && head.oom) {
        set_msg(msg, msg_len, "out of memory saving %s", path);
        st = NNOP_ERR_OUT_OF_MEMORY;
    }
    if (st == NNOP_OK) {
        size_t from = (m.n_rec - n_keep) ? m.rec_end[m.n_rec - n_keep - 1] : 0;
        st = write_atomic(c, path, &head, m.disk.p + from, m.disk.len - from, &mem, msg, msg_len);
    }
    free(old);
    free(fps);
    free(head.p);
    free(mem.p);
    free(m.disk.p);
    free(m.rec_end);
    free(m.rec_cost);
    return st;
}

nnop_status nnop__cache_save(nnop_plan_cache *c, const char *path, int only_if_dirty, char *msg,
                             size_t msg_len)
{
    char key[NNOP_CACHE_KEY_MAX + 1], *lock_path;
    uint64_t cudnn, gen, t0 = nnop__monotonic_ns();
    nnop__file_lock *lock = NULL;
    nnop_status st;
    if (msg && msg_len)
        msg[0] = '\0';
    if (!c)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__mutex_lock(c->mu);
    if (!path)
        path = c->path;
    st = (!path || !c->bound || (only_if_dirty && !c->dirty)) ? NNOP_ERR_UNSUPPORTED : NNOP_OK;
    cudnn = c->cudnn_version;
    memcpy(key, c->device_key, sizeof key);
    gen = c->gen;
    nnop__mutex_unlock(c->mu);
    if (st != NNOP_OK)
        return NNOP_OK; /* nothing to do */
    lock_path = (char *)malloc(strlen(path) + 6);
    if (!lock_path)
        return NNOP_ERR_OUT_OF_MEMORY;
    snprintf(lock_path, strlen(path) + 6, "%s.lock", path);
    st = nnop__file_lock_acquire(lock_path, &lock);
    if (st != NNOP_OK)
        set_msg(msg, msg_len, "cannot create or lock %s.lock", path);
    if (st == NNOP_OK)
        st = save_locked_file(c, path, cudnn, key, msg, msg_len);
    nnop__file_lock_release(lock);
    free(lock_path);
    nnop__mutex_lock(c->mu);
    if (st == NNOP_OK) {
        c->st.saves++;
        if (c->gen == gen)
            c->dirty = 0;
    }
    c->st.file_ns += nnop__monotonic_ns() - t0;
    nnop__mutex_unlock(c->mu);
    return st;
}

nnop_status nnop__cache_check_file(const char *path, uint64_t cudnn_version, const char *device_key,
                                   nnop__cache_report *rep)
{
    nnop__cache_report local;
    unsigned char *buf = NULL;
    size_t len = 0;
    int missing = 0;
    nnop_status st;
    if (!rep)
        rep = &local;
    memset(rep, 0, sizeof *rep);
    if (!path)
        return NNOP_ERR_INVALID_ARGUMENT;
    st = nnop__cache_read_file(path, &buf, &len, &missing, NULL);
    if (st == NNOP_OK && buf)
        nnop__cache_parse(buf, len, cudnn_version, device_key, NULL, NULL, rep);
    rep->missing = missing;
    free(buf);
    return st != NNOP_OK ? st : rep->status;
}
