"""torch_resnet.py: the PyTorch peer of bench_resnet.c: torchvision ResNet-50 (random
weights), fp16 channels-last, inference mode; eager and eager replayed as a CUDA graph; time
per batch with CUDA events around 20 back-to-back calls, median of 5."""
import torch
import torchvision

ITERS, REPS = 20, 5


def per_batch_ms(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPS):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(ITERS):
            fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / ITERS)
    return sorted(times)[REPS // 2]


def main():
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().half().cuda().eval().to(memory_format=torch.channels_last)
    with torch.inference_mode():
        for n in (1, 32):
            x = torch.randn(n, 3, 224, 224, device="cuda", dtype=torch.half) \
                .to(memory_format=torch.channels_last)
            eager = per_batch_ms(lambda: model(x))
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                model(x)
            graphed = per_batch_ms(g.replay)
            print(f"TORCH_RESNET50 batch {n} | eager {eager:.3f} ms | cuda_graph {graphed:.3f} ms "
                  f"| {n * 1000.0 / graphed:.0f} img/s (graph)", flush=True)


if __name__ == "__main__":
    main()
