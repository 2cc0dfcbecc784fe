"""Unit tests of rclick_manager.py without a router: a recording stand-in
for the control socket, real UDP sockets for the channel. Run:
python3 -m unittest discover -s clients/python/tests (or through
crates/elements/tests/nat_manager.rs)."""

import os
import socket
import struct
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from rclick_manager import Frame, Manager, MANAGER_API_VERSION  # noqa: E402
from rclick_control import ControlSocketError  # noqa: E402


def ipv4(src, dst, proto, payload, frag=0):
    total = 20 + len(payload)
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, frag, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    return h + payload


def tcp(src, sport, dst, dport, flags):
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, flags, 65535, 0, 0)
    return ipv4(src, dst, 6, seg)


def udp(src, sport, dst, dport, data=b"x"):
    return ipv4(src, dst, 17, struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data)


class FakeControl:
    """Records writes; answers reads from `tables`; fails writes to
    handlers in `failing`."""

    def __init__(self):
        self.writes = []
        self.tables = {}
        self.failing = set()

    def write(self, handler, value=""):
        if handler in self.failing:
            raise ControlSocketError(520, "mapping table full")
        self.writes.append((handler, value))
        return 200

    def read(self, handler, param=None):
        return self.tables.get(handler, "")

    def close(self):
        pass


