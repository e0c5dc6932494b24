"""torch_depthwise.py: the PyTorch peer of nnop-bench's depthwise problems (issue 12): depthwise
conv + bias + ReLU, eager, cudnn.benchmark on; us per call, CUDA events around 100 back-to-back
calls, median of 5 (10 warm-up calls).
  usage: python3 bench/torch_depthwise.py"""
import torch
import torch.nn.functional as F

SHAPES = [  # n, c, h, w, r, dtype, channels_last
    (1, 256, 74, 74, 3, torch.half, True),
    (4, 256, 38, 38, 3, torch.half, True),
    (1, 512, 14, 14, 3, torch.float, False),
    (1, 1152, 16, 16, 5, torch.half, True),
]


def main():
    torch.backends.cudnn.benchmark = True
    for n, c, h, w, r, dt, cl in SHAPES:
        fmt = torch.channels_last if cl else torch.contiguous_format
        x = torch.randn(n, c, h, w, device="cuda", dtype=dt).to(memory_format=fmt)
        wt = torch.randn(c, 1, r, r, device="cuda", dtype=dt).to(memory_format=fmt)
        b = torch.randn(c, device="cuda", dtype=dt)
        f = lambda: F.relu(F.conv2d(x, wt, b, padding=r // 2, groups=c))
        for _ in range(10):
            f()
        times = []
        for _ in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(100):
                f()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1000.0 / 100)
        print(f"TORCH_DEPTHWISE n{n} c{c} {h}x{w} {r}x{r} {str(dt)[6:]} "
              f"{'NHWC' if cl else 'NCHW'}: {sorted(times)[2]:.1f} us", flush=True)


if __name__ == "__main__":
    main()
