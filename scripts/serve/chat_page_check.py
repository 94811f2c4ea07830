#!/usr/bin/env python3
"""Drives the chat page (GET /) of `phikit serve` in headless Chromium (Debian's `chromium`,
through the DevTools protocol; pip install websocket-client): types a message, presses Enter,
and waits for the streamed answer. The model is a scripted one (serve_support.py) whose
answer is known, so the check is exact. Saves a screenshot (default
/tmp/phikit-chat-page.png) to look at.

    PHIKIT_BIN=.build/release/phikit python3 scripts/serve/chat_page_check.py [screenshot.png]

Ends with "N passed, M failed"; exits 1 if any failed."""

import base64
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

from serve_support import Server, check, summary, write_scripted_model

GREETING = "Hello from phikit! Every word arrives the moment it is generated."


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="phikit-chromium-")
        self.process = subprocess.Popen(
            [shutil.which("chromium") or "chromium", "--headless=new", "--no-sandbox",
             "--disable-gpu", "--remote-debugging-port=0", "--window-size=1000,700",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(port_file) and time.time() < deadline:
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        page = next(p for p in pages if p["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30)
        self.ids = itertools.count(1)

    def call(self, method, **params):
        message_id = next(self.ids)
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        return result.get("result", {}).get("value")

    def close(self):
        self.socket.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    screenshot = sys.argv[1] if len(sys.argv) > 1 else "/tmp/phikit-chat-page.png"
    model = write_scripted_model(GREETING)
    server = Server(model)
    browser = Browser()
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", url=server.base + "/")
        deadline = time.time() + 30
        while time.time() < deadline and not browser.evaluate(
                "document.readyState === 'complete' && "
                "document.getElementById('model').textContent !== '…'"):
            time.sleep(0.1)
        model_name = browser.evaluate("document.getElementById('model').textContent")
        check("page loads and names the model", model_name == os.path.basename(model), model_name)
        # Count the updates of the answer bubble: more than one means it streamed.
        browser.evaluate("""
            window.updates = 0;
            new MutationObserver(() => window.updates++).observe(
                document.getElementById('log'),
                { childList: true, subtree: true, characterData: true });
            document.getElementById('input').focus();""")
        browser.call("Input.insertText", text="Hi! Who are you?")
        for kind in ("keyDown", "keyUp"):
            browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                         windowsVirtualKeyCode=13, nativeVirtualKeyCode=13,
                         **({"text": "\r"} if kind == "keyDown" else {}))
        answer = None
        deadline = time.time() + 60
        while time.time() < deadline:
            answer = browser.evaluate("""(() => {
                const a = document.querySelector('.assistant');
                const meta = a && a.querySelector('.meta');
                return a && meta ? a.firstChild.textContent : null; })()""")
            if answer is not None:
                break
            time.sleep(0.1)
        check("the typed message shows", browser.evaluate(
            "document.querySelector('.user') && document.querySelector('.user').textContent")
            == "Hi! Who are you?")
        check("the streamed answer shows in full", answer == GREETING, answer)
        updates = browser.evaluate("window.updates")
        check("the answer arrived in pieces", updates and updates > 5, updates)
        meta = browser.evaluate("document.querySelector('.assistant .meta').textContent")
        check("the answer's token count shows", meta and meta.startswith("14 tokens"), meta)
        check("no error bubble", browser.evaluate("document.querySelector('.error')") is None)
        shot = browser.call("Page.captureScreenshot", format="png")
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print("screenshot:", screenshot)
    finally:
        browser.close()
        check("server exits 0 on SIGTERM", server.stop() == 0)
        shutil.rmtree(model, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
