"""torch_resnet.py: the PyTorch peer of bench_resnet.c (and of nnop-bench --net for the
networks of examples/nets): torchvision ResNet-50, or with --model one of
mobilenet_v3_large, efficientnet_b0, convnext_tiny, unet (tools/export_vision_net.py's
networks), random weights, fp16 channels-last at 224x224, inference mode; eager, eager
replayed as a CUDA graph, and torch.compile(mode="reduce-overhead") (CUDA graphs too: the
strongest PyTorch figure); time per batch with CUDA events around 20 back-to-back calls,
median of 5 (5 warm-up calls).
  usage: python3 bench/torch_resnet.py [--model NAME] [BATCH ...]   (default 1 32 256)"""
import os
import sys

import torch
import torchvision

ITERS, REPS = 20, 5


def per_batch_ms(fn):
    for _ in range(5):
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


def load_model(name):
    if name == "resnet50":
        return torchvision.models.resnet50()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    import export_vision_net  # the networks exactly as the examples export them
    return export_vision_net.build(name)


def main():
    args = sys.argv[1:]
    name = "resnet50"
    if args[:1] == ["--model"]:
        name, args = args[1], args[2:]
    torch.backends.cudnn.benchmark = True
    model = load_model(name).half().cuda().eval().to(memory_format=torch.channels_last)
    tag = "RESNET50" if name == "resnet50" else "NET " + name
    with torch.inference_mode():
        for n in [int(b) for b in args] or [1, 32, 256]:
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
            torch._dynamo.reset()
            compiled = torch.compile(model, mode="reduce-overhead")
            reduce_overhead = per_batch_ms(lambda: compiled(x))
            print(f"TORCH_{tag} batch {n} | eager {eager:.3f} ms | cuda_graph {graphed:.3f} ms "
                  f"| compile_reduce_overhead {reduce_overhead:.3f} ms "
                  f"| {n * 1000.0 / reduce_overhead:.0f} img/s (reduce-overhead)", flush=True)


if __name__ == "__main__":
    main()
