#!/usr/bin/env python3
"""make_verify_cache.py MODEL_DIR CACHE_ROOT REPO_ID: lay MODEL_DIR out as a Hugging Face cache
snapshot of REPO_ID (blobs hard-linked to the model's files, so no second copy and one page
cache), with the Hub's file listing saved beside it as `phikit pull` saves it
(trees/<commit>.json: *.safetensors as LFS with their sha256, other files by git blob sha1).
`phikit verify REPO_ID` then checks every byte against that listing, as for a pulled model.
Idempotent: an existing snapshot of the same files is kept. Standard library only."""
import hashlib
import json
import os
import sys


def digest(path, algorithm, prefix=b""):
    h = hashlib.new(algorithm)
    h.update(prefix)
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


def main():
    model, root, repo_id = sys.argv[1:4]
    names = sorted(n for n in os.listdir(model)
                   if not n.startswith(".") and os.path.isfile(os.path.join(model, n)))
    stamp = json.dumps({n: os.stat(os.path.join(model, n)).st_mtime_ns for n in names})
    commit = hashlib.sha1(stamp.encode()).hexdigest()
    repo = os.path.join(root, "models--" + repo_id.replace("/", "--"))
    listing_path = os.path.join(repo, "trees", commit + ".json")
    if os.path.exists(listing_path):
        return
    for sub in ("blobs", "snapshots/" + commit, "refs", "trees"):
        os.makedirs(os.path.join(repo, sub), exist_ok=True)
    files = {}
    for name in names:
        path = os.path.join(model, name)
        size = os.path.getsize(path)
        if name.endswith(".safetensors"):
            blob = digest(path, "sha256")
            files[name] = {"size": size, "blob_id": "0" * 40, "lfs_sha256": blob, "lfs_size": size}
        else:
            blob = digest(path, "sha1", b"blob %d\0" % size)
            files[name] = {"size": size, "blob_id": blob}
        target = os.path.join(repo, "blobs", blob)
        if not os.path.exists(target):
            os.link(path, target)
        link = os.path.join(repo, "snapshots", commit, name)
        if not os.path.lexists(link):
            os.symlink("../../blobs/" + blob, link)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(commit)
    with open(listing_path, "w") as f:
        json.dump({"format_version": 1, "files": files}, f, indent=1)


if __name__ == "__main__":
    main()
