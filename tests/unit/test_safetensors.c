/* test_safetensors.c: the examples' safetensors reader accepts the bundled weights and rejects
 * every kind of bad file with a status and a message that names the problem (and the tensor).
 * Bad files are made from the bundled lenet weights in a temporary folder. */
#include "nnop_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef NNOP_HAVE_EXAMPLES_SUPPORT

#include <cjson/cJSON.h>

#include "mnist.h"
#include "safetensors.h"

#define GOOD_FILE NNOP_EXAMPLES_DIR "/mnist/lenet.safetensors"

static char *g_header;        /* the good header, re-printed unformatted by cJSON */
static unsigned char *g_data; /* its data region */
static size_t g_data_bytes;
static char g_err[SAFETENSORS_ERROR_LEN];
static unsigned g_counter;

static unsigned char *read_whole(const char *path, size_t *size)
{
    unsigned char *buf = nnop_test_read_file(path, size);
    assert_non_null(buf);
    assert_true(*size > 8);
    return buf;
}

static int setup(void **state)
{
    size_t size, hlen = 0;
    unsigned char *file = read_whole(GOOD_FILE, &size);
    cJSON *root;
    int i;
    (void)state;
    for (i = 7; i >= 0; i--)
        hlen = (hlen << 8) | file[i];
    root = cJSON_ParseWithLength((const char *)file + 8, hlen);
    assert_non_null(root);
    g_header = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    assert_non_null(g_header);
    g_data_bytes = size - 8 - hlen;
    g_data = (unsigned char *)malloc(g_data_bytes);
    assert_non_null(g_data);
    memcpy(g_data, file + 8 + hlen, g_data_bytes);
    free(file);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cJSON_free(g_header);
    free(g_data);
    return 0;
}

static const char *temp_dir(void)
{
    const char *d = getenv("TMPDIR");
    if (!d || !*d)
        d = getenv("TEMP");
    return d && *d ? d : ".";
}

/* Write raw bytes to a new temporary file; returns its path (static buffer). */
static const char *write_temp(const void *bytes, size_t n)
{
    static char path[1024];
    FILE *fp;
    snprintf(path, sizeof path, "%s/nnop_test_safetensors_%lu_%u.safetensors", temp_dir(),
             (unsigned long)time(NULL), g_counter++);
    fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
    return path;
}

/* A file of header (length field = header_len_field, or its length when 0) + data, cut to
 * keep bytes (all when SIZE_MAX); opened with safetensors_open. */
static nnop_status open_made(const char *header, uint64_t header_len_field,
                             const unsigned char *data, size_t data_bytes, size_t keep,
                             safetensors_file **out)
{
    size_t hlen = strlen(header), total = 8 + hlen + data_bytes, i;
    unsigned char *buf = (unsigned char *)malloc(total);
    const char *path;
    nnop_status st;
    uint64_t field = header_len_field ? header_len_field : (uint64_t)hlen;
    assert_non_null(buf);
    for (i = 0; i < 8; i++)
        buf[i] = (unsigned char)(field >> (8 * i));
    memcpy(buf + 8, header, hlen);
    if (data_bytes)
        memcpy(buf + 8 + hlen, data, data_bytes);
    path = write_temp(buf, keep < total ? keep : total);
    free(buf);
    g_err[0] = '\0';
    st = safetensors_open(path, out, g_err, sizeof g_err);
    remove(path);
    return st;
}

/* The good header with the first occurrence of from replaced by to (from must occur). */
static char *edited(const char *from, const char *to)
{
    const char *at = strstr(g_header, from);
    size_t n = strlen(g_header) - strlen(from) + strlen(to) + 1, pre;
    char *s;
    assert_non_null(at);
    s = (char *)malloc(n);
    assert_non_null(s);
    pre = (size_t)(at - g_header);
    memcpy(s, g_header, pre);
    strcpy(s + pre, to);
    strcat(s, at + strlen(from));
    return s;
}

