#!/usr/bin/env python3
"""Browser test of rclick's live view (HTTPServer).

Starts `rclick --http PORT` on a configuration with traffic, drives headless
Chromium through the DevTools protocol (a minimal WebSocket client written
with the standard library), and checks what a user sees: the graph with
push/pull ports, counters that move, and handler reads and writes from the
page's forms. Prints one line per check and a summary line
`live view browser test: N passed, N failed`.
"""

import argparse
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CONFIG = """\
src :: RatedSource(RATE 1000) -> c :: Counter -> t :: Tee(2);
t[0] -> q :: Queue(1000) -> u :: RatedUnqueue(RATE 800) -> d :: Discard;
t[1] -> q2 :: Queue(200) -> u2 :: Unqueue -> c2 :: Counter -> d2 :: Discard;
"""

ELEMENTS = {
    "src": "RatedSource", "c": "Counter", "t": "Tee", "q": "Queue",
    "u": "RatedUnqueue", "d": "Discard", "q2": "Queue", "u2": "Unqueue",
    "c2": "Counter", "d2": "Discard",
}

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1400,820",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def handler_value(base, name):
    body = json.loads(http_get(base + "api/handler/" + name))
    return body["value"].strip()


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol."""

    def __init__(self, url, timeout=30):
        assert url.startswith("ws://")
        hostport, _, path = url[5:].partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
             "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("WebSocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise OSError("WebSocket handshake refused: " + head.decode(errors="replace"))
        self.buf = b""

    def send(self, text):
        data = text.encode()
        header = bytes([0x81])
        n = len(data)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise OSError("WebSocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode = b0 & 0x0F
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise OSError("WebSocket closed by peer")
            if opcode == 0x9:  # ping
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if b0 & 0x80:
                    return message.decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class DevTools:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def eval(self, expr):
        """Evaluates `expr` in the page (promises awaited), returns its value."""
        r = self.call("Runtime.evaluate", expression=expr, awaitPromise=True,
                      returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS error in {expr!r}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def wait_for(self, expr, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.eval(expr)
            if v:
                return v
            time.sleep(0.1)
        raise TimeoutError(f"timed out waiting for {expr}")


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, fn):
        try:
            detail = fn()
            self.passed += 1
            print(f"ok - {name}" + (f" ({detail})" if detail else ""))
        except Exception as e:  # noqa: BLE001 - every failure is reported
            self.failed += 1
            print(f"FAIL - {name}: {e}")


def counter_on_page(dt, elem, handler):
    text = dt.eval(
        f"(document.querySelector('#graph text.counter[data-element=\"{elem}\"]"
        f"[data-handler=\"{handler}\"]') || {{}}).textContent || ''")
    digits = text.replace(",", "")
    if not digits.isdigit():
        raise AssertionError(f"{elem}.{handler} on the page is {text!r}")
    return int(digits)


def wait_ready(dt):
    dt.wait_for("document.body && document.body.dataset.ready === 'true' && "
                "document.querySelectorAll('#graph g.element').length > 0")


def run(args):
    tmp = tempfile.mkdtemp(prefix="rclick-live-view-")
    procs = []
    ws = None
    results = Results()
    try:
        conf = os.path.join(tmp, "traffic.click")
        with open(conf, "w") as f:
            f.write(CONFIG)
        port = free_port()
        base = f"http://127.0.0.1:{port}/"
        # The user opens the printed URL under the name `localhost` (its
        # writes carry Origin http://localhost:PORT).
        page_base = f"http://localhost:{port}/"
        token_file = os.path.join(tmp, "http.token")
        router_log = open(os.path.join(tmp, "rclick.log"), "w")
        router = subprocess.Popen([args.rclick, "--http", str(port),
                                   f"--http-token={token_file}", conf],
                                  stdout=router_log, stderr=subprocess.STDOUT)
        procs.append(router)
        deadline = time.time() + 15
        while True:
            try:
                http_get(base + "api/router", timeout=1)
                break
            except (urllib.error.URLError, OSError):
                if router.poll() is not None or time.time() > deadline:
                    router_log.flush()
                    with open(os.path.join(tmp, "rclick.log")) as f:
                        raise RuntimeError("rclick did not start: " + f.read())
                time.sleep(0.1)
        with open(token_file) as f:
            token = f.read().strip()
        mode = os.stat(token_file).st_mode & 0o777
        if mode != 0o600:
            raise RuntimeError(f"token file mode {mode:o}")
        router_log.flush()
        with open(os.path.join(tmp, "rclick.log")) as f:
            printed = f.read()
        if f"#token={token}" not in printed:
            raise RuntimeError("the URL with the token was not printed: " + printed)

        profile = os.path.join(tmp, "profile")
        chrome = subprocess.Popen(
            [args.chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "chromium.log"), "w"))
        procs.append(chrome)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if chrome.poll() is not None or time.time() > deadline:
                with open(os.path.join(tmp, "chromium.log")) as f:
                    raise RuntimeError("chromium did not start: " + f.read()[-2000:])
            time.sleep(0.1)
        devtools_port = int(open(port_file).read().split("\n")[0])
        targets = json.loads(http_get(f"http://127.0.0.1:{devtools_port}/json/list"))
        page = next(t for t in targets if t.get("type") == "page")
        ws = WebSocket(page["webSocketDebuggerUrl"])
        dt = DevTools(ws)
        dt.call("Page.enable")
        dt.call("Runtime.enable")
        dt.call("Page.navigate", url=f"{page_base}#token={token}")

        def page_loads():
            wait_ready(dt)
            title = dt.eval("document.title")
            assert title == "rclick live view", title
            dt.wait_for("document.getElementById('status').textContent === 'live'")
            shown = dt.eval("location.href")
            assert token not in shown, f"the token stays in the address bar: {shown}"
            return f"title {title!r}, address {shown}"

        results.check("page loads and goes live", page_loads)

        def graph_elements():
            got = dt.eval("""[...document.querySelectorAll('#graph g.element')].map(g =>
                [g.dataset.name, g.dataset.class, g.querySelector('text.title').textContent])""")
            shown = {name: (cls, label) for name, cls, label in got}
            for name, cls in ELEMENTS.items():
                assert name in shown, f"{name} missing from the graph"
                assert shown[name] == (cls, f"{name} :: {cls}"), shown[name]
            edges = dt.eval("document.querySelectorAll('#graph path.edge').length")
            assert edges == 9, f"{edges} edges"
            return f"{len(got)} elements, {edges} edges"

        results.check("SVG graph shows every element as 'name :: Class' with edges", graph_elements)

        def port_fills():
            ports = dt.eval("""[...document.querySelectorAll('#graph rect.port')].map(r =>
                [r.closest('g.element').dataset.name,
                 r.classList.contains('input') ? 'in' : 'out',
                 Number(r.dataset.port), r.dataset.mode, getComputedStyle(r).fill])""")
            fills = {"push": "rgb(0, 0, 0)", "pull": "rgb(255, 255, 255)"}
            modes = {}
            for name, side, idx, mode, fill in ports:
                assert fill == fills[mode], f"{name} {side}{idx} is {mode} but filled {fill}"
                modes[(name, side, idx)] = mode
            expected = {
                ("c", "in", 0): "push", ("c", "out", 0): "push",
                ("t", "out", 1): "push", ("q", "in", 0): "push",
                ("q", "out", 0): "pull", ("u", "in", 0): "pull",
                ("u", "out", 0): "push", ("u2", "in", 0): "pull",
                ("q2", "out", 0): "pull", ("d", "in", 0): "push",
            }
            for key, mode in expected.items():
                assert modes.get(key) == mode, f"{key}: {modes.get(key)} (expected {mode})"
            assert ("src", "in", 0) not in modes
            return f"{len(ports)} ports"

        results.check("ports drawn push black, pull white", port_fills)

        def counter_increases():
            first = counter_on_page(dt, "c", "count")
            time.sleep(1.2)
            dt.call("Page.reload", ignoreCache=True)
            time.sleep(0.3)
            wait_ready(dt)
            second = counter_on_page(dt, "c", "count")
            assert second > first, f"c.count went from {first} to {second}"
            return f"c.count {first} -> {second}"

        results.check("counter on the page increases between two loads", counter_increases)

        def live_update():
            a = counter_on_page(dt, "src", "count")
            dt.wait_for(
                "Number((document.querySelector('#graph text.counter[data-element=\"src\"]"
                f"[data-handler=\"count\"]').textContent || '0').replace(/,/g, '')) > {a}",
                timeout=5)
            return None

        results.check("counters update without reloading", live_update)

        def queue_bar():
            text = dt.eval("(document.querySelector('#graph text.qtext[data-element=\"q\"]')"
                           " || {}).textContent")
            assert text and text.endswith("/ 1,000"), text
            width = dt.eval("Number(document.querySelector('#graph rect.qbar[data-element=\"q\"]')"
                            ".getAttribute('width'))")
            assert width is not None and width >= 0, width
            return f"q shows {text!r}"

        results.check("queue length shown as a bar", queue_bar)

        def click_shows_handlers():
            dt.eval("document.querySelector('#graph g.element[data-name=\"src\"]')"
                    ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
            title = dt.wait_for("(document.querySelector('#panel h2') || {}).textContent")
            assert title == "src :: RatedSource", title
            rows = dt.eval("[...document.querySelectorAll('#panel .handler')]"
                           ".map(r => r.dataset.handler)")
            for h in ("src.count", "src.rate", "src.reset", "src.config"):
                assert h in rows, f"{h} not in {rows}"
            return f"{len(rows)} handlers"

        results.check("clicking an element lists its handlers", click_shows_handlers)

        def write_from_form():
            dt.eval("""(() => {
                const f = document.querySelector('#panel form.write[data-handler="src.rate"]');
                f.querySelector('input[name=value]').value = '333';
                f.querySelector('button[type=submit]').click();
            })()""")
            dt.wait_for("(document.querySelector('#panel .handler[data-handler=\"src.rate\"]')"
                        ".dataset.lastWrite) === 'ok'")
            v = handler_value(base, "src.rate")
            assert v == "333", f"src.rate is {v!r} after the write"
            msg = dt.eval("document.querySelector('#panel .handler[data-handler=\"src.rate\"]"
                          " .result').textContent")
            return f"src.rate = {v}, page says {msg!r}"

        results.check("writing a handler from the page's form", write_from_form)

        def read_from_form():
            dt.eval("document.querySelector('#panel form.read[data-handler=\"src.rate\"]"
                    " button').click()")
            v = dt.wait_for("(() => { const p = document.querySelector("
                            "'#panel .handler[data-handler=\"src.rate\"] pre.value');"
                            " return p && !p.hidden && p.textContent; })()")
            assert v.strip() == "333", repr(v)
            return None

        results.check("reading a handler from the page's form", read_from_form)

        def js_api():
            r = dt.eval("rclick.writeHandler('q.capacity', '777')")
            assert r["ok"] is True and r["status"] == 200, r
            assert handler_value(base, "q.capacity") == "777"
            bad = dt.eval("rclick.writeHandler('c.count', '1')")
            assert bad["ok"] is False and bad["status"] == 405, bad
            assert "read-only" in bad["error"], bad
            return f"error shown: {bad['error']!r}"

        results.check("page's write function: success and error", js_api)

        def token_needed():
            # The token survives a reload (kept by the page) ...
            dt.call("Page.reload", ignoreCache=True)
            time.sleep(0.3)
            wait_ready(dt)
            r = dt.eval("rclick.writeHandler('q.capacity', '778')")
            assert r["ok"] is True, r
            # ... and without it (or with a wrong one) writes are refused.
            dt.eval("rclick.setToken('0000')")
            r = dt.eval("rclick.writeHandler('q.capacity', '1')")
            assert r["ok"] is False and r["status"] == 401, r
            dt.eval(f"rclick.setToken('{token}')")
            assert handler_value(base, "q.capacity") == "778"
            return f"without the token: {r['status']} {r['error']!r}"

        results.check("writes need the token; the page keeps it", token_needed)

        def screenshot():
            dt.eval("document.querySelector('#graph g.element[data-name=\"q\"]')"
                    ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
            dt.eval("document.querySelector('#panel form.read[data-handler=\"q.length\"]"
                    " button').click()")
            time.sleep(1.5)
            shot = dt.call("Page.captureScreenshot", format="png")
            png = base64.b64decode(shot["data"])
            assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
            width, height = struct.unpack(">II", png[16:24])
            assert width >= 800 and height >= 500, (width, height)
            out = args.screenshot or os.path.join(tmp, "live-view.png")
            with open(out, "wb") as f:
                f.write(png)
            return f"{width}x{height}, {len(png)} bytes" + (f", saved {out}" if args.screenshot else "")

        results.check("screenshot", screenshot)
    except Exception as e:  # noqa: BLE001
        results.failed += 1
        print(f"FAIL - setup: {e}")
    finally:
        if ws:
            ws.close()
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"live view browser test: {results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rclick", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--screenshot", help="also save the screenshot here")
    sys.exit(run(ap.parse_args()))


if __name__ == "__main__":
    main()
