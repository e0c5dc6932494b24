// header_cxx.cpp: nnop.h must compile alone as C++ with C linkage.
#include "nnop/nnop.h"

int nnop_header_cxx_probe();

int nnop_header_cxx_probe()
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F32, NNOP_NCHW, 1, 3, 2, 2);
    nnop_status (*create)(const nnop_context_options *, nnop_context **) = nnop_context_create;
    return d.ndim + (create != 0);
}
