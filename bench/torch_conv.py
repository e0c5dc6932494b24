"""torch_conv.py: the PyTorch peer of bench_conv.c: fp16 channels-last conv (alone), eager
conv+bias+relu and torch.cudnn_convolution_relu on the ResNet-50 layer shapes; CUDA events
around 100 back-to-back calls rotating 8 input sets, median of 5."""
import torch
import torch.nn.functional as F

LAYERS = [
    (32, 3, 224, 224, 64, 7, 2, 3), (32, 64, 56, 56, 64, 1, 1, 0),
    (32, 64, 56, 56, 64, 3, 1, 1), (32, 64, 56, 56, 256, 1, 1, 0),
    (32, 128, 28, 28, 128, 3, 1, 1), (32, 256, 14, 14, 256, 3, 1, 1),
    (32, 1024, 14, 14, 256, 1, 1, 0), (32, 512, 7, 7, 512, 3, 1, 1),
    (1, 64, 56, 56, 64, 3, 1, 1), (1, 512, 7, 7, 512, 3, 1, 1),
]
SETS, CALLS, REPS = 8, 100, 5


def per_call_us(fn, xs):
    for i in range(2 * SETS):
        fn(xs[i % SETS])
    torch.cuda.synchronize()
    times = []
    for _ in range(REPS):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for i in range(CALLS):
            fn(xs[i % SETS])
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0 / CALLS)
    return sorted(times)[REPS // 2]


def main():
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(),
          torch.cuda.get_device_name(0))
    with torch.inference_mode():
        for (n, c, h, w, k, r, s, p) in LAYERS:
            xs = [torch.randn(n, c, h, w, device=dev, dtype=torch.half)
                  .to(memory_format=torch.channels_last) for _ in range(SETS)]
            wt = (torch.randn(k, c, r, r, device=dev, dtype=torch.half) * 0.05) \
                .to(memory_format=torch.channels_last)
            b = torch.randn(k, device=dev, dtype=torch.half)
            conv = per_call_us(lambda x: F.conv2d(x, wt, None, s, p), xs)
            eager = per_call_us(lambda x: torch.relu(F.conv2d(x, wt, b, s, p)), xs)
            fused = per_call_us(
                lambda x: torch.cudnn_convolution_relu(x, wt, b, (s, s), (p, p), (1, 1), 1), xs)
            print(f"TORCH {n},{c},{h},{w} -> {k}, {r}x{r}, s{s} | conv {conv:.1f} | "
                  f"eager {eager:.1f} | cudnn_relu {fused:.1f}", flush=True)


if __name__ == "__main__":
    main()
