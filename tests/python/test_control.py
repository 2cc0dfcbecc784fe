"""Tests of clients/python/rclick_control.py against a running rclick
(`rclick -u SOCKET -p PORT+ -R`). The binary is $RCLICK."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

from rclick_control import ControlSocket, ControlSocketError  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
