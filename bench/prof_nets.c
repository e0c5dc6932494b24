/* prof_nets.c: the networks of examples/nets (MobileNetV3-Large, EfficientNet-B0,
 * ConvNeXt-Tiny, the U-Net; their JSON with seeded random weights, fp16 channels-last) as a
 * small shared library for bench/profile_kernels.py --net, as prof_resnet.c is for ResNet-50,
 * with prof_init_net taking the graph file. */
#include "prof_common.h"
#include "vision_graph.h"

PROF_API int prof_init_net(const char *graph, int n, int size, int autotune, int cuda_graph);

/* The graph of file `graph` for n images of size x size into *g; its output's descriptor. */
static int build(const char *graph, int n, int size, nnop_graph *g, nnop_tensor_desc *yd)
{
    char err[512];
    cJSON *j = vision_graph_read(graph, err, sizeof err);
    nnop_tensor_desc xd = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, n, 3, size, size);
    nnop_value out;
    nnop_status st;
    if (!j)
        return prof_fail(graph, err);
    st = vision_graph_build(prof_ctx(), g, j, nnop_input(g, "image", &xd), NULL, NNOP_F16,
                            NNOP_NHWC, 20261201u, &out, err, sizeof err);
    cJSON_Delete(j);
    if (st != NNOP_OK)
        return prof_fail(graph, err);
    if (nnop_output(g, out, "output") != NNOP_OK || nnop_value_desc(g, out, yd) != NNOP_OK)
        return prof_fail("output", NULL);
    return 0;
}

/* Build the network for batch n at size x size (autotune: time cuDNN's candidates;
 * cuda_graph: replay the plan as one CUDA graph) and fill the input with a constant; 0 on
 * success. */
PROF_API int prof_init_net(const char *graph, int n, int size, int autotune, int cuda_graph)
{
    nnop_graph *g = NULL;
    nnop_tensor_desc yd;
    if (prof_context(autotune) != 0)
        return 1;
    if (nnop_graph_create(prof_ctx(), &g) != NNOP_OK)
        return prof_fail("graph", NULL);
    if (build(graph, n, size, g, &yd) != 0) {
        nnop_graph_destroy(g);
        return 1;
    }
    return prof_compile(g, cuda_graph, (size_t)n * 3 * (size_t)size * (size_t)size * 2,
                        nnop_tensor_bytes(&yd));
}
