"""torch_conv_special.py: whether PyTorch's GPU convolutions keep IEEE rules for NaN and
infinite inputs, on the shapes where nnop's fp16/bf16 cuDNN convs did not (difftest --special,
2026-12-04): every k-th input element NaN, +inf, -inf in turn, against float64 on the CPU;
prints the elements whose NaN/inf status differs. nnop.h's "Numbers" paragraph cites it.
Run by tools/gpu_test.sh tests; it informs, it does not gate."""
import torch
import torch.nn.functional as F

# name (the difftest case it came from), dtype, channels-last, x shape, w shape, pad, stride,
# dilation, groups, every k-th input element special
CASES = [
    ("a0f4", torch.float16, 1, (1, 2, 16, 7), (8, 2, 2, 7), (3, 0), (1, 2), (2, 1), 1, 27),
    ("5587", torch.float16, 1, (2, 3, 9, 5), (32, 3, 5, 2), (4, 1), (1, 1), (2, 1), 1, 26),
    ("6422", torch.float16, 0, (2, 11, 1, 8), (24, 11, 2, 7), (3, 8), (1, 2), (1, 1), 1, 25),
    ("bbe4", torch.float16, 1, (2, 3, 16, 5), (3, 3, 3, 2), (1, 3), (2, 2), (3, 3), 1, 19),
    ("fddb", torch.float16, 1, (3, 8, 1, 13), (4, 8, 3, 3), (1, 0), (2, 1), (1, 3), 1, 24),
    ("5881", torch.bfloat16, 1, (2, 1, 4, 4), (16, 1, 7, 5), (2, 5), (1, 1), (1, 1), 1, 17),
    ("cfd7", torch.bfloat16, 1, (3, 32, 1, 4), (16, 2, 7, 5), (3, 6), (1, 3), (1, 3), 16, 9),
    ("resnet3x3", torch.float16, 1, (2, 64, 14, 14), (64, 64, 3, 3), (1, 1), (1, 1), (1, 1), 1, 37),
    ("resnet1x1", torch.float16, 1, (2, 64, 14, 14), (256, 64, 1, 1), (0, 0), (1, 1), (1, 1), 1, 37),
    ("f32_a0f4", torch.float32, 1, (1, 2, 16, 7), (8, 2, 2, 7), (3, 0), (1, 2), (2, 1), 1, 27),
]


def with_specials(x, every):
    """x with every `every`-th element NaN, +inf, -inf in turn (difftest's dts_specials)."""
    flat = x.flatten()
    for j, i in enumerate(range(0, flat.numel(), every)):
        flat[i] = [float("nan"), float("inf"), float("-inf")][j % 3]
    return flat.view_as(x)


def status(t):
    """0 finite, 1 +inf, 2 -inf, 3 NaN, per element."""
    return torch.where(torch.isnan(t), 3,
                       torch.where(torch.isposinf(t), 1, torch.where(torch.isneginf(t), 2, 0)))


def check(name, dt, cl, xs, ws, pad, stride, dil, groups, every, bench):
    x = with_specials(torch.randn(xs), every).to(dt)
    w = (torch.randn(ws) * 0.3).to(dt)
    want = F.conv2d(x.double(), w.double(), None, stride, pad, dil, groups).to(dt).double()
    xg, wg = x.cuda(), w.cuda()
    if cl:
        xg = xg.to(memory_format=torch.channels_last)
        wg = wg.to(memory_format=torch.channels_last)
    got = F.conv2d(xg, wg, None, stride, pad, dil, groups).double().cpu()
    differ = status(got) != status(want)
    n = int(differ.sum())
    example = ""
    if n:
        at = tuple(differ.nonzero()[0].tolist())
        example = f" e.g. at {list(at)}: got {got[at].item()} want {want[at].item()}"
    print(f"benchmark={int(bench)} {name:10s} {str(dt):15s} cl={cl}: "
          f"{n} of {got.numel()} NaN/inf mismatches{example}")


def main():
    torch.manual_seed(0)
    torch.backends.cudnn.allow_tf32 = False
    print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())
    for bench in (False, True):
        torch.backends.cudnn.benchmark = bench
        for case in CASES:
            check(*case, bench)


if __name__ == "__main__":
    main()
