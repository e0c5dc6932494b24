"""bn_calibrate.py: batch-norm running statistics of a randomly initialised model, calibrated
on seeded random images (cumulative average), so that activations stay in a realistic range;
shared by export_resnet50.py and export_vision_net.py."""
import torch
import torch.nn as nn


def calibrate_batchnorm(model, seed, batches, size, batch=8):
    """Reset every BatchNorm2d's statistics and average them over `batches` seeded random
    batches of `batch` x 3 x `size` x `size` images; leaves the model in eval mode."""
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.reset_running_stats()
            mod.momentum = None
    gen = torch.Generator().manual_seed(seed)
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch, 3, size, size, generator=gen))
    return model.eval()