class ManagerTest(unittest.TestCase):
    def setUp(self):
        self.cs = FakeControl()
        # The router's end of the channel.
        self.router = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.router.bind(("127.0.0.1", 0))
        self.router.settimeout(2)
        self.m = Manager(self.cs, listen=("127.0.0.1", 0), wan_ip="192.0.2.1",
                         lan_net="192.168.1.0/24", router=self.router.getsockname())
        # Another local process.
        self.stray = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.stray.bind(("127.0.0.1", 0))

    def tearDown(self):
        self.m.close()
        self.router.close()
        self.stray.close()

    def deliver(self, packet):
        self.router.sendto(packet, self.m.address)
        self.assertTrue(self.m.poll(2))

    def test_version(self):
        self.assertEqual(MANAGER_API_VERSION, "1.2")

    def test_frame_parsing(self):
        f = Frame(tcp("198.51.100.7", 50000, "192.0.2.1", 8080, 0x02))
        self.assertEqual((f.proto_name, f.src, f.sport, f.dst, f.dport),
                         ("tcp", "198.51.100.7", 50000, "192.0.2.1", 8080))
        self.assertTrue(f.is_syn)
        self.assertFalse(Frame(tcp("1.1.1.1", 1, "2.2.2.2", 2, 0x12)).is_syn)
        self.assertEqual(f.flow(), "tcp 198.51.100.7 50000 192.0.2.1 8080")
        later = Frame(ipv4("1.1.1.1", "2.2.2.2", 17, b"\0" * 16, frag=100))
        self.assertIsNone(later.sport)
        for bad in [b"", b"\x45" * 10, b"\x65" + b"\0" * 30, b"\x4f" + b"\0" * 30]:
            with self.assertRaises(ValueError):
                Frame(bad)

    def test_port_forward_admits_and_sends_back(self):
        self.m.forward_port("tcp", 8080, "192.168.1.20", 80)
        syn = tcp("198.51.100.7", 50000, "192.0.2.1", 8080, 0x02)
        self.deliver(syn)
        self.assertEqual(self.cs.writes, [(
            "rw.add_mapping",
            "tcp 198.51.100.7 50000 192.0.2.1 8080 => "
            "198.51.100.7 50000 192.168.1.20 80 1 0 dynamic")])
        back, _ = self.router.recvfrom(65535)
        self.assertEqual(back, syn)
        self.assertEqual(self.m.stats["admitted"], 1)

    def test_a_forged_sender_is_refused(self):
        # A stray local process sends what the router would: a SYN to a
        # forwarded port, and an outbound copy. Neither is handled: no
        # mapping, no callback, nothing sent back, to it or to the router.
        self.m.forward_port("tcp", 8080, "192.168.1.20", 80)
        seen = []
        self.m.on_new_connection(seen.append)
        self.m.on_inbound(lambda f: ("192.168.1.20", 22))
        syn = tcp("198.51.100.7", 50000, "192.0.2.1", 8080, 0x02)
        for packet in (syn, tcp("198.51.100.7", 50001, "192.0.2.1", 22, 0x02),
                       tcp("192.168.1.10", 43740, "203.0.113.5", 80, 0x02)):
            self.stray.sendto(packet, self.m.address)
            self.assertTrue(self.m.poll(2))
        # From the router's own address but another port: refused too.
        other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        other.bind(("127.0.0.1", 0))
        other.sendto(syn, self.m.address)
        self.assertTrue(self.m.poll(2))
        other.close()
        self.assertEqual(self.cs.writes, [])
        self.assertEqual(seen, [])
        self.assertEqual(self.m.stats["forged"], 4)
        self.assertEqual(self.m.stats["frames"], 0)
        self.assertTrue(all(line.startswith("forged 127.0.0.1:") for line in self.m.log),
                        self.m.log)
        for s in (self.stray, self.router):
            s.settimeout(0.3)
            with self.assertRaises(socket.timeout):
                s.recvfrom(65535)
        # The router's own datagram still goes through, and the packet goes
        # back to the router.
        self.router.settimeout(2)
        self.deliver(syn)
        self.assertEqual(len(self.cs.writes), 1)
        back, addr = self.router.recvfrom(65535)
        self.assertEqual((back, addr), (syn, self.m.address))

    def test_packets_go_back_to_the_configured_router_only(self):
        # send_back never goes to the last sender: not even after a forged
        # datagram arrived.
        self.stray.sendto(b"\x45" + b"\0" * 30, self.m.address)
        self.assertTrue(self.m.poll(2))
        self.m.send_back(udp("198.51.100.7", 6000, "192.0.2.1", 5000))
        data, _ = self.router.recvfrom(65535)
        self.assertEqual(Frame(data).sport, 6000)
        self.stray.settimeout(0.3)
        with self.assertRaises(socket.timeout):
            self.stray.recvfrom(65535)

    def test_the_log_is_bounded(self):
        # Every forged (or refused) datagram is logged: a local flood must
        # not grow the Manager's memory. `log` keeps the latest lines;
        # on_log callbacks see them all.
        m = Manager(FakeControl(), listen=("127.0.0.1", 0), wan_ip="192.0.2.1",
                    router=self.router.getsockname(), log_lines=5)
        seen = []
        m.on_log(seen.append)
        try:
            for i in range(8):
                self.stray.sendto(b"x" * (i + 1), m.address)
                self.assertTrue(m.poll(2))
            self.assertEqual(m.stats["forged"], 8)
            self.assertEqual(len(seen), 8)
            self.assertEqual(list(m.log), seen[-5:])
        finally:
            m.close()

    def test_router_in_other_forms_matches(self):
        # The router's address given as a name or an IPv4-mapped IPv6
        # form is the same source as the dotted one recvfrom reports.
        port = self.router.getsockname()[1]
        for form in ("localhost", "::ffff:127.0.0.1"):
            m = Manager(FakeControl(), listen=("127.0.0.1", 0), wan_ip="192.0.2.1",
                        router=(form, port))
            try:
                m.forward_port("udp", 5000, "192.168.1.20", 5000)
                self.router.sendto(udp("198.51.100.7", 6000, "192.0.2.1", 5000), m.address)
                self.assertTrue(m.poll(2))
                self.assertEqual((m.stats["forged"], m.stats["admitted"]), (0, 1), form)
                self.router.recvfrom(65535)
            finally:
                m.close()

    def test_router_must_be_one_address_and_port(self):
        # A wildcard address or port would match no datagram's source
        # (the kernel fills in the real one): every frame of the router
        # would be dropped as forged. Refused at once instead.
        for router in (("0.0.0.0", 778), ("127.0.0.1", 0), ("::", 778)):
            with self.assertRaises(ValueError, msg=repr(router)):
                Manager(FakeControl(), listen=("127.0.0.1", 0), wan_ip="192.0.2.1",
                        router=router)

    def test_unforwarded_inbound_is_refused_and_not_sent_back(self):
        self.m.forward_port("tcp", 8080, "192.168.1.20", 80)
        self.deliver(tcp("198.51.100.7", 50000, "192.0.2.1", 8081, 0x02))
        self.deliver(udp("198.51.100.7", 53, "192.0.2.1", 8080))  # UDP, not TCP
        self.assertEqual(self.cs.writes, [])
        self.assertEqual(self.m.stats["refused"], 2)
        self.router.settimeout(0.3)
        with self.assertRaises(socket.timeout):
            self.router.recvfrom(65535)
        # After unforward_port, the forwarded port is refused too.
        self.m.unforward_port("tcp", 8080)
        self.deliver(tcp("198.51.100.7", 50001, "192.0.2.1", 8080, 0x02))
        self.assertEqual(self.m.stats["refused"], 3)

    def test_inbound_callback_decides(self):
        self.m.on_inbound(lambda f: ("192.168.1.40", 22)
                          if f.src.startswith("198.51.100.") else None)
        self.deliver(tcp("198.51.100.9", 40000, "192.0.2.1", 2222, 0x02))
        self.deliver(tcp("203.0.113.9", 40000, "192.0.2.1", 2222, 0x02))
        self.assertEqual(len(self.cs.writes), 1)
        self.assertIn("192.168.1.40 22 1 0 dynamic", self.cs.writes[0][1])
        self.assertEqual((self.m.stats["admitted"], self.m.stats["refused"]), (1, 1))

    def test_hairpinned_packets_are_inbound(self):
        # After the NAPT a LAN host's packet to the public address has the
        # public address as its source: an inbound packet to decide on.
        self.m.forward_port("tcp", 8080, "192.168.1.20", 80)
        self.deliver(tcp("192.0.2.1", 43740, "192.0.2.1", 8080, 0x02))
        self.assertEqual(self.cs.writes[0][1],
                         "tcp 192.0.2.1 43740 192.0.2.1 8080 => "
                         "192.0.2.1 43740 192.168.1.20 80 1 0 dynamic")

    def test_outbound_copies_go_to_callbacks_only(self):
        seen = []
        self.m.on_new_connection(seen.append)
        self.m.forward_port("tcp", 8080, "192.168.1.20", 80)
        # A LAN host's SYN to the public address's forwarded port: a copy,
        # not a packet to admit.
        self.deliver(tcp("192.168.1.10", 43740, "192.0.2.1", 8080, 0x02))
        self.assertEqual([f.src for f in seen], ["192.168.1.10"])
        self.assertEqual(self.cs.writes, [])
        self.assertEqual(self.m.stats["new_connections"], 1)

    def test_bad_frames_are_counted(self):
        self.deliver(b"\x00\x01garbage")
        self.assertEqual(self.m.stats["bad"], 1)
        self.assertEqual(self.m.stats["frames"], 0)

    def test_failed_admission_raises_and_sends_nothing(self):
        self.cs.failing.add("rw.add_mapping")
        self.m.forward_port("udp", 5000, "192.168.1.20", 5000)
        with self.assertRaises(ControlSocketError):
            self.deliver(udp("198.51.100.7", 6000, "192.0.2.1", 5000))
        self.router.settimeout(0.3)
        with self.assertRaises(socket.timeout):
            self.router.recvfrom(65535)

    def test_block_outbound_writes_rules_and_removes_mappings(self):
        self.cs.tables["rw.tcp_table"] = (
            "(192.168.1.10, 40000, 203.0.113.5, 25) => (192.0.2.1, 40000, 203.0.113.5, 25) [*0 1] i0 exp300\n"
            "(203.0.113.5, 25, 192.0.2.1, 40000) => (203.0.113.5, 25, 192.168.1.10, 40000) [0 *1] i0 exp300\n"
            "(192.168.1.10, 40001, 203.0.113.5, 80) => (192.0.2.1, 40001, 203.0.113.5, 80) [*0 1] i0 exp300\n")
        self.m.block_outbound("tcp", 25)
        self.m.block_inbound_from("203.0.113.0/24")
        self.assertEqual(self.cs.writes, [
            ("outbound.config", "deny tcp and dst port 25, allow all"),
            ("rw.remove_mapping", "tcp 192.168.1.10 40000 203.0.113.5 25"),
            ("inbound.config", "deny src net 203.0.113.0/24, allow all"),
        ])

    def test_inbound_blocks_keep_the_routers_default_rules(self):
        self.cs.tables["inbound.config"] = (
            "1 ip frag,\n   1 src net 10.0.0.0/8\n      or src net 127.0.0.0/8,\n   allow all")
        self.m.block_inbound_from("203.0.113.0/24")
        self.m.block_inbound_from("198.51.100.0/24")
        defaults = "1 ip frag, 1 src net 10.0.0.0/8 or src net 127.0.0.0/8, allow all"
        self.assertEqual(self.cs.writes, [
            ("inbound.config", "deny src net 203.0.113.0/24, " + defaults),
            ("inbound.config",
             "deny src net 203.0.113.0/24, deny src net 198.51.100.0/24, " + defaults),
        ])

    def test_mapping_calls(self):
        self.m.add_mapping("udp", ("1.1.1.1", 1, "2.2.2.2", 2), ("1.1.1.1", 1, "3.3.3.3", 3))
        self.m.add_mapping("tcp", ("1.1.1.1", 1, "2.2.2.2", 2), ("4.4.4.4", 4, "2.2.2.2", 2),
                           outputs=(0, 1))
        self.m.remove_mapping("udp", ("1.1.1.1", 1, "2.2.2.2", 2))
        self.assertEqual(self.cs.writes, [
            ("rw.add_mapping", "udp 1.1.1.1 1 2.2.2.2 2 => 1.1.1.1 1 3.3.3.3 3"),
            ("rw.add_mapping", "tcp 1.1.1.1 1 2.2.2.2 2 => 4.4.4.4 4 2.2.2.2 2 0 1"),
            ("rw.remove_mapping", "udp 1.1.1.1 1 2.2.2.2 2"),
        ])

    def test_timeouts_bindings_and_hotswap(self):
        self.cs.tables["rw.timeouts"] = "TCP_TIMEOUT 7440\nUDP_TIMEOUT 300\nREAP_INTERVAL 900\n"
        self.cs.tables["rw.bindings"] = "3"
        self.assertEqual(self.m.timeouts(),
                         {"TCP_TIMEOUT": 7440, "UDP_TIMEOUT": 300, "REAP_INTERVAL": 900})
        self.assertEqual(self.m.bindings(), 3)
        self.m.hotswap("x :: Idle;")
        self.m.set_manager_class("udp dst port 53")
        self.assertEqual(self.cs.writes, [("hotconfig", "x :: Idle;"),
                                          ("manager_class.config", "udp dst port 53, -")])
        self.cs.failing.add("hotconfig")
        with self.assertRaises(ControlSocketError):
            self.m.hotswap("bad")

    def test_background_thread(self):
        self.m.forward_port("udp", 5000, "192.168.1.20", 5000)
        self.m.start()
        for i in range(5):
            self.router.sendto(udp("198.51.100.7", 6000 + i, "192.0.2.1", 5000), self.m.address)
        for _ in range(5):
            self.router.recvfrom(65535)
        self.m.stop()
        self.assertEqual(self.m.stats["admitted"], 5)

    def test_a_failed_write_does_not_stop_the_serving_thread(self):
        # A refused mapping (table full, a lost control connection) costs
        # that frame only: the Manager goes on serving the next ones.
        self.m.forward_port("udp", 5000, "192.168.1.20", 5000)
        self.cs.failing.add("rw.add_mapping")
        self.m.start()
        self.router.sendto(udp("198.51.100.7", 6000, "192.0.2.1", 5000), self.m.address)
        for _ in range(100):
            if self.m.stats["errors"]:
                break
            threading.Event().wait(0.02)
        self.assertEqual(self.m.stats["errors"], 1)
        self.cs.failing.clear()
        self.router.sendto(udp("198.51.100.7", 6001, "192.0.2.1", 5000), self.m.address)
        data, _ = self.router.recvfrom(65535)
        self.assertEqual(Frame(data).sport, 6001)
        self.m.stop()
        self.assertEqual(self.m.stats["admitted"], 1)
        self.assertTrue(any(line.startswith("error") for line in self.m.log), self.m.log)