/* Expect a failure with status want and every needle (NULL-terminated list) in the message. */
static void expect_error(nnop_status got, safetensors_file *f, nnop_status want, ...)
{
    va_list ap;
    const char *needle;
    print_message("    %s: %s\n", nnop_status_string(got), g_err);
    assert_null(f);
    assert_int_equal(got, want);
    va_start(ap, want);
    while ((needle = va_arg(ap, const char *)) != NULL) {
        if (!strstr(g_err, needle)) {
            va_end(ap);
            fail_msg("message \"%s\" lacks \"%s\"", g_err, needle);
        }
    }
    va_end(ap);
}

static void expect_bad_header(const char *header, nnop_status want, const char *n1, const char *n2)
{
    safetensors_file *f = NULL;
    nnop_status st = open_made(header, 0, g_data, g_data_bytes, (size_t)-1, &f);
    expect_error(st, f, want, n1, n2, (const char *)NULL);
}

static void expect_bad_edit(const char *from, const char *to, nnop_status want, const char *n1,
                            const char *n2)
{
    char *h = edited(from, to);
    expect_bad_header(h, want, n1, n2);
    free(h);
}

/* ------------------------------------------------------------------------------ tests */
static void test_good_file(void **state)
{
    safetensors_file *f = NULL;
    const safetensors_tensor *t;
    int64_t shape[4] = {16, 1, 5, 5};
    float w[400];
    nnop_status st;
    (void)state;
    st = safetensors_open(GOOD_FILE, &f, g_err, sizeof g_err);
    if (st != NNOP_OK)
        fail_msg("%s", g_err);
    assert_int_equal(f->n_tensors, 8);
    t = safetensors_find(f, "conv1.weight");
    assert_non_null(t);
    assert_int_equal(t->dtype, NNOP_F32);
    assert_int_equal(t->ndim, 4);
    assert_int_equal(t->count, 400);
    assert_non_null(safetensors_metadata(f, "test_accuracy"));
    assert_null(safetensors_find(f, "nope"));
    assert_int_equal(safetensors_read_f32(f, "conv1.weight", 4, shape, w, g_err, sizeof g_err),
                     NNOP_OK);
    assert_true(w[0] == w[0]);
    safetensors_close(f);

    /* the same bytes re-assembled by the test are accepted too */
    st = open_made(g_header, 0, g_data, g_data_bytes, (size_t)-1, &f);
    if (st != NNOP_OK)
        fail_msg("%s", g_err);
    safetensors_close(f);
}

static void test_missing_file(void **state)
{
    safetensors_file *f = (safetensors_file *)&f;
    nnop_status st = safetensors_open("/nonexistent/dir/w.safetensors", &f, g_err, sizeof g_err);
    (void)state;
    expect_error(st, f, NNOP_ERR_IO, "cannot open", "/nonexistent/dir/w.safetensors",
                 (const char *)NULL);
}

static void test_truncated(void **state)
{
    safetensors_file *f = NULL;
    size_t hlen = strlen(g_header), full = 8 + hlen + g_data_bytes;
    nnop_status st;
    (void)state;
    /* cut in the data: the last tensor's bytes lie past the end */
    st = open_made(g_header, 0, g_data, g_data_bytes, full - 100, &f);
    expect_error(st, f, NNOP_ERR_FORMAT, "tensor 'fc2.", "outside the data region", "truncated",
                 (const char *)NULL);
    /* cut in the header */
    st = open_made(g_header, 0, g_data, g_data_bytes, 8 + hlen / 2, &f);
    expect_error(st, f, NNOP_ERR_FORMAT, "runs past the end of the file", "truncated",
                 (const char *)NULL);
    /* cut in the length field, and empty */
    st = open_made(g_header, 0, g_data, g_data_bytes, 5, &f);
    expect_error(st, f, NNOP_ERR_FORMAT, "too short", "5 bytes", (const char *)NULL);
    st = open_made(g_header, 0, g_data, g_data_bytes, 0, &f);
    expect_error(st, f, NNOP_ERR_FORMAT, "too short", "0 bytes", (const char *)NULL);
}

