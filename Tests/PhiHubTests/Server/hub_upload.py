"""The write side of the Hub look-alike (hub_server.py): what `phikit push` and huggingface_hub's
`upload_folder` speak. Python standard library only.

  POST /api/validate-yaml                     {"errors": []} (huggingface_hub asks before it
                                              uploads a README.md)
  POST /api/repos/create                      {"name","organization","private","type"} -> 200
                                              {"url"}; 409 when the repo exists
  POST /api/models/{repo}/branch/{branch}     the branch at main's head; 409 when it exists
  POST /api/models/{repo}/preupload/{rev}     {"files":[{"path","sample","size"}]} -> uploadMode
                                              "lfs" (binary sample, *.safetensors, > 10 MB) or
                                              "regular", shouldIgnore, oid of the file there now
  POST /{repo}.git/info/lfs/objects/batch     objects the storage lacks get actions: basic (PUT
                                              to the CDN listener) or, above the spec's
                                              "multipart_chunk", multipart (numbered part URLs on
                                              the CDN, completion on the Hub), plus verify
  PUT  /upload/{oid}[/{part}]  (CDN)          stores the bytes (sha256 checked on completion);
                                              a part answers with an ETag
  POST /lfs-complete/{oid}, /lfs-verify/{oid} multipart completion (ETags checked), verify
  POST /api/models/{repo}/commit/{rev}        ndjson; 412 when "parentCommit" is not the head

Writes need a token (any but "hf_invalid…" / "hf_read…"); tokens never reach the CDN from
phikit, which the request log shows. Faults apply as to downloads; "drop" on a PUT reads
"after" bytes of the body and cuts the connection.
"""

import base64
import hashlib
import json
import os
import threading
import urllib.parse


WRITE_LOCK = threading.Lock()


def new_commit_id(seed):
    return hashlib.sha1(("phikit-test-commit " + seed).encode()).hexdigest()


