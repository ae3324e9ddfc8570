#!/usr/bin/python3
"""Reference resizes for io/images/resize.c (tests/test_idx.c): torch's
interpolate(mode="bilinear", antialias=True, align_corners=False) on
float images, and Pillow's Image.resize(BILINEAR) on 8-bit ones (what
torchvision's Resize does to Fashion-MNIST's PIL images in d2l); and,
beside the file, flat.jpg: 8 × 8 of grey 100 for picture.c's JPEG path.

Run with Debian's /usr/bin/python3 (python3-torch, python3-pil):
    /usr/bin/python3 scripts/gen_resize_ref.py tests/ref/resize/resize_ref.json
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from PIL import Image

CASES = [(2, 2, 4, 4), (5, 7, 9, 12), (28, 28, 96, 96), (45, 60, 28, 28), (28, 28, 14, 14),
         (30, 8, 7, 21)]


def main(path):
    g = torch.Generator().manual_seed(11)
    out = []
    for sh, sw, dh, dw in CASES:
        src = torch.randint(0, 256, (sh, sw), generator=g).to(torch.uint8)
        f = F.interpolate(src.float()[None, None], size=(dh, dw), mode="bilinear",
                          align_corners=False, antialias=True)[0, 0]
        pil = Image.frombytes("L", (sw, sh), bytes(src.flatten().tolist()))
        p = pil.resize((dw, dh), Image.BILINEAR)
        out.append({"sh": sh, "sw": sw, "dh": dh, "dw": dw, "src": src.flatten().tolist(),
                    "torch": [round(v, 6) for v in f.flatten().tolist()],
                    "pil": list(p.tobytes())})
    with open(path, "w") as fh:
        json.dump({"generator": "scripts/gen_resize_ref.py", "cases": out}, fh)
        fh.write("\n")
    Image.new("RGB", (8, 8), (100, 100, 100)).save(os.path.join(os.path.dirname(path),
                                                                "flat.jpg"), quality=95)


if __name__ == "__main__":
    main(sys.argv[1])