class CommandLineTest(unittest.TestCase):
    """The program: `--control-secret-file` reaches the control socket."""

    def run_manager(self, secret_in_file, router_secret):
        import subprocess
        import tempfile
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        srv.settimeout(10)
        said = []

        def control():
            # A control socket in shared-secret mode: greeting, then AUTH.
            try:
                c, _ = srv.accept()
            except OSError:
                return
            with c:
                c.settimeout(10)
                c.sendall(b"Click::ControlSocket/1.3\r\n")
                f = c.makefile("rb")
                line = f.readline().decode().strip()
                said.append(line)
                if line == "AUTH " + router_secret:
                    c.sendall(b"200 OK\r\n")
                    said.append(f.readline().decode().strip())
                else:
                    c.sendall(b"530 Bad secret\r\n")

        t = threading.Thread(target=control, daemon=True)
        t.start()
        with tempfile.NamedTemporaryFile("w", suffix=".secret", delete=False) as sf:
            sf.write(secret_in_file + "\n")
        prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                            "rclick_manager.py")
        proc = subprocess.Popen(
            [sys.executable, prog, "--control", "127.0.0.1:%d" % srv.getsockname()[1],
             "--control-secret-file", sf.name, "--listen", "127.0.0.1:0",
             "--wan-ip", "192.0.2.1"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            first = proc.stdout.readline()
            if first.startswith("manager ready"):
                proc.terminate()
            out, _ = proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.unlink(sf.name)
            srv.close()
        t.join(5)
        return said, first + out, proc.returncode

    def test_control_secret_file_authenticates(self):
        said, out, _ = self.run_manager("s3cret", "s3cret")
        self.assertEqual(said[:1], ["AUTH s3cret"], out)
        self.assertTrue(out.startswith("manager ready"), out)

    def test_a_wrong_secret_stops_the_manager(self):
        said, out, code = self.run_manager("guess", "s3cret")
        self.assertEqual(said, ["AUTH guess"], out)
        self.assertNotIn("manager ready", out)
        self.assertNotEqual(code, 0, out)

if __name__ == "__main__":
    unittest.main()