static void test_header_length(void **state)
{
    safetensors_file *f = NULL;
    nnop_status st;
    (void)state;
    st = open_made(g_header, (uint64_t)1 << 40, g_data, g_data_bytes, (size_t)-1, &f);
    expect_error(st, f, NNOP_ERR_FORMAT, "exceeds the limit", (const char *)NULL);
    /* a length field that ends inside the JSON: the header is cut */
    st = open_made(g_header, 40, g_data, g_data_bytes, (size_t)-1, &f);
    expect_error(st, f, NNOP_ERR_FORMAT, "JSON header", "invalid", (const char *)NULL);
}

static void test_json_errors(void **state)
{
    char *h;
    size_t n;
    (void)state;
    /* not JSON at all */
    expect_bad_header("this is not a safetensors file", NNOP_ERR_FORMAT, "does not start with",
                      NULL);
    /* a closing brace lost */
    h = edited("]}", "]");
    n = strlen(h);
    h[n - 1] = ' '; /* also drop the final brace */
    expect_bad_header(h, NNOP_ERR_FORMAT, "JSON header", "invalid near byte");
    free(h);
    /* a missing quote */
    expect_bad_edit("\"conv2.weight\"", "\"conv2.weight", NNOP_ERR_FORMAT, "invalid near byte",
                    NULL);
    /* garbage after the object */
    h = (char *)malloc(strlen(g_header) + 8);
    assert_non_null(h);
    strcpy(h, g_header);
    strcat(h, " {}");
    expect_bad_header(h, NNOP_ERR_FORMAT, "unexpected bytes after the JSON", NULL);
    free(h);
    /* a JSON value that is not an object */
    expect_bad_header("{\"a\":1", NNOP_ERR_FORMAT, "invalid", NULL);
    expect_bad_edit("\"conv1.bias\":{", "\"conv1.bias\":[{", NNOP_ERR_FORMAT, "invalid", NULL);
}

static void test_bad_entries(void **state)
{
    (void)state;
    expect_bad_edit("\"conv1.bias\":{\"dtype\":\"F32\",", "\"conv1.bias\":{", NNOP_ERR_FORMAT,
                    "conv1.bias", "lacks \"dtype\"");
    expect_bad_edit("\"shape\":[16,1,5,5],\"data_offsets\":[0,1600]", "\"shape\":[16,1,5,5]",
                    NNOP_ERR_FORMAT, "conv1.weight", "lacks \"data_offsets\"");
    expect_bad_edit("\"data_offsets\":[0,1600]", "\"data_offsets\":[0,1600,1664]", NNOP_ERR_FORMAT,
                    "conv1.weight", "[begin, end]");
    expect_bad_edit("\"data_offsets\":[0,1600]", "\"data_offsets\":[1600,0]", NNOP_ERR_FORMAT,
                    "conv1.weight", "end before they begin");
    expect_bad_edit(
            "\"conv1.bias\":{\"dtype\":\"F32\",\"shape\":[16],\"data_offsets\":[1600,1664]}",
            "\"conv1.bias\":7", NNOP_ERR_FORMAT, "conv1.bias", "not a JSON object");
    expect_bad_edit("[16,1,5,5]", "[16,1,-5,5]", NNOP_ERR_FORMAT, "conv1.weight",
                    "shape[2] is negative");
    expect_bad_edit("[16,1,5,5]", "[16,1,5.5,5]", NNOP_ERR_FORMAT, "conv1.weight",
                    "not an integer");
    expect_bad_edit("[16,1,5,5]", "[16,1,\"5\",5]", NNOP_ERR_FORMAT, "conv1.weight",
                    "not a number");
    expect_bad_edit("[16,1,5,5]", "[16,1,5,5,1,1,1,1,1]", NNOP_ERR_FORMAT, "conv1.weight",
                    "more than 8");
    expect_bad_edit("\"conv1.bias\":{", "\"conv1.weight\":{", NNOP_ERR_FORMAT, "conv1.weight",
                    "appears twice");
    expect_bad_edit("\"__metadata__\":{", "\"__metadata__\":{\"n\":3,", NNOP_ERR_FORMAT,
                    "__metadata__", "not a string");
}

