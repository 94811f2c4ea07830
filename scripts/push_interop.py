#!/usr/bin/env python3
"""Checks that `phikit push` and huggingface_hub's upload_folder speak the same protocol to the
test Hub's write side (Tests/PhiHubTests/Server/hub_upload.py), so that stand-in is a fair one
(not part of `swift test`; needs huggingface_hub):

  1. huggingface_hub's create_repo + upload_folder push the bundled stories-260k model; its
     snapshot_download reads back the same bytes.
  2. `phikit push` of the same folder to that repo finds every file unchanged (its hashes agree
     with what huggingface_hub uploaded) and makes no commit.
  3. `phikit push` to a new repo (multipart parts of 256 KiB); huggingface_hub's
     snapshot_download of it gives the same bytes, and no request to the storage host carried
     the token.

Usage: scripts/push_interop.py [path/to/phikit]   (default .build/debug/phikit)
"""

import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "Tests/PhiHubTests/Server/hub_server.py")
MODEL = os.path.join(ROOT, "models/stories-260k")
FAILURES = []


def check(ok, what):
    print(("PASS  " if ok else "FAIL  ") + what)
    if not ok:
        FAILURES.append(what)


def same_files(a, b):
    names = sorted(n for n in os.listdir(b) if not n.startswith("."))
    return all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names)


def main():
    phikit = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug/phikit"))
    os.environ["HF_HUB_DISABLE_XET"] = "1"  # read when huggingface_hub is imported
    from huggingface_hub import HfApi, snapshot_download

    work = tempfile.mkdtemp(prefix="phikit-push-interop-")
    folder = os.path.join(work, "model")
    shutil.copytree(MODEL, folder)
    with open(os.path.join(folder, "adapter.bin"), "wb") as f:  # an object the Hub lacks
        f.write(os.urandom(600_000))
    with open(os.path.join(work, "spec.json"), "w") as f:
        json.dump({"repos": [], "multipart_chunk": 256 << 10}, f)
    with open(os.path.join(work, "faults.json"), "w") as f:
        f.write("[]")
    log = os.path.join(work, "log.jsonl")
    server = subprocess.Popen(
        [sys.executable, SERVER, "--spec", os.path.join(work, "spec.json"), "--faults",
         os.path.join(work, "faults.json"), "--log", log],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    hub = json.loads(server.stdout.readline())["hub"]
    env = dict(os.environ, HF_ENDPOINT=hub, HF_TOKEN="hf_write_interop", HF_HUB_DISABLE_XET="1",
               HF_HOME=os.path.join(work, "hf-home"))
    os.environ.update(env)
    try:
        api = HfApi(endpoint=hub, token="hf_write_interop")
        api.create_repo("me/by-hfh", exist_ok=True)
        api.upload_folder(folder_path=MODEL, repo_id="me/by-hfh")
        got = snapshot_download("me/by-hfh", endpoint=hub, cache_dir=os.path.join(work, "c1"))
        check(same_files(got, MODEL), "huggingface_hub upload_folder + snapshot_download round trip")

        run = subprocess.run([phikit, "push", MODEL, "me/by-hfh", "--json"], env=env,
                             capture_output=True, text=True)
        result = json.loads(run.stdout) if run.returncode == 0 else {}
        check(run.returncode == 0 and result.get("commit") is None
              and all(f["action"] == "unchanged" for f in result.get("files", [])),
              "phikit push finds huggingface_hub's upload unchanged (same hashes, no commit)")

        before = sum(1 for _ in open(log))
        run = subprocess.run([phikit, "push", folder, "me/by-phikit"], env=env,
                             capture_output=True, text=True)
        check(run.returncode == 0, f"phikit push to a new repo ({run.stderr.strip()})")
        got = snapshot_download("me/by-phikit", endpoint=hub, cache_dir=os.path.join(work, "c2"))
        check(same_files(got, folder), "huggingface_hub snapshot_download reads phikit's push back")
        check(os.path.exists(os.path.join(got, "README.md")), "the pushed folder carries a model card")
        requests = [json.loads(l) for l in list(open(log))[before:] if '"end"' in l]
        parts = [r for r in requests if r["server"] == "cdn" and r["method"] == "PUT"]
        check(len(parts) == 3, f"phikit sent the new object in 3 multipart parts ({len(parts)})")
        check(not any(r["server"] == "cdn" and r["auth"] for r in requests),
              "no request to the storage host carried a token")
    finally:
        server.stdin.close()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(FAILURES)} failed" if FAILURES else "all passed")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