class UploadRoutes:
    """Mixed into the request handler; `self.hub` is the shared Hub state and `RepoFile` the
    server's file record (set by hub_server.py, which imports this module)."""

    RepoFile = None

    def read_body(self, fault):
        length = int(self.headers.get("Content-Length") or 0)
        if fault and fault["kind"] == "drop":
            self.rfile.read(min(length, int(fault.get("after", 0))))
            self.close_connection = True
            try:
                import socket
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return None
        return self.rfile.read(length)

    def writer_token(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        if token is None:
            self.send_error_code(401, None, "Invalid username or password.")
            return None
        if token.startswith("hf_invalid"):
            self.send_error_code(401, None, "Invalid credentials in Authorization header")
            return None
        if token.startswith("hf_read"):
            self.send_error_code(403, None, "You don't have the rights to create a model under this namespace")
            return None
        return token

    def base_url(self):
        return "http://" + self.headers.get("Host", "127.0.0.1")

    def serve_write(self, path, body):
        parts = path.lstrip("/").split("/")
        if parts[-1:] == ["batch"] and path.endswith(".git/info/lfs/objects/batch"):
            repo_id = "/".join(parts[:2])[: -len(".git")] if parts[1].endswith(".git") else None
            return self.lfs_batch(repo_id, body)
        if parts[:1] == ["lfs-complete"] and len(parts) == 2:
            return self.lfs_complete(parts[1], body)
        if parts[:1] == ["lfs-verify"] and len(parts) == 2:
            present = parts[1] in self.hub.lfs_objects
            return self.send_json(200 if present else 404, {"ok": present})
        if self.writer_token() is None:
            return
        if parts[:2] == ["api", "validate-yaml"]:  # huggingface_hub checks a README's front matter
            return self.send_json(200, {"errors": [], "warnings": []})
        if parts[:3] == ["api", "repos", "create"]:
            return self.create_repo(json.loads(body or b"{}"))
        if len(parts) >= 6 and parts[:2] == ["api", "models"]:
            repo_id = parts[2] + "/" + parts[3]
            kind, rev = parts[4], urllib.parse.unquote("/".join(parts[5:]))
            repo = self.hub.repos.get(repo_id)
            if repo is None:
                return self.send_error_code(404, "RepoNotFound", "Repository not found")
            if kind == "branch":
                return self.create_branch(repo, rev)
            if kind == "preupload":
                return self.preupload(repo, rev, json.loads(body or b"{}"))
            if kind == "commit":
                return self.commit(repo_id, repo, rev, body)
        return self.send_error_code(404, None, "no such route")

    # Repos and branches -------------------------------------------------------------------------

    def create_repo(self, spec):
        name = spec.get("name")
        org = spec.get("organization")
        if not name or spec.get("type", "model") != "model":
            return self.send_error_code(400, None, "bad repo spec")
        repo_id = f"{org}/{name}" if org else f"user/{name}"
        with WRITE_LOCK:
            if repo_id in self.hub.repos:
                return self.send_json(409, {"error": "You already created this model repo",
                                            "url": f"{self.base_url()}/{repo_id}"})
            attributes = self.store_bytes(b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n")
            commit = new_commit_id(repo_id + " initial")
            self.hub.repos[repo_id] = {
                "refs": {"main": commit},
                "commits": {commit: {".gitattributes": self.RepoFile({"path": ".gitattributes", "source": attributes})}},
                "gated_token": None,
                "private": bool(spec.get("private", False)),
            }
        return self.send_json(200, {"url": f"{self.base_url()}/{repo_id}", "name": repo_id})

    def create_branch(self, repo, branch):
        with WRITE_LOCK:
            if branch in repo["refs"]:
                return self.send_error_code(409, None, f"Branch {branch} already exists")
            repo["refs"][branch] = repo["refs"]["main"]
        return self.send_json(200, {})

    # Uploads ------------------------------------------------------------------------------------

    def preupload(self, repo, rev, spec):
        commit = self.hub.resolve_commit(repo, rev)
        if commit is None:
            return self.send_error_code(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        files = repo["commits"][commit]
        answer = []
        for item in spec.get("files", []):
            sample = base64.b64decode(item.get("sample", ""))
            path = item["path"]
            binary = b"\0" in sample or path.endswith((".safetensors", ".bin", ".gguf"))
            lfs = binary or int(item.get("size", 0)) > 10 * 1024 * 1024
            existing = files.get(path)
            answer.append({
                "path": path,
                "uploadMode": "lfs" if lfs else "regular",
                "shouldIgnore": path.startswith("ignored/"),
                "oid": existing.blob_id if existing else None,
            })
        return self.send_json(200, {"files": answer, "commitOid": commit})

    def lfs_batch(self, repo_id, body):
        if repo_id not in self.hub.repos:
            return self.send_error_code(404, "RepoNotFound", "Repository not found")
        if self.writer_token() is None:
            return
        spec = json.loads(body)
        chunk = int(self.hub.multipart_chunk or 0)
        cdn = self.cdn_base
        objects = []
        for obj in spec.get("objects", []):
            oid, size = obj["oid"], int(obj["size"])
            entry = {"oid": oid, "size": size, "authenticated": True}
            if oid not in self.hub.lfs_objects:
                verify = {"href": f"{self.base_url()}/lfs-verify/{oid}"}
                if chunk and size > chunk:
                    header = {"chunk_size": str(chunk)}
                    count = (size + chunk - 1) // chunk
                    for n in range(1, count + 1):
                        header[f"{n:05d}"] = f"{cdn}/upload/{oid}/{n}?size={size}"
                    upload = {"href": f"{self.base_url()}/lfs-complete/{oid}", "header": header}
                else:
                    upload = {"href": f"{cdn}/upload/{oid}?size={size}"}
                entry["actions"] = {"upload": upload, "verify": verify}
            objects.append(entry)
        return self.send_json(200, {"transfer": "multipart" if chunk else "basic", "objects": objects})

    def store_bytes(self, data):
        digest = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.hub.storage, "obj-" + digest)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        return path

    def cdn_upload(self, path, query, body):
        parts = path.lstrip("/").split("/")
        oid = parts[1]
        if len(parts) == 3:  # one part of a multipart upload
            part_path = os.path.join(self.hub.storage, f"part-{oid}-{int(parts[2])}")
            with open(part_path, "wb") as f:
                f.write(body)
            etag = '"' + hashlib.md5(body).hexdigest() + '"'
            return self.send_json(200, {}, {"ETag": etag})
        size = int(urllib.parse.parse_qs(query).get("size", ["-1"])[0])
        if hashlib.sha256(body).hexdigest() != oid or (size >= 0 and len(body) != size):
            return self.send_error_code(400, None, "the bytes do not hash to the object id")
        self.register_object(oid, body)
        return self.send_json(200, {})

    def lfs_complete(self, oid, body):
        spec = json.loads(body)
        data = b""
        for n, part in enumerate(spec.get("parts", []), start=1):
            if part.get("partNumber") != n:
                return self.send_error_code(400, None, "parts out of order")
            part_path = os.path.join(self.hub.storage, f"part-{oid}-{n}")
            if not os.path.exists(part_path):
                return self.send_error_code(400, None, f"part {n} was never uploaded")
            with open(part_path, "rb") as f:
                chunk = f.read()
            if part.get("etag") != '"' + hashlib.md5(chunk).hexdigest() + '"':
                return self.send_error_code(400, None, f"part {n} has another ETag")
            data += chunk
        if hashlib.sha256(data).hexdigest() != oid:
            return self.send_error_code(400, None, "the parts do not hash to the object id")
        self.register_object(oid, data)
        return self.send_json(200, {})

    def register_object(self, oid, data):
        source = self.store_bytes(data)
        with WRITE_LOCK:
            self.hub.lfs_objects[oid] = self.RepoFile({"path": "", "source": source, "lfs": True, "sha256": oid})

    # Commits ------------------------------------------------------------------------------------

    def commit(self, repo_id, repo, rev, body):
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            return self.send_error_code(400, None, "the commit must start with a header line")
        header = lines[0]["value"]
        with WRITE_LOCK:
            head = self.hub.resolve_commit(repo, rev)
            if head is None or rev not in repo["refs"]:
                return self.send_error_code(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            parent = header.get("parentCommit")
            if parent is not None and parent != head:
                return self.send_json(412, {"error": "A commit has happened since. Please refresh and try again."})
            files = dict(repo["commits"][head])
            for line in lines[1:]:
                value = line.get("value", {})
                path = value.get("path")
                if line.get("key") == "file":
                    data = base64.b64decode(value["content"])
                    files[path] = self.RepoFile({"path": path, "source": self.store_bytes(data)})
                elif line.get("key") == "lfsFile":
                    obj = self.hub.lfs_objects.get(value.get("oid"))
                    if obj is None:
                        return self.send_error_code(400, None, f"LFS object of {path} was never uploaded")
                    files[path] = self.RepoFile({"path": path, "source": obj.source, "lfs": True, "sha256": obj.sha256})
                else:
                    return self.send_error_code(400, None, f"unknown commit line {line.get('key')}")
            commit = new_commit_id(f"{repo_id} {head} {len(repo['commits'])} {header.get('summary')}")
            repo["commits"][commit] = files
            repo["refs"][rev] = commit
        return self.send_json(200, {"commitUrl": f"{self.base_url()}/{repo_id}/commit/{commit}",
                                    "commitOid": commit})