static void test_wrong_shape_in_file(void **state)
{
    (void)state;
    /* the shape no longer matches the byte range */
    expect_bad_edit("[16,1,5,5]", "[16,1,5,4]", NNOP_ERR_FORMAT, "conv1.weight",
                    "hold 1600 bytes but shape [16, 1, 5, 4] of F32 needs 1280");
}

static void test_wrong_dtype(void **state)
{
    (void)state;
    expect_bad_edit("\"F32\"", "\"F64\"", NNOP_ERR_FORMAT, "conv1.weight",
                    "unsupported dtype 'F64'");
    expect_bad_edit("\"F32\"", "\"Q7\"", NNOP_ERR_FORMAT, "conv1.weight", "unknown dtype 'Q7'");
    expect_bad_edit("\"F32\"", "17", NNOP_ERR_FORMAT, "conv1.weight", "not a string");
    /* F16 with F32's bytes: the sizes disagree */
    expect_bad_edit("\"F32\"", "\"F16\"", NNOP_ERR_FORMAT, "conv1.weight", "of F16 needs 800");
}

static void test_offsets_out_of_file(void **state)
{
    (void)state;
    expect_bad_edit("\"data_offsets\":[0,1600]", "\"data_offsets\":[99998400,100000000]",
                    NNOP_ERR_FORMAT, "conv1.weight", "outside the data region");
    expect_bad_edit("\"data_offsets\":[0,1600]", "\"data_offsets\":[0,1e300]", NNOP_ERR_FORMAT,
                    "conv1.weight", "too large");
}

static void test_overlap_and_holes(void **state)
{
    (void)state;
    /* conv1.bias moved into conv1.weight's bytes */
    expect_bad_edit("\"data_offsets\":[1600,1664]", "\"data_offsets\":[1536,1600]", NNOP_ERR_FORMAT,
                    "overlaps", "conv1.weight");
    /* two tensors on the same bytes */
    expect_bad_edit("\"data_offsets\":[1600,1664]", "\"data_offsets\":[0,64]", NNOP_ERR_FORMAT,
                    "overlaps", "conv1.bias");
    {
        /* a data region with bytes that belong to no tensor */
        safetensors_file *f = NULL;
        unsigned char *more = (unsigned char *)calloc(g_data_bytes + 16, 1);
        nnop_status st;
        assert_non_null(more);
        memcpy(more, g_data, g_data_bytes);
        st = open_made(g_header, 0, more, g_data_bytes + 16, (size_t)-1, &f);
        free(more);
        expect_error(st, f, NNOP_ERR_FORMAT, "last 16 bytes", "belong to no tensor",
                     (const char *)NULL);
    }
}

