#!/usr/bin/env python3
"""gen_conv_chains.py: a problem file of random conv chains for `nnop-bench --check`.

Every dtype and layout, strides, dilations, groups (depthwise too), per-dimension padding,
kernels larger than the input, 1x1 images, odd sizes, and a post-op chain drawn from bias,
bn, add and the activations. Seeded, so the committed file can be regenerated exactly:
    python3 tools/gen_conv_chains.py --seed 16 --count 200 > bench/problems/random_conv_chains.txt
"""
import argparse
import random

ACTS = ["relu", "relu6", "leaky_relu:0.1", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu",
        "elu:0.5", "clamp:-0.5:0.5", "identity"]


def out_size(size, pad, dil, k, stride):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def pick_dim(rng):
    """(input size, kernel, pad, stride, dilation) of one spatial dimension, output >= 1."""
    while True:
        size = rng.choice([1, 1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 28])
        k = rng.choice([1, 1, 2, 3, 3, 3, 5, 7])
        dil = rng.choice([1, 1, 1, 2, 3])
        stride = rng.choice([1, 1, 2, 3])
        pad = rng.choice([0, 0, 1, 2, 3])
        if out_size(size, pad, dil, k, stride) >= 1:
            return size, k, pad, stride, dil


def channels_and_groups(rng):
    kind = rng.random()
    if kind < 0.2:  # depthwise, sometimes with a channel multiplier
        c = rng.choice([1, 3, 8, 16, 32])
        return c, c * rng.choice([1, 1, 2]), c
    g = rng.choice([1, 1, 1, 2, 3, 4]) if kind < 0.6 else 1
    c = g * rng.choice([1, 2, 3, 4, 8, 16])
    k = g * rng.choice([1, 2, 3, 4, 8, 16])
    return c, k, g


def pair(prefix, a, b, default):
    if a == b:
        return "" if a == default else f" {prefix}{a}"
    return f" {prefix}{a}x{b}"


def chain(rng, i):
    n = rng.choice([1, 1, 2, 3, 4])
    c, k, g = channels_and_groups(rng)
    h, r, ph, sh, dh = pick_dim(rng)
    w, s, pw, sw, dw = pick_dim(rng) if rng.random() < 0.6 else (h, r, ph, sh, dh)
    post = [p for p in ("bias", "bn", "add") if rng.random() < 0.5]
    if rng.random() < 0.8:
        post.append(rng.choice(ACTS))
    dt = rng.choice(["f32", "f16", "bf16"])
    layout = rng.choice(["nchw", "nhwc"])
    line = f"conv n{n}c{c}h{h}w{w}k{k}r{r}s{s}"
    line += pair("p", ph, pw, 0) + pair("st", sh, sw, 1) + pair("dl", dh, dw, 1)
    line += f" g{g}" if g > 1 else ""
    line += f" dt={dt} layout={layout}"
    line += f" post={','.join(post)}" if post else ""
    return line + f" name=chain{i:03d}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--count", type=int, default=200)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"# python3 tools/gen_conv_chains.py --seed {args.seed} --count {args.count}")
    print("# nnop-bench --check -f bench/problems/random_conv_chains.txt (GPU: --backend cuda)")
    for i in range(args.count):
        print(chain(rng, i))


if __name__ == "__main__":
    main()
