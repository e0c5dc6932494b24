"""torch_conv_special.py: whether PyTorch's GPU convolutions keep IEEE rules for NaN and
infinite inputs, on the shapes where nnop's fp16/bf16 cuDNN convs did not (difftest --special,
2026-12-04): every k-th input element NaN, +inf, -inf in turn, against float64 on the CPU;
prints the elements whose NaN/inf status differs. nnop.h's "Numbers" paragraph cites it.
Run by tools/gpu_run.sh tests; it informs, it does not gate."""
import torch
cfgs = [  # name, dtype, cl, x shape, w shape, pad, stride, dil, groups, every
 ("a0f4", torch.float16, 1, (1,2,16,7), (8,2,2,7), (3,0), (1,2), (2,1), 1, 27),
 ("5587", torch.float16, 1, (2,3,9,5), (32,3,5,2), (4,1), (1,1), (2,1), 1, 26),
 ("6422", torch.float16, 0, (2,11,1,8), (24,11,2,7), (3,8), (1,2), (1,1), 1, 25),
 ("bbe4", torch.float16, 1, (2,3,16,5), (3,3,3,2), (1,3), (2,2), (3,3), 1, 19),
 ("fddb", torch.float16, 1, (3,8,1,13), (4,8,3,3), (1,0), (2,1), (1,3), 1, 24),
 ("5881", torch.bfloat16, 1, (2,1,4,4), (16,1,7,5), (2,5), (1,1), (1,1), 1, 17),
 ("cfd7", torch.bfloat16, 1, (3,32,1,4), (16,2,7,5), (3,6), (1,3), (1,3), 16, 9),
 ("resnet3x3", torch.float16, 1, (2,64,14,14), (64,64,3,3), (1,1), (1,1), (1,1), 1, 37),
 ("resnet1x1", torch.float16, 1, (2,64,14,14), (256,64,1,1), (0,0), (1,1), (1,1), 1, 37),
 ("f32_a0f4", torch.float32, 1, (1,2,16,7), (8,2,2,7), (3,0), (1,2), (2,1), 1, 27),
]
def specials(x, every):
    f = x.flatten()
    for j, i in enumerate(range(0, f.numel(), every)):
        f[i] = [float('nan'), float('inf'), float('-inf')][j % 3]
    return f.view_as(x)
torch.manual_seed(0)
torch.backends.cudnn.allow_tf32 = False
print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())
for bench in (False, True):
    torch.backends.cudnn.benchmark = bench
    for name, dt, cl, xs, ws, pad, st, dil, g, every in cfgs:
        x = specials(torch.randn(xs), every).to(dt)
        w = (torch.randn(ws) * 0.3).to(dt)
        ref = torch.nn.functional.conv2d(x.double(), w.double(), None, st, pad, dil, g)
        xg, wg = x.cuda(), w.cuda()
        if cl:
            xg = xg.to(memory_format=torch.channels_last); wg = wg.to(memory_format=torch.channels_last)
        y = torch.nn.functional.conv2d(xg, wg, None, st, pad, dil, g).double().cpu()
        refr = ref.to(dt).double()
        def cls(t): return torch.where(torch.isnan(t), 3, torch.where(torch.isposinf(t), 1, torch.where(torch.isneginf(t), 2, 0)))
        mism = (cls(y) != cls(refr))
        n = int(mism.sum())
        ex = ""
        if n:
            i = mism.nonzero()[0].tolist()
            ex = f" e.g. at {i}: got {y[tuple(i)].item()} want {refr[tuple(i)].item()}"
        print(f"benchmark={int(bench)} {name:10s} {str(dt):15s} cl={cl}: {n} of {y.numel()} NaN/inf mismatches{ex}")