/* Files that are valid safetensors but not the model's: the model build names the tensor. */
static void test_missing_tensor_and_wrong_shape_for_model(void **state)
{
    safetensors_file *f = NULL;
    nnop_context *ctx = nnop_test_cpu_context();
    nnop_graph *g = NULL;
    char *h;
    nnop_status st;
    (void)state;

    /* missing tensor: fc2.bias renamed */
    h = edited("\"fc2.bias\"", "\"fc2.bias.old\"");
    st = open_made(h, 0, g_data, g_data_bytes, (size_t)-1, &f);
    free(h);
    assert_int_equal(st, NNOP_OK);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    g_err[0] = '\0';
    st = mnist_build(g, ctx, MNIST_LENET, f, NNOP_F32, 4, g_err, sizeof g_err);
    print_message("    %s: %s\n", nnop_status_string(st), g_err);
    assert_int_equal(st, NNOP_ERR_FORMAT);
    assert_non_null(strstr(g_err, "tensor 'fc2.bias' is missing"));
    nnop_graph_destroy(g);
    safetensors_close(f);

    /* wrong shape for the model: conv1 with 4 output channels (a consistent file) */
    {
        static float w[4 * 25], b[4];
        const char *names[2] = {"conv1.weight", "conv1.bias"};
        const int ndims[2] = {4, 1};
        const int64_t s0[4] = {4, 1, 5, 5}, s1[1] = {4};
        const int64_t *shapes[2];
        const float *data[2];
        char path[1024];
        shapes[0] = s0, shapes[1] = s1, data[0] = w, data[1] = b;
        snprintf(path, sizeof path, "%s/nnop_test_safetensors_small_%u.safetensors", temp_dir(),
                 g_counter++);
        assert_int_equal(safetensors_write_f32(path, 2, names, ndims, shapes, data, 0, NULL, NULL,
                                               g_err, sizeof g_err),
                         NNOP_OK);
        st = safetensors_open(path, &f, g_err, sizeof g_err);
        remove(path);
        assert_int_equal(st, NNOP_OK);
        assert_int_equal(f->n_tensors, 2);
    }
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    st = mnist_build(g, ctx, MNIST_LENET, f, NNOP_F32, 4, g_err, sizeof g_err);
    print_message("    %s: %s\n", nnop_status_string(st), g_err);
    assert_int_equal(st, NNOP_ERR_SHAPE);
    assert_non_null(strstr(g_err,
                           "tensor 'conv1.weight' has shape [4, 1, 5, 5] in the file, the model "
                           "needs [16, 1, 5, 5]"));
    nnop_graph_destroy(g);
    safetensors_close(f);

    /* the resnet file is not a lenet */
    st = safetensors_open(NNOP_EXAMPLES_DIR "/mnist/resnet.safetensors", &f, g_err, sizeof g_err);
    assert_int_equal(st, NNOP_OK);
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    st = mnist_build(g, ctx, MNIST_LENET, f, NNOP_F32, 4, g_err, sizeof g_err);
    print_message("    %s: %s\n", nnop_status_string(st), g_err);
    assert_int_not_equal(st, NNOP_OK);
    assert_non_null(strstr(g_err, "conv1."));
    nnop_graph_destroy(g);
    safetensors_close(f);
    nnop_context_destroy(ctx);
}

