/* header_c.c: nnop.h must compile alone as strict C11. */
#include "nnop/nnop.h"

int nnop_header_c_probe(void);

int nnop_header_c_probe(void)
{
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 1, 8, 4, 4);
    return d.ndim;
}
