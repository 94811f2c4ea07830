#!/usr/bin/env python3
"""Writes a multi-GB model repo for the pull benchmark, and the hub_server.py spec serving it.

  make_pull_repo.py OUT_DIR [--mb 2200]

Files, shaped like an MLX 4-bit Phi-3 repo: model-00001-of-00002.safetensors (55%) and
model-00002-of-00002.safetensors (45%) — random bytes, in LFS —, plus config.json,
tokenizer_config.json and a 2 MB tokenizer.json (not in LFS). Blocks are os.urandom data with a
per-block counter, so no two blocks repeat. Hashes are computed here (hashlib) and written into
OUT_DIR/spec.json, so the server starts at once. Skipped when OUT_DIR/.repo.json says the same
size was already written. Python standard library only.
"""

import argparse
import hashlib
import json
import os

REPO = "bench/phi-like-4bit"
COMMIT = "be0c4" * 8
BLOCK = 16 << 20


def write_random(path, size, seed):
    sha = hashlib.sha256()
    base = os.urandom(BLOCK)
    with open(path, "wb") as f:
        done, index = 0, 0
        while done < size:
            n = min(BLOCK, size - done)
            block = (seed * 1_000_003 + index).to_bytes(8, "little") + base[8:n]
            f.write(block[:n])
            sha.update(block[:n])
            done += n
            index += 1
    return sha.hexdigest()


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--mb", type=int, default=2200, help="total size in MB (10^6 bytes)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    marker = os.path.join(args.out, ".repo.json")
    if os.path.exists(marker):
        with open(marker) as f:
            if json.load(f).get("mb") == args.mb:
                return
    total = args.mb * 1_000_000
    shards = [int(total * 0.55), total - int(total * 0.55)]
    files = []
    for i, size in enumerate(shards, 1):
        name = f"model-0000{i}-of-00002.safetensors"
        path = os.path.join(args.out, name)
        sha = write_random(path, size, i)
        files.append({"path": name, "source": path, "lfs": True, "sha256": sha})
    small = {
        "config.json": json.dumps({"model_type": "phi3", "quantization": {"group_size": 64, "bits": 4}}),
        "tokenizer_config.json": json.dumps({"model_max_length": 4096}),
        "tokenizer.json": json.dumps({"vocab": {f"tok{i}": i for i in range(120_000)}}),
    }
    for name, text in small.items():
        data = text.encode()
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            f.write(data)
        files.append({"path": name, "source": path, "lfs": False, "blob_id": git_blob_sha1(data)})
    spec = {"repos": [{"id": REPO, "refs": {"main": COMMIT}, "commits": {COMMIT: {"files": files}}}]}
    with open(os.path.join(args.out, "spec.json"), "w") as f:
        json.dump(spec, f)
    with open(marker, "w") as f:
        json.dump({"mb": args.mb, "repo": REPO, "bytes": sum(os.path.getsize(x["source"]) for x in files)}, f)


if __name__ == "__main__":
    main()