/* Every prefix of a good file, and single corrupted bytes, fail cleanly (no crash). */
static void test_every_prefix_and_byte_flips(void **state)
{
    size_t hlen = strlen(g_header), total = 8 + hlen + g_data_bytes, cut, i;
    unsigned char *buf = (unsigned char *)malloc(total);
    int accepted = 0;
    (void)state;
    assert_non_null(buf);
    for (i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(buf + 8, g_header, hlen);
    memcpy(buf + 8 + hlen, g_data, g_data_bytes);
    /* every prefix through the header, then every 97th in the data */
    for (cut = 0; cut < total; cut += cut < 8 + hlen + 64 ? 1 : 97) {
        safetensors_file *f = NULL;
        nnop_status st = safetensors_parse(buf, cut, "prefix", &f, g_err, sizeof g_err);
        assert_int_not_equal(st, NNOP_OK);
        assert_null(f);
        assert_true(strlen(g_err) > 0);
    }
    for (i = 0; i < 8 + hlen; i++) {
        safetensors_file *f = NULL;
        unsigned char keep = buf[i];
        nnop_status st;
        buf[i] ^= 0x5a;
        st = safetensors_parse(buf, total, "flip", &f, g_err, sizeof g_err);
        if (st == NNOP_OK)
            accepted++;
        else
            assert_true(strlen(g_err) > 0);
        safetensors_close(f);
        buf[i] = keep;
    }
    print_message("    %d of %lu single-byte header corruptions still parse (e.g. in names)\n",
                  accepted, (unsigned long)(8 + hlen));
    free(buf);
}

static void test_write_read_roundtrip(void **state)
{
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[1] = {-0.5f};
    const char *names[2] = {"a \"quoted\" name", "b"};
    const char *mk[1] = {"k"}, *mv[1] = {"v"};
    const int ndims[2] = {2, 0};
    const int64_t sa[2] = {2, 3};
    const int64_t *shapes[2];
    const float *data[2];
    float got[6];
    char path[1024];
    safetensors_file *f = NULL;
    (void)state;
    shapes[0] = sa, shapes[1] = NULL, data[0] = a, data[1] = b;
    snprintf(path, sizeof path, "%s/nnop_test_safetensors_rt_%u.safetensors", temp_dir(),
             g_counter++);
    assert_int_equal(safetensors_write_f32(path, 2, names, ndims, shapes, data, 1, mk, mv, g_err,
                                           sizeof g_err),
                     NNOP_OK);
    assert_int_equal(safetensors_open(path, &f, g_err, sizeof g_err), NNOP_OK);
    remove(path);
    assert_string_equal(safetensors_metadata(f, "k"), "v");
    assert_int_equal(safetensors_read_f32(f, names[0], 2, sa, got, g_err, sizeof g_err), NNOP_OK);
    assert_memory_equal(got, a, sizeof a);
    assert_int_equal(safetensors_read_f32(f, "b", 0, NULL, got, g_err, sizeof g_err), NNOP_OK);
    assert_true(got[0] == -0.5f);
    safetensors_close(f);
}

/* F16 and BF16 tensors are read as float32 (bytes little-endian in the file). */
static void test_f16_bf16(void **state)
{
    static const char header[] = "{\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,6]},"
                                 "\"b\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[6,"
                                 "10]}}";
    /* F16 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800; BF16 1.0 = 0x3f80, -3.0 = 0xc040 */
    static const unsigned char data[10] = {0x00, 0x3c, 0x00, 0xc0, 0x00,
                                           0x38, 0x80, 0x3f, 0x40, 0xc0};
    const int64_t sh[1] = {3}, sb[2] = {1, 2};
    safetensors_file *f = NULL;
    float got[3];
    nnop_status st;
    (void)state;
    st = open_made(header, 0, data, sizeof data, (size_t)-1, &f);
    if (st != NNOP_OK)
        fail_msg("%s", g_err);
    assert_int_equal(safetensors_find(f, "h")->dtype, NNOP_F16);
    assert_int_equal(safetensors_find(f, "b")->dtype, NNOP_BF16);
    assert_int_equal(safetensors_read_f32(f, "h", 1, sh, got, g_err, sizeof g_err), NNOP_OK);
    assert_true(got[0] == 1.0f && got[1] == -2.0f && got[2] == 0.5f);
    assert_int_equal(safetensors_read_f32(f, "b", 2, sb, got, g_err, sizeof g_err), NNOP_OK);
    assert_true(got[0] == 1.0f && got[1] == -3.0f);
    /* the shape the caller needs differs: a clear message */
    assert_int_equal(safetensors_read_f32(f, "b", 1, sh, got, g_err, sizeof g_err), NNOP_ERR_SHAPE);
    assert_non_null(strstr(g_err, "tensor 'b' has shape [1, 2] in the file, the model needs [3]"));
    safetensors_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_good_file),
            cmocka_unit_test(test_f16_bf16),
            cmocka_unit_test(test_missing_file),
            cmocka_unit_test(test_truncated),
            cmocka_unit_test(test_header_length),
            cmocka_unit_test(test_json_errors),
            cmocka_unit_test(test_bad_entries),
            cmocka_unit_test(test_wrong_shape_in_file),
            cmocka_unit_test(test_wrong_dtype),
            cmocka_unit_test(test_offsets_out_of_file),
            cmocka_unit_test(test_overlap_and_holes),
            cmocka_unit_test(test_missing_tensor_and_wrong_shape_for_model),
            cmocka_unit_test(test_every_prefix_and_byte_flips),
            cmocka_unit_test(test_write_read_roundtrip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* built without the examples' support library (no cJSON) */

int main(void)
{
    return nnop_test_main_without_examples_support();
}

#endif
