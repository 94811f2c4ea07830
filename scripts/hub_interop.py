#!/usr/bin/env python3
"""Checks that phikit and huggingface_hub share one Hugging Face cache (not part of `swift test`).

Serves the bundled stories-260k model (phi3 layout, tokenizer.json) from the test Hub
(Tests/PhiHubTests/Server/hub_server.py), then:

  1. phikit pulls it into cache A; huggingface_hub's scan_cache_dir() sees it with no warnings,
     try_to_load_from_cache() finds each file, snapshot_download() then makes no file request
     (it reuses phikit's trees/<commit>.json), and mlx_lm loads the model by repo id offline.
  2. huggingface_hub's snapshot_download() fills cache B; phikit pull then makes no file request
     and reports every file cached.
  3. Caches A and B are the same, byte for byte: blob names, link targets, refs/main, the
     listing file.

Usage: scripts/hub_interop.py [path/to/phikit]     (run with the reference venv's python:
       $PHIKIT_REF_VENV/bin/python, default /opt/phikit-ref)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "Tests/PhiHubTests/Server/hub_server.py")
MODEL = os.path.join(ROOT, "models/stories-260k")
REPO = "karpathy/stories260K-phi3"
COMMIT = "5eb1f1e0" * 5
FAILURES = []


def check(ok, what):
    print(("PASS  " if ok else "FAIL  ") + what)
    if not ok:
        FAILURES.append(what)


def start_server(work):
    files = [
        {"path": name, "source": os.path.join(MODEL, name), "lfs": name.endswith(".safetensors")}
        for name in sorted(os.listdir(MODEL))
    ]
    spec = {"repos": [{"id": REPO, "refs": {"main": COMMIT}, "commits": {COMMIT: {"files": files}}}]}
    with open(os.path.join(work, "spec.json"), "w") as f:
        json.dump(spec, f)
    log = os.path.join(work, "log.jsonl")
    server = subprocess.Popen(
        [sys.executable, SERVER, "--spec", os.path.join(work, "spec.json"), "--log", log],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    urls = json.loads(server.stdout.readline())
    return server, urls["hub"], log


def requests(log):
    """Answered requests in arrival order, once none is still being answered."""
    deadline = time.time() + 5
    while True:
        lines = []
        if os.path.exists(log):
            with open(log) as f:
                lines = [json.loads(line) for line in f]
        ends = [r for r in lines if r.get("phase") == "end"]
        if len(ends) >= len(lines) - len(ends) or time.time() > deadline:
            return sorted(ends, key=lambda r: r["id"])
        time.sleep(0.01)


def file_requests(log):
    return [r for r in requests(log) if "/resolve/" in r["path"] or r["server"] == "cdn"]


def layout(cache):
    """Everything of the repo folder that both tools write, as comparable values."""
    repo = os.path.join(cache, "models--" + REPO.replace("/", "--"))
    out = {}
    for base, _, names in os.walk(repo):
        for name in names:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, repo)
            if os.path.islink(path):
                out[rel] = "-> " + os.readlink(path)
            elif rel.startswith("blobs/"):
                out[rel] = os.path.getsize(path)
            else:
                with open(path, "rb") as f:
                    out[rel] = f.read()
    return out


def main():
    phikit = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug/phikit")
    work = tempfile.mkdtemp(prefix="phikit-interop-")
    server, endpoint, log = start_server(work)
    cache_a, cache_b = os.path.join(work, "a"), os.path.join(work, "b")
    base_env = dict(os.environ, HF_ENDPOINT=endpoint, HF_HUB_DISABLE_XET="1", HF_TOKEN="",
                    HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=os.path.join(work, "hf-home"))
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE"):
        base_env.pop(key, None)
    os.environ.clear()
    os.environ.update(base_env)
    # huggingface_hub reads HF_ENDPOINT at import time.
    from huggingface_hub import scan_cache_dir, snapshot_download, try_to_load_from_cache

    # 1. phikit → cache A → huggingface_hub, mlx_lm
    pulled = subprocess.run([phikit, "pull", REPO], env=dict(base_env, HF_HUB_CACHE=cache_a),
                            capture_output=True, text=True)
    check(pulled.returncode == 0, f"phikit pull {REPO} (exit {pulled.returncode}) {pulled.stderr.strip()}")
    info = scan_cache_dir(cache_a)
    check(not info.warnings, f"scan_cache_dir: no warnings {info.warnings}")
    repos = [r for r in info.repos if r.repo_id == REPO]
    check(len(repos) == 1, "scan_cache_dir sees the repo phikit pulled")
    if repos:
        revision = next(iter(repos[0].revisions))
        check(revision.commit_hash == COMMIT and "main" in revision.refs, "…at the commit, with refs main")
        expected = {n for n in os.listdir(MODEL) if n != "README.md"}
        check({f.file_name for f in revision.files} == expected, f"…with the files {sorted(expected)}")
        check(repos[0].size_on_disk == sum(os.path.getsize(os.path.join(MODEL, n)) for n in expected),
              "…and their sizes")
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        path = try_to_load_from_cache(REPO, name, cache_dir=cache_a)
        check(isinstance(path, str) and os.path.exists(path), f"try_to_load_from_cache finds {name}")
    allow = ["*.json", "model*.safetensors", "*.py", "tokenizer.model", "*.tiktoken", "tiktoken.model",
             "*.txt", "*.jsonl", "*.jinja"]  # mlx-lm's patterns, which phikit pulls by default
    before = len(requests(log))
    snapshot = snapshot_download(REPO, cache_dir=cache_a, allow_patterns=allow)
    new = requests(log)[before:]
    check(not [r for r in new if "/resolve/" in r["path"] or r["server"] == "cdn"],
          f"snapshot_download after phikit makes no file request ({[r['path'] for r in new]})")
    check(snapshot == os.path.join(cache_a, "models--karpathy--stories260K-phi3", "snapshots", COMMIT),
          "snapshot_download returns phikit's snapshot folder")
    try:
        loaded = subprocess.run(
            [sys.executable, "-c",
             f"from mlx_lm import load; m, t = load({REPO!r}); print(type(m).__module__, len(t.encode('Once upon')))"],
            env=dict(base_env, HF_HUB_CACHE=cache_a, HF_HUB_OFFLINE="1"), capture_output=True, text=True,
            timeout=300)
        check(loaded.returncode == 0 and "phi3" in loaded.stdout,
              f"mlx_lm.load({REPO!r}) offline from phikit's cache: {loaded.stdout.strip() or loaded.stderr.strip()[-300:]}")
    except (FileNotFoundError, subprocess.TimeoutExpired) as error:
        check(False, f"mlx_lm.load: {error}")

    # 2. huggingface_hub → cache B → phikit
    snapshot_download(REPO, cache_dir=cache_b, allow_patterns=allow)
    before = len(requests(log))
    again = subprocess.run([phikit, "pull", REPO, "--json"], env=dict(base_env, HF_HUB_CACHE=cache_b),
                           capture_output=True, text=True)
    check(again.returncode == 0, f"phikit pull into huggingface_hub's cache (exit {again.returncode})")
    new = requests(log)[before:]
    check([r["path"] for r in new] == [f"/api/models/{REPO}/revision/main"],
          f"…asks only which commit main is: {[r['path'] for r in new]}")
    if again.returncode == 0:
        result = json.loads(again.stdout)
        check(all(f["action"] == "cached" for f in result["files"]) and result["bytes_downloaded"] == 0,
              "…and reports every file cached, 0 bytes downloaded")

    # 3. The two caches are identical.
    a, b = layout(cache_a), layout(cache_b)
    check(sorted(a) == sorted(b), f"same files in both caches ({sorted(set(a) ^ set(b))})")
    diff = [k for k in a if k in b and a[k] != b[k]]
    check(not diff, f"same bytes, link targets, refs and listing ({diff})")
    check(a.get("refs/main") == COMMIT.encode(), "refs/main holds the commit without a newline")
    check(any(str(v).startswith("-> ../../blobs/") for v in a.values()), "links are ../../blobs/<name>")

    server.stdin.close()
    server.wait(timeout=10)
    print("\n" + ("interop OK" if not FAILURES else f"{len(FAILURES)} check(s) failed"))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
