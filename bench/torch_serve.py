"""torch_serve.py: the PyTorch peer of nnop-bench --serve (issue 49). T threads send requests of
random batch sizes to one torchvision ResNet-50 (random weights, fp16 channels-last, inference
mode, weights shared by every thread), each thread on a CUDA stream of its own with a CUDA
graph per request size captured for it ahead of time (what a C++ server does with PyTorch
when it wants CUDA-graph latency: torch.compile's CUDA graphs are not made for many threads),
each request waited for before the next. Request sizes are drawn uniformly from the list, a
seeded sequence per thread. Prints images/s, p50 and p99 request latency and the peak device
memory, then each size alone (median of 21 after 3 warm-ups): the numbers nnop-bench prints
for its two ways. Every graph's output is checked finite before the timing starts.
  usage: python3 bench/torch_serve.py [--threads 8] [--batches 8] [--requests 64]"""
import argparse
import random
import threading
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--batches", default="8")
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    sizes = [int(v) for v in a.batches.split(",")]
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().eval().half().to("cuda", memory_format=torch.channels_last)
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    workers = []
    with torch.inference_mode():
        for t in range(a.threads):  # graphs captured one thread after the other, on its stream
            stream = torch.cuda.Stream()
            graphs = {}
            with torch.cuda.stream(stream):
                for b in sizes:
                    x = torch.randn(b, 3, 224, 224, device="cuda", dtype=torch.half).to(
                        memory_format=torch.channels_last)
                    for _ in range(3):  # warm-up on the stream (cuDNN's choice, the allocator)
                        model(x)
                    stream.synchronize()
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g, stream=stream):
                        y = model(x)
                    g.replay()
                    stream.synchronize()
                    if not torch.isfinite(y).all():
                        raise SystemExit(f"torch_serve: batch {b}: the output is not finite")
                    graphs[b] = g
            rng = random.Random(a.seed * 1000003 + t + 1)
            workers.append({"stream": stream, "graphs": graphs,
                            "sizes": [rng.choice(sizes) for _ in range(a.requests)],
                            "lat": [], "images": 0})

    def serve(w):
        for b in w["sizes"]:
            t0 = time.perf_counter()
            w["graphs"][b].replay()
            w["stream"].synchronize()
            w["lat"].append((time.perf_counter() - t0) * 1e6)
            w["images"] += b

    threads = [threading.Thread(target=serve, args=(w,)) for w in workers]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t0
    lat = sorted(v for w in workers for v in w["lat"])
    images = sum(w["images"] for w in workers)
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, cuDNN "
          f"{torch.backends.cudnn.version()}")
    print(f"torch serve: {a.threads} threads x {a.requests} requests of batch {a.batches}: "
          f"{images / wall:.1f} images/s, p50 {lat[len(lat) // 2]:.1f} us, "
          f"p99 {lat[int((len(lat) - 1) * 0.99)]:.1f} us, {peak:.1f} MiB past the weights")
    w = workers[0]
    for b in sizes:
        for _ in range(3):
            w["graphs"][b].replay()
        w["stream"].synchronize()
        times = []
        for _ in range(21):
            t0 = time.perf_counter()
            w["graphs"][b].replay()
            w["stream"].synchronize()
            times.append((time.perf_counter() - t0) * 1e6)
        print(f"torch serve batch {b} alone: {sorted(times)[10]:.1f} us")


if __name__ == "__main__":
    main()
