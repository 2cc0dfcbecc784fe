"""Tests of clients/python/rclick_control.py against a running rclick
(`rclick -u SOCKET -p PORT+ -R`). The binary is $RCLICK."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

from rclick_control import ControlSocket, ControlSocketError, proxy  # noqa: E402

RCLICK = os.environ.get("RCLICK", "rclick")
CONFIG = ("src :: RatedSource(RATE 1000) -> c :: Counter -> Discard; "
          "s :: Script(TYPE PASSIVE); i :: Idle -> q :: Queue(50) -> Discard;")


class ControlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rclick-py-")
        cls.sock = os.path.join(cls.dir, "ctl.sock")
        base = 30000 + os.getpid() % 20000
        cls.proc = subprocess.Popen(
            [RCLICK, "-e", CONFIG, "-u", cls.sock, "-p", "%d+" % base, "-R"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while not os.path.exists(cls.sock):
            if cls.proc.poll() is not None or time.time() > deadline:
                err = cls.proc.stderr.read().decode() if cls.proc.poll() is not None else ""
                cls.tearDownClass()
                raise RuntimeError("rclick did not start: " + err)
            time.sleep(0.02)

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.terminate()
            try:
                cls.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                cls.proc.kill()
                cls.proc.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def connect(self):
        return ControlSocket.unix(self.sock, timeout=5)

    def test_read_and_counts_increase(self):
        with self.connect() as cs:
            self.assertEqual(cs.protocol_version, "1.3")
            a = int(cs.read("c.count"))
            time.sleep(0.05)
            self.assertGreater(int(cs.read("c.count")), a)
            self.assertEqual(cs.read("c.name"), "c")
            self.assertEqual(cs.read("s.add", "2 3").strip(), "5")
            self.assertIn("c", cs.elements())

    def test_write_values_with_newlines(self):
        with self.connect() as cs:
            self.assertEqual(cs.write("s.set", "v line1\r\nREAD c.count\nend"), 200)
            self.assertEqual(cs.read("s.get", "v"), "line1\r\nREAD c.count\nend")
            cs.write("q.capacity", 77)
            self.assertEqual(cs.read("q.capacity").strip(), "77")
            self.assertEqual(cs.read_bytes("c.name"), b"c")

    def test_errors_carry_code_and_message(self):
        with self.connect() as cs:
            cases = [
                (lambda: cs.read("nosuch.count"), 510, "No element named 'nosuch'"),
                (lambda: cs.read("c.nosuch"), 511, "No handler named 'c.nosuch'"),
                (lambda: cs.write("c.count", "1"), 530, "Handler 'c.count' read-only"),
                (lambda: cs.read("c.reset"), 530, "Handler 'c.reset' write-only"),
                (lambda: cs.write("q.capacity", "x"), 520, "expected unsigned integer"),
            ]
            for call, code, message in cases:
                with self.assertRaises(ControlSocketError) as ctx:
                    call()
                self.assertEqual(ctx.exception.code, code)
                self.assertEqual(ctx.exception.message, message)
            # The connection survives errors.
            self.assertEqual(cs.read("c.name"), "c")

    def test_check_and_handlers(self):
        with self.connect() as cs:
            self.assertTrue(cs.check_read("c.count"))
            self.assertFalse(cs.check_write("c.count"))
            self.assertTrue(cs.check_write("c.reset"))
            self.assertFalse(cs.check_read("c.nosuch"))
            with self.assertRaises(ControlSocketError) as ctx:
                cs.check_read("nosuch.x")
            self.assertEqual(ctx.exception.code, 510)
            hs = dict(cs.handlers("c"))
            self.assertEqual(hs["count"], "r")
            self.assertIn("w", hs["reset"])
            self.assertIn("version", dict(cs.handlers()))

    def test_tcp_port(self):
        with self.connect() as cs:
            port = int(cs.read("click_driver@@ControlSocket.port"))
        with ControlSocket("127.0.0.1", port, timeout=5) as tcp:
            self.assertEqual(tcp.read("c.name"), "c")

    def test_zy_control_path(self):
        with ControlSocket.unix(self.sock) as cs:
            self.assertEqual(cs.packages(), [])
            with self.assertRaises(ControlSocketError) as e:
                cs.load_package("nosuch")
            self.assertIn("can't find package 'nosuch'", e.exception.message)
            before = int(cs.read("c.count"))
            self.assertEqual(cs.create_instance("n1", "Counter", "c[0]"), 200)
            deadline = time.time() + 10
            while int(cs.read("n1.count")) < 3:
                self.assertLess(time.time(), deadline)
                time.sleep(0.02)
            self.assertGreaterEqual(int(cs.read("c.count")), before)
            self.assertIn("c [0]", cs.read("n1.ports"))
            with self.assertRaises(ControlSocketError) as e:
                cs.register_instance("n1", "dst 10.0.0.0/8")
            self.assertIn("does not hang off a gate", e.exception.message)
            self.assertEqual(cs.instances(), [])
            self.assertEqual(cs.free_instance("n1"), 200)
            with self.assertRaises(ControlSocketError):
                cs.read("n1.count")

    def test_zz_hotconfig_keeps_the_connection(self):
        with self.connect() as cs:
            new = CONFIG.replace("c :: Counter", "c2 :: Counter")
            self.assertEqual(cs.write("hotconfig", new), 200)
            self.assertEqual(cs.read("c2.name"), "c2")
            with self.assertRaises(ControlSocketError) as ctx:
                cs.read("c.count")
            self.assertEqual(ctx.exception.code, 510)
            with self.assertRaises(ControlSocketError) as ctx:
                cs.write("hotconfig", "x :: NoSuchClass;")
            self.assertEqual(ctx.exception.code, 520)
            self.assertIn("NoSuchClass", ctx.exception.message)
            self.assertEqual(cs.read("c2.name"), "c2")
            # Put the original back for other tests.
            cs.write("hotconfig", CONFIG)


SECRET = "s3cret-0123456789abcdef"


class SecretTest(unittest.TestCase):
    """`rclick -p PORT+ --control-secret FILE`: the TCP socket wants AUTH;
    the client's secret options and the proxy wrapper for Click's tools."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rclick-py-secret-")
        cls.secret_file = os.path.join(cls.dir, "secret")
        fd = os.open(cls.secret_file, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, (SECRET + "\n").encode())
        os.close(fd)
        cls.sock = os.path.join(cls.dir, "plain.sock")
        base = 30000 + (os.getpid() * 7) % 20000
        cls.proc = subprocess.Popen(
            [RCLICK, "-e", CONFIG, "-u", cls.sock, "-p", "%d+" % base,
             "--control-secret", cls.secret_file],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while not os.path.exists(cls.sock):
            if cls.proc.poll() is not None or time.time() > deadline:
                err = cls.proc.stderr.read().decode() if cls.proc.poll() is not None else ""
                cls.tearDownClass()
                raise RuntimeError("rclick did not start: " + err)
            time.sleep(0.02)
        with ControlSocket.unix(cls.sock, timeout=5) as cs:
            cls.port = int(cs.read("click_driver@@ControlSocket.port"))

    @classmethod
    def tearDownClass(cls):
        ControlTest.tearDownClass.__func__(cls)

    def test_commands_need_auth(self):
        with ControlSocket("127.0.0.1", self.port, timeout=5) as cs:
            self.assertEqual(cs.protocol_version, "1.3")
            with self.assertRaises(ControlSocketError) as ctx:
                cs.read("c.name")
            self.assertEqual(ctx.exception.code, 530)
            self.assertIn("AUTH", ctx.exception.message)
            cs.auth(SECRET)
            self.assertEqual(cs.read("c.name"), "c")

    def test_secret_options(self):
        with ControlSocket("127.0.0.1", self.port, timeout=5, secret=SECRET) as cs:
            self.assertEqual(cs.read("c.name"), "c")
        with ControlSocket("127.0.0.1", self.port, timeout=5,
                           secret_file=self.secret_file) as cs:
            self.assertEqual(cs.read("q.name"), "q")
        with self.assertRaises(ControlSocketError) as ctx:
            ControlSocket("127.0.0.1", self.port, timeout=5, secret="wrong-secret-0123456789")
        self.assertEqual(ctx.exception.code, 530)
        self.assertEqual(ctx.exception.message, "Authentication failed")

    def test_proxy_for_click_tools(self):
        listen = os.path.join(self.dir, "proxy.sock")
        ready = threading.Event()
        threading.Thread(target=proxy, args=(listen, "127.0.0.1", self.port, SECRET, ready),
                         daemon=True).start()
        self.assertTrue(ready.wait(5))
        self.assertEqual(os.stat(listen).st_mode & 0o777, 0o600)
        # A client that knows nothing of AUTH: the plain protocol.
        with ControlSocket.unix(listen, timeout=5) as cs:
            self.assertEqual(cs.protocol_version, "1.3")
            self.assertEqual(cs.read("c.name"), "c")
            self.assertEqual(cs.write("q.capacity", "51"), 200)
            self.assertEqual(cs.read("q.capacity").strip(), "51")
        # Raw bytes, as Click's tools send them.
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(listen)
        s.sendall(b"READ c.name\r\nQUIT\r\n")
        got = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
        s.close()
        self.assertEqual(got, b"Click::ControlSocket/1.3\r\n200 Read handler 'c.name' OK\r\n"
                              b"DATA 1\r\nc200 Goodbye!\r\n")

    def test_proxy_passes_replies_after_the_client_half_closes(self):
        """A client that sends its commands and then shuts its write side
        (`printf 'READ c.name\r\n' | socat - UNIX:...`) gets every reply,
        as it does from the router directly. Before, the proxy closed both
        sides at the client's end of file, often before the replies came."""
        listen = os.path.join(self.dir, "proxy-halfclose.sock")
        ready = threading.Event()
        threading.Thread(target=proxy, args=(listen, "127.0.0.1", self.port, SECRET, ready),
                         daemon=True).start()
        self.assertTrue(ready.wait(5))

        def talk(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(path)
            s.sendall(b"READ c.name\r\nREAD q.name\r\n")
            s.shutdown(socket.SHUT_WR)
            got = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            s.close()
            return got

        want = talk(self.sock)
        self.assertEqual(want, b"Click::ControlSocket/1.3\r\n200 Read handler 'c.name' OK\r\n"
                               b"DATA 1\r\nc200 Read handler 'q.name' OK\r\nDATA 1\r\nq")
        for _ in range(20):
            self.assertEqual(talk(listen), want)

    def test_rclick_call_with_secret_file(self):
        addr = "127.0.0.1:%d" % self.port
        out = subprocess.run([RCLICK, "call", addr, "c.name"], capture_output=True, timeout=10)
        self.assertEqual(out.returncode, 1)
        self.assertIn(b"Authentication required", out.stderr)
        out = subprocess.run([RCLICK, "call", "--secret-file", self.secret_file, addr, "c.name"],
                             capture_output=True, timeout=10)
        self.assertEqual((out.returncode, out.stdout), (0, b"c\n"), out.stderr)
        env = dict(os.environ, RCLICK_CONTROL_SECRET_FILE=self.secret_file)
        out = subprocess.run([RCLICK, "call", addr, "q.name"], capture_output=True,
                             timeout=10, env=env)
        self.assertEqual((out.returncode, out.stdout), (0, b"q\n"), out.stderr)


class FullServerTest(unittest.TestCase):
    """A ControlSocket at MAX_CLIENTS: `rclick call` and this client are
    told so (not silently closed), and get in once a client has been idle
    for a second."""

    def test_full_then_room(self):
        port = 30000 + (os.getpid() * 13) % 20000
        proc = subprocess.Popen(
            [RCLICK, "-e", "cs :: ControlSocket(TCP, %d+, MAX_CLIENTS 2); "
             "Idle -> c :: Counter -> Discard;" % port],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            held = []
            deadline = time.time() + 10
            while True:
                try:
                    held.append(ControlSocket("127.0.0.1", port, timeout=5))
                    break
                except OSError:
                    if proc.poll() is not None or time.time() > deadline:
                        raise
                    time.sleep(0.05)
            port = int(held[0].read("cs.port"))
            held.append(ControlSocket("127.0.0.1", port, timeout=5))
            out = subprocess.run([RCLICK, "call", str(port), "c.count"],
                                 capture_output=True, timeout=10)
            self.assertEqual(out.returncode, 1, out)
            self.assertIn(b"Too many connections (2 open, MAX_CLIENTS 2)", out.stderr)
            with ControlSocket("127.0.0.1", port, timeout=5) as cs:
                with self.assertRaises(ControlSocketError) as ctx:
                    cs.read("c.count")
                self.assertEqual(ctx.exception.code, 590)
            time.sleep(1.1)
            out = subprocess.run([RCLICK, "call", str(port), "c.count"],
                                 capture_output=True, timeout=10)
            self.assertEqual((out.returncode, out.stdout), (0, b"0\n"), out.stderr)
            for cs in held:
                cs.close()
        finally:
            proc.terminate()
            proc.wait(timeout=5)


if __name__ == "__main__":
    unittest.main()
