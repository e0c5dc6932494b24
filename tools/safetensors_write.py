"""safetensors_write.py: write float32 tensors in the safetensors format by hand (8-byte
little-endian header length, JSON header padded to 8 bytes, then the data), shared by
train_mnist.py and export_resnet50.py so the bundled files all have one layout."""
import json
import struct
import sys

import torch


def _have_numpy():
    try:
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, tensor), stored as F32; metadata: dict or None."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors:
        t = t.detach().to(torch.float32).contiguous().cpu()
        data = t.numpy().tobytes() if hasattr(t, "numpy") and _have_numpy() else \
            bytes(torch.flatten(t).view(torch.uint8).tolist())
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    js = json.dumps(header, separators=(",", ":")).encode("utf-8")
    js += b" " * ((8 - len(js) % 8) % 8)
    assert sys.byteorder == "little"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)
