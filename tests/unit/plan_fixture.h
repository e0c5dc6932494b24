/* plan_fixture.h: for unit tests that ask the CUDA backend's implementation-list entries about
 * a partition without a GPU. A graph is compiled on the CPU backend, whose partitions are the
 * ones a CUDA compile builds its steps from. The constants are zero-filled, and their host
 * data is lent back to the plan's graph, as during a CUDA compile. Include after nnop_test.h
 * and cuda/impl/impl.h. */
#ifndef NNOP_TEST_PLAN_FIXTURE_H
#define NNOP_TEST_PLAN_FIXTURE_H

#include <stdlib.h>
#include <string.h>

typedef struct plan_fixture {
    nnop_context *ctx;
    nnop_graph *g;
    nnop_plan *p;
} plan_fixture;

/* A CPU context and an empty graph in f. */
static inline void fixture_begin(plan_fixture *f)
{
    memset(f, 0, sizeof *f);
    f->ctx = nnop_test_cpu_context();
    assert_int_equal(nnop_graph_create(f->ctx, &f->g), NNOP_OK);
}

/* A constant of d, all zero bytes. */
static inline nnop_value fixture_zeros(plan_fixture *f, const char *name, const nnop_tensor_desc *d)
{
    void *data = calloc(nnop_tensor_bytes(d), 1);
    nnop_value v;
    assert_non_null(data);
    v = nnop_constant(f->g, name, d, data);
    free(data);
    return v;
}

/* Compile f->g into f->p on the CPU backend; the plan's graph borrows the constants' host
 * data back, as during a CUDA compile. */
static inline void fixture_compile(plan_fixture *f)
{
    int32_t i;
    assert_int_equal(nnop_graph_compile(f->g, NULL, &f->p), NNOP_OK);
    for (i = 0; i < f->g->n_values; i++)
        f->p->g->values[i].data = f->g->values[i].data;
}

/* The constants' data dropped from the plan's graph again (as after a compile), then all of
 * f destroyed. */
static inline void fixture_end(plan_fixture *f)
{
    int32_t i;
    for (i = 0; f->p && i < f->p->g->n_values; i++)
        f->p->g->values[i].data = NULL;
    nnop_plan_destroy(f->p);
    nnop_graph_destroy(f->g);
    nnop_context_destroy(f->ctx);
}

/* An entry's try of partition part, as compile.c starts it. */
static inline nnop__impl_try fixture_try(const plan_fixture *f, int32_t part)
{
    nnop__impl_try t;
    memset(&t, 0, sizeof t);
    t.part = part;
    t.first = f->p->parts[part].first;
    t.count = f->p->parts[part].count;
    return t;
}

#endif /* NNOP_TEST_PLAN_FIXTURE_H */
