/* nb_onnx.c: nnop-bench --onnx FILE: an ONNX model loaded with nnop_onnx (when nnop-bench is
 * built with it, NB_HAVE_ONNX), and ONNX's test data (input_<i>.pb, output_0.pb of a
 * test_data_set_<k> folder) as its inputs and the check's reference. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_run.h"

#ifdef NB_HAVE_ONNX
#include "nnop/nnop_onnx.h"
#endif

static void setf(char *err, size_t len, const char *fmt, ...) NB_PRINTF(3, 4);
static void setf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (err && len) {
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
}

int nb_have_onnx(void)
{
#ifdef NB_HAVE_ONNX
    return 1;
#else
    return 0;
#endif
}

nnop_status nb_onnx_graph(const nb_net *net, nnop_context *ctx, nnop_graph **out, char *err,
                          size_t len)
{
#ifdef NB_HAVE_ONNX
    nnop_onnx_options o;
    nnop_status s;
    nnop_onnx_options_init(&o);
    o.dtype = net->dt;
    o.layout = net->layout;
    o.batch = net->batch;
    s = nnop_onnx_load_file(ctx, net->onnx_path, &o, out);
    if (s != NNOP_OK)
        setf(err, len, "%s", nnop_onnx_last_error());
    return s;
#else
    (void)ctx;
    *out = NULL;
    setf(err, len,
         "%s: this nnop-bench was built without the ONNX importer nnop_onnx (it needs "
         "protobuf-c at configure: libprotobuf-c-dev and protobuf-c-compiler)",
         net->onnx_path);
    return NNOP_ERR_UNSUPPORTED;
#endif
}

#ifdef NB_HAVE_ONNX
/* Read dir/name into f32 row-major (*data: nnop_onnx_free). */
static int read_pb(const char *dir, const char *name, nnop_dtype t, nnop_tensor_desc *d,
                   void **data, char *err, size_t len)
{
    char path[1024];
    FILE *f;
    long n;
    void *bytes = NULL;
    int ok;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f) {
        setf(err, len, "cannot open %s", path);
        return -1;
    }
    ok = fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
         (bytes = malloc((size_t)n + 1)) != NULL && fread(bytes, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        free(bytes);
        setf(err, len, "cannot read %s", path);
        return -1;
    }
    if (nnop_onnx_tensor_read(bytes, (size_t)n, t, d, data, NULL, 0) != NNOP_OK) {
        setf(err, len, "%s: %s", path, nnop_onnx_last_error());
        free(bytes);
        return -1;
    }
    free(bytes);
    return 0;
}

static nnop_tensor_desc row_major(nnop_dtype t, const nnop_tensor_desc *d)
{
    nnop_tensor_desc r = *d;
    int i;
    r.dtype = t;
    for (i = d->ndim - 1; i >= 0; i--)
        r.strides[i] = i == d->ndim - 1 ? 1 : r.strides[i + 1] * r.dims[i + 1];
    return r;
}
#endif

void *nb_onnx_data_input(const char *dir, int i, const nnop_tensor_desc *d, char *err, size_t len)
{
#ifdef NB_HAVE_ONNX
    char name[64];
    nnop_tensor_desc pd;
    void *data, *out;
    int k, same;
    snprintf(name, sizeof name, "input_%d.pb", i);
    if (read_pb(dir, name, d->dtype, &pd, &data, err, len) != 0)
        return NULL;
    same = pd.ndim == d->ndim;
    for (k = 0; same && k < d->ndim; k++)
        same = pd.dims[k] == d->dims[k];
    if (!same) {
        char a[128] = "", b[128] = "";
        for (k = 0; k < pd.ndim && strlen(a) < 100; k++)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", k ? ", " : "",
                     (long long)pd.dims[k]);
        for (k = 0; k < d->ndim && strlen(b) < 100; k++)
            snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", k ? ", " : "",
                     (long long)d->dims[k]);
        setf(err, len, "%s/%s is [%s], the model's input %d [%s] (--batch sets a symbolic batch)",
             dir, name, a, i, b);
        nnop_onnx_free(data);
        return NULL;
    }
    out = malloc(nnop_tensor_bytes(d));
    if (!out || nnop_tensor_copy(&pd, data, d, out) != NNOP_OK) {
        setf(err, len, "%s/%s: %s", dir, name, out ? "copy failed" : "out of host memory");
        free(out);
        out = NULL;
    }
    nnop_onnx_free(data);
    return out;
#else
    (void)dir, (void)i, (void)d;
    setf(err, len, "ONNX test data: this nnop-bench was built without nnop_onnx");
    return NULL;
#endif
}

double *nb_onnx_data_output(const char *dir, int64_t *n, char *err, size_t len)
{
#ifdef NB_HAVE_ONNX
    nnop_tensor_desc d;
    void *data;
    double *y;
    *n = 0;
    if (read_pb(dir, "output_0.pb", NNOP_F32, &d, &data, err, len) != 0)
        return NULL;
    d = row_major(NNOP_F32, &d);
    y = nb_to_logical(&d, data);
    if (!y)
        setf(err, len, "reference: out of host memory");
    else
        *n = nnop_tensor_elements(&d);
    nnop_onnx_free(data);
    return y;
#else
    (void)dir;
    *n = 0;
    setf(err, len, "ONNX test data: this nnop-bench was built without nnop_onnx");
    return NULL;
#endif
}

int64_t nb_onnx_data_batch(const char *dir, char *err, size_t len)
{
#ifdef NB_HAVE_ONNX
    nnop_tensor_desc d;
    void *data;
    if (read_pb(dir, "input_0.pb", NNOP_F32, &d, &data, err, len) != 0)
        return -1;
    nnop_onnx_free(data);
    return d.dims[0];
#else
    (void)dir;
    setf(err, len, "ONNX test data: this nnop-bench was built without nnop_onnx");
    return -1;
#endif
}
