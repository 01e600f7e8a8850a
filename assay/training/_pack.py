"""Pack a training mix as compact, pre-tokenised arrays for :mod:`assay.training._packed`.

Why: an accelerator machine trains the small cross-encoder in minutes, but it has no
network, no data and none of the project's dependencies, and what travels to it is
limited in size. The mix is built here (the same sources, licences and seeded
sampling as ``assay verifier train``), every distinct text is tokenised once with
the model's own tokenizer (no special tokens; twins share their premise), and the
arrays are written as one xz-compressed ``.npz``:

* ``tokens`` (uint16): the word-piece ids of every distinct text, concatenated;
* ``offsets`` (int64): where each text starts in ``tokens`` (one more than texts);
* ``premise``, ``hypothesis`` (uint32): each pair's texts; ``label`` (uint8:
  0 entailment, 1 neutral, 2 contradiction, 3 two-way "not entailment");
  ``source`` (uint8) into ``sources``, the names of the pairs' sources.

    python -m assay.training._pack --data ../shared/data --out pack.npz.xz \\
        --model assay/verifier/model --mix commercial --scale 4 --seed 22
"""

from __future__ import annotations

import argparse
import io
import json
import lzma
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.training._data import Pair

#: Texts tokenised per call of the tokenizer.
_CHUNK = 4096
#: Longest text kept, in word pieces: more never fits the model's window anyway.
MAX_TEXT_TOKENS = 512


def pack(pairs: Sequence[Pair], tokenizer: Any) -> dict[str, np.ndarray]:
    """The arrays described above, for ``pairs`` in their order."""
    index: dict[str, int] = {}
    for p in pairs:
        index.setdefault(p.premise, len(index))
        index.setdefault(p.hypothesis, len(index))
    texts = list(index)
    pieces: list[list[int]] = []
    for first in range(0, len(texts), _CHUNK):
        enc = tokenizer(texts[first : first + _CHUNK], add_special_tokens=False)
        pieces += [ids[:MAX_TEXT_TOKENS] for ids in enc["input_ids"]]
    if max((max(ids, default=0) for ids in pieces), default=0) >= 1 << 16:
        raise ValueError("a token id does not fit in uint16")
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(ids) for ids in pieces])
    tokens = np.fromiter((t for ids in pieces for t in ids), dtype=np.uint16, count=offsets[-1])
    sources = sorted({p.source for p in pairs})
    source_id = {name: i for i, name in enumerate(sources)}
    return {
        "tokens": tokens,
        "offsets": offsets,
        "premise": np.array([index[p.premise] for p in pairs], dtype=np.uint32),
        "hypothesis": np.array([index[p.hypothesis] for p in pairs], dtype=np.uint32),
        "label": np.array([p.label for p in pairs], dtype=np.uint8),
        "source": np.array([source_id[p.source] for p in pairs], dtype=np.uint8),
        "sources": np.array(sources),
    }


def write(arrays: dict[str, np.ndarray], path: Path) -> int:
    """Write ``arrays`` as an xz-compressed ``.npz``; returns the bytes written."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # pyright: ignore[reportArgumentType]
    data = lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME)
    path.write_bytes(data)
    return len(data)


def read(path: Path) -> dict[str, np.ndarray]:
    """The arrays :func:`write` wrote."""
    with np.load(io.BytesIO(lzma.decompress(path.read_bytes()))) as loaded:
        return {name: loaded[name] for name in loaded.files}


def main(argv: Sequence[str] | None = None) -> int:
    from transformers import AutoTokenizer

    from assay.training._train import TrainConfig, build_mix, mix_licences

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="its tokenizer is used")
    parser.add_argument("--mix", default="commercial")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    cfg = TrainConfig(
        data_root=args.data,
        out_dir=args.out.parent,
        base_model=args.model,
        scale=args.scale,
        commercial_safe=True,
        mix=args.mix,
        seed=args.seed,
    )
    pairs = build_mix(cfg, random.Random(args.seed))
    size = write(pack(pairs, AutoTokenizer.from_pretrained(str(args.model))), args.out)
    report = {
        "pairs": len(pairs),
        "bytes": size,
        "mix_name": args.mix,
        "scale": args.scale,
        "seed": args.seed,
        "commercial_safe": True,
        "licences": mix_licences(cfg),
        "mix": dict(Counter(p.source for p in pairs)),
    }
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
