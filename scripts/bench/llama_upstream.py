"""Upstream llama.cpp, the speed anchor (issue 31), for the benchmark scripts: where its binaries
are (scripts/bench/build_llamacpp.sh builds them; LLAMA_CPP_BIN names the folder), its server
on a free local port, and the CPU line every report starts from (the figures belong to one CPU
family: Zen 4 and Zen 5 differ in AVX-512 width)."""
import json
import os
import socket
import subprocess
import time
import urllib.request

def bin_dir():
    """The folder with llama-server, llama-bench and llama-perplexity: LLAMA_CPP_BIN, else
    where build_llamacpp.sh builds ($LLAMA_CPP_DIR, /work/llama, ~/.cache/phikit-llama)."""
    if os.environ.get("LLAMA_CPP_BIN"):
        return os.environ["LLAMA_CPP_BIN"]
    top = os.environ.get("LLAMA_CPP_DIR") or ("/work/llama" if os.path.isdir("/work") else
                                              os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                           os.path.expanduser("~/.cache"),
                                                           "phikit-llama"))
    return os.path.join(top, "build", "bin")


def binary(name):
    """The path of upstream's `name` (llama-server, llama-bench), or None when not built."""
    path = os.path.join(bin_dir(), name)
    return path if os.access(path, os.X_OK) else None


def cpu_line():
    """'AMD EPYC ... (CPU family 25), 2 CPUs, load 3.1 2.9 2.5'."""
    name = family = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name == "?":
                name = value.strip()
            elif key.strip() == "cpu family" and family == "?":
                family = value.strip()
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return f"{name} (CPU family {family}), {os.cpu_count()} CPUs, load {load}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """Upstream llama-server on 127.0.0.1 (`extra`: its flags beyond model, port and threads),
    answering once /health does; `stop` ends it and returns its exit code."""

    def __init__(self, gguf, threads, log, extra=(), timeout=600):
        path = binary("llama-server")
        if path is None:
            raise RuntimeError(f"no llama-server in {bin_dir()} "
                               "(scripts/bench/build_llamacpp.sh; LLAMA_CPP_BIN)")
        self.port = free_port()
        self.log = open(log, "w")
        command = [path, "-m", gguf, "--host", "127.0.0.1", "--port", str(self.port),
                   "-t", str(threads), "-tb", str(threads), "--no-webui", *extra]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until_ready(self, "/health", "llama-server", log, timeout)

    def post(self, path, body, timeout=3600):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}",
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return json.load(r)

    def stop(self):
        return stop_server(self.process, self.log)


def wait_until_ready(server, path, name, log, timeout=600):
    """Polls GET `path` on `server.port` until it answers 200 (the one wait every benchmark
    server goes through); raises, with the server stopped, when the process exits first or
    `timeout` seconds pass."""
    deadline = time.time() + timeout
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"{name} exited with {server.process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.time() > deadline:
            server.stop()
            raise RuntimeError(f"{name} did not answer in {timeout} s; see {log}")
        time.sleep(0.5)


def stop_server(process, log):
    """Ends a server process (SIGTERM, then SIGKILL after 30 s), closes its log; the exit code."""
    process.terminate()
    try:
        code = process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
    log.close()
    return code
