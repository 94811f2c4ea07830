#!/usr/bin/env python3
"""Drives the chat page (GET /) of `phikit serve` in headless Chromium (Debian's `chromium`,
through the DevTools protocol; pip install websocket-client): types a message, presses Enter,
and waits for the streamed answer. The model is a scripted one (serve_support.py) whose
answer is known, so the check is exact. Then, on a server started with --api-key: the page
asks for the key, loads the model once it is typed (kept in sessionStorage), answers, Stop
ends a (throttled) answer keeping what came, and New chat clears the conversation. Saves
screenshots (default /tmp/phikit-chat-page.png, and -key.png beside it) to look at.

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

    def wait_for(self, expression, seconds=60):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        return self.evaluate(expression)

    def press_enter(self):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                      windowsVirtualKeyCode=13, nativeVirtualKeyCode=13,
                      **({"text": "\r"} if kind == "keyDown" else {}))

    def screenshot(self, path):
        shot = self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print("screenshot:", path)

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
    try:
        check_api_key(model, screenshot.replace(".png", "-key.png"), check)
    finally:
        shutil.rmtree(model, ignore_errors=True)
    return summary()


def check_api_key(model, screenshot, check):
    """The page on a server with --api-key: asks, loads, answers, stops, starts anew."""
    key = "sk-page-check"
    server = Server(model, "--api-key", key)
    browser = Browser()
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", url=server.base + "/")
        note = browser.wait_for("document.getElementById('keynote').textContent", 30)
        check("with --api-key the page asks for the key", note and "needs an API key" in note,
              note)
        check("the key field is marked and focused", browser.evaluate(
            "document.activeElement.id === 'key' && "
            "document.getElementById('key').classList.contains('needed')"))
        browser.call("Input.insertText", text=key)
        browser.evaluate("document.getElementById('key').dispatchEvent(new Event('change'))")
        name = browser.wait_for("document.getElementById('model').textContent", 30)
        check("once the key is typed the models load", name == os.path.basename(model), name)
        check("the key is kept in the tab's session only", browser.evaluate(
            f"sessionStorage.getItem('phikit-key') === '{key}' && localStorage.length === 0"))
        browser.evaluate("document.getElementById('input').focus()")
        browser.call("Input.insertText", text="Hi!")
        browser.press_enter()
        answer = browser.wait_for("""(() => {
            const a = document.querySelector('.assistant');
            return a && a.querySelector('.meta') ? a.firstChild.textContent : null; })()""")
        check("with the key the answer streams in full", answer == GREETING, answer)
        # Stop: the stream is throttled to a trickle so the answer is still coming.
        browser.call("Network.enable")
        browser.call("Network.emulateNetworkConditions", offline=False, latency=0,
                     downloadThroughput=300, uploadThroughput=-1)
        browser.evaluate("document.getElementById('input').focus()")
        browser.call("Input.insertText", text="Again, please.")
        browser.press_enter()
        started = browser.wait_for("""(() => {
            const a = document.querySelectorAll('.assistant')[1];
            return a && a.textContent.length > 0; })()""")
        check("Stop is enabled while answering", started and browser.evaluate(
            "!document.getElementById('stop').disabled"))
        browser.evaluate("document.getElementById('stop').click()")
        meta = browser.wait_for("""(() => {
            const m = document.querySelectorAll('.assistant')[1].querySelector('.meta');
            return m && m.textContent; })()""", 30)
        partial = browser.evaluate(
            "document.querySelectorAll('.assistant')[1].firstChild.textContent")
        check("Stop ends the answer and says so", meta and meta.startswith("stopped"), meta)
        check("what came before Stop stays", partial and GREETING.startswith(partial)
              and partial != GREETING, partial)
        check("Send is back after Stop", browser.evaluate(
            "!document.getElementById('send').disabled && document.getElementById('stop').disabled"))
        browser.call("Network.emulateNetworkConditions", offline=False, latency=0,
                      downloadThroughput=-1, uploadThroughput=-1)
        browser.screenshot(screenshot)
        browser.evaluate("document.getElementById('newchat').click()")
        check("New chat clears the conversation", browser.evaluate(
            "document.getElementById('log').children.length === 0"))
        browser.evaluate("document.getElementById('input').focus()")
        browser.call("Input.insertText", text="Hello again")
        browser.press_enter()
        answer = browser.wait_for("""(() => {
            const a = document.querySelector('.assistant');
            return a && a.querySelector('.meta') ? a.firstChild.textContent : null; })()""")
        check("a new chat answers afresh", answer == GREETING, answer)
        check("no error bubble with the key", browser.evaluate(
            "document.querySelector('.error')") is None)
        check("the key is never in the access log",
              not any(key in line for line in server.lines))
    finally:
        browser.close()
        check("server with --api-key exits 0 on SIGTERM", server.stop() == 0)


if __name__ == "__main__":
    sys.exit(main())
