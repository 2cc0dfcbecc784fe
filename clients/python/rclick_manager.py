"""A user-level Manager for rclick's residential gateway
(conf/home-gateway.click): the hybrid model, where the router hands the
packets it cannot decide to a program beside it, wrapped in UDP, and the
program reconfigures the router through the control socket.

Standard library only; builds on rclick_control.py (same directory).

    from rclick_control import ControlSocket
    from rclick_manager import Manager

    m = Manager(ControlSocket("127.0.0.1", 7777), listen=("127.0.0.1", 7779),
                router=("127.0.0.1", 778), wan_ip="192.0.2.1")
    m.forward_port("tcp", 8080, "192.168.1.20", 80)   # a port forward
    m.block_outbound("tcp", 25)                      # no SMTP out
    m.on_new_connection(lambda f: print("new", f))   # outbound SYN copies
    m.serve_forever()                                # or m.start() / m.stop()

API version: MANAGER_API_VERSION (docs/nat-gateway.md documents it).

The channel: every UDP datagram the router's `manager` Socket sends to
`listen` carries one IP packet (from its IP header). Packets whose source
is outside the home prefix (`lan_net`) are inbound packets that matched no
mapping (their destination is the public address `wan_ip`; a hairpinned
packet's source is `wan_ip` too): the Manager decides on them (its port forwards,
then the `on_inbound` callbacks) and, when it admits one, installs the
mapping (`rw.add_mapping ... dynamic`) and sends the packet back on the
same channel, so that the router processes it again and it goes through.
Packets from the home prefix are copies of outbound packets of the gateway's
MANAGER_CLASS (by default new TCP connections): they go to the
`on_new_connection` callbacks, and are never sent back.

Only the router may talk to the Manager: the router's `manager` Socket
sends from a fixed address and port (CHANNEL_IP:CHANNEL_PORT in the
configuration, default 127.0.0.1:778, a port below 1024 that only root can
bind), and the Manager handles only datagrams whose source is exactly
`router`; datagrams from anywhere else are counted in stats["forged"],
logged and dropped, and the Manager sends packets back to `router` only,
never to a datagram's source.

Run as a program, it is a small Manager with command-line policy:

    python3 rclick_manager.py --control 127.0.0.1:7777 \\
        --listen 127.0.0.1:7779 --router 127.0.0.1:778 --wan-ip 192.0.2.1 \\
        --forward tcp:8080=192.168.1.20:80 --block-outbound tcp:25 --log
"""

import collections
import ipaddress
import os
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rclick_control import ControlSocket, ControlSocketError  # noqa: E402

__all__ = ["Manager", "Frame", "MANAGER_API_VERSION", "ControlSocketError"]

MANAGER_API_VERSION = "1.2"

# The router's end of the channel (CHANNEL_IP:CHANNEL_PORT in
# conf/home-gateway.click).
DEFAULT_ROUTER = ("127.0.0.1", 778)

PROTOCOLS = {"tcp": 6, "udp": 17, "icmp": 1}
PROTOCOL_NAMES = {v: k for k, v in PROTOCOLS.items()}


def _proto_number(proto):
    if isinstance(proto, int):
        return proto
    try:
        return PROTOCOLS[proto.lower()]
    except KeyError:
        raise ValueError("unknown protocol %r" % proto) from None


class Frame:
    """One IPv4 packet from the channel, parsed: `proto` (number),
    `proto_name`, `src`, `dst` (dotted strings), `sport`, `dport` (None
    when not TCP or UDP, or a later fragment), `tcp_flags` (None when not
    TCP), `data` (the packet's bytes). `flow()` is the 5-tuple as the
    mapping handlers write it."""

    __slots__ = ("data", "proto", "src", "dst", "sport", "dport", "tcp_flags")

    def __init__(self, data):
        if len(data) < 20 or data[0] >> 4 != 4:
            raise ValueError("not an IPv4 packet")
        hl = (data[0] & 0x0F) * 4
        if hl < 20 or len(data) < hl:
            raise ValueError("bad IPv4 header length")
        self.data = bytes(data)
        self.proto = data[9]
        self.src = socket.inet_ntoa(data[12:16])
        self.dst = socket.inet_ntoa(data[16:20])
        frag_off = struct.unpack("!H", data[6:8])[0] & 0x1FFF
        self.sport = self.dport = self.tcp_flags = None
        l4 = data[hl:]
        if frag_off == 0 and self.proto in (6, 17) and len(l4) >= 4:
            self.sport, self.dport = struct.unpack("!HH", l4[:4])
            if self.proto == 6 and len(l4) >= 14:
                self.tcp_flags = l4[13]

    @property
    def proto_name(self):
        return PROTOCOL_NAMES.get(self.proto, str(self.proto))

    @property
    def is_syn(self):
        """A TCP SYN without ACK: the first packet of a connection."""
        return self.tcp_flags is not None and self.tcp_flags & 0x12 == 0x02

    def flow(self):
        return "%s %s %d %s %d" % (self.proto_name, self.src, self.sport or 0,
                                   self.dst, self.dport or 0)

    def __repr__(self):
        if self.sport is None:
            return "<Frame %s %s > %s, %d bytes>" % (self.proto_name, self.src,
                                                     self.dst, len(self.data))
        return "<Frame %s %s:%d > %s:%d, %d bytes>" % (
            self.proto_name, self.src, self.sport, self.dst, self.dport,
            len(self.data))


class Manager:
    """The Manager: a UDP endpoint for the router's frames and a control
    connection to reconfigure it.

    control  -- a ControlSocket (rclick_control), or (host, port); any
                object with its read(handler, param) and write(handler,
                value) and close() will do (a test double)
    listen   -- (address, port) the router's `manager` Socket sends to
    router   -- (address, port) the router's `manager` Socket sends from
                (CHANNEL_IP, CHANNEL_PORT): the only source whose datagrams
                are handled, and where packets are sent back
    wan_ip   -- the gateway's public address (WAN_IP)
    lan_net  -- the home prefix (LAN_NET): frames from it are copies of
                outbound packets, the others inbound packets to decide on
    rewriter -- the IPRewriter's element name ("rw")
    inbound, outbound -- the IPFilters' names ("inbound", "outbound")
    manager_class -- the IPClassifier choosing the outbound packets copied
                to the Manager ("manager_class")
    log_lines -- how many of the latest log lines `log` keeps (1000): a
                flood of forged or refused datagrams must not grow the
                Manager's memory; on_log callbacks see every line

    Handler calls may come from the serving thread and the caller's thread
    at once: they are serialized by a lock."""

    def __init__(self, control, listen=("127.0.0.1", 7779), wan_ip=None,
                 lan_net="192.168.1.0/24", rewriter="rw", inbound="inbound",
                 outbound="outbound", router=DEFAULT_ROUTER, log_lines=1000,
                 manager_class="manager_class"):
        if isinstance(control, tuple):
            control = ControlSocket(*control)
        self.control = control
        self.rewriter = rewriter
        self.inbound = inbound
        self.outbound = outbound
        self.manager_class = manager_class
        self.wan_ip = wan_ip
        self.lan_net = ipaddress.IPv4Network(lan_net, strict=False)
        self._lock = threading.Lock()
        self.router = _router_addr(router)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(listen)
        self._sock.settimeout(0.2)
        self._forwards = {}
        self._inbound_cbs = []
        self._new_cbs = []
        self._outbound_blocks = []
        self._inbound_blocks = []
        self._inbound_defaults = None
        self._stop = threading.Event()
        self._thread = None
        self.stats = {"frames": 0, "inbound": 0, "admitted": 0,
                      "refused": 0, "new_connections": 0, "bad": 0,
                      "errors": 0, "forged": 0}
        self.log = collections.deque(maxlen=log_lines)
        self._log_cbs = []

    @property
    def address(self):
        """The (address, port) the Manager receives frames on."""
        return self._sock.getsockname()

    # -- reconfiguring the router (each a handler write)

    def _write(self, handler, value):
        with self._lock:
            return self.control.write(handler, value)

    def _read(self, handler, param=None):
        with self._lock:
            return self.control.read(handler, param)

    def add_mapping(self, proto, flow, rewritten, outputs=None, dynamic=False):
        """Installs a mapping: `flow` and `rewritten` are (saddr, sport,
        daddr, dport); `outputs` (FOUTPUT, ROUTPUT) or the rewriter's
        default; `dynamic` lets it expire like a mapping the rewriter made
        (default: pinned, until removed)."""
        value = "%s %s %d %s %d => %s %d %s %d" % (
            (proto,) + tuple(flow) + tuple(rewritten))
        if outputs is not None:
            value += " %d %d" % tuple(outputs)
        if dynamic:
            value += " dynamic"
        self._write("%s.add_mapping" % self.rewriter, value)

    def remove_mapping(self, proto, flow):
        """Removes the mapping of `flow` (saddr, sport, daddr, dport; either
        direction)."""
        self._write("%s.remove_mapping" % self.rewriter,
                    "%s %s %d %s %d" % ((proto,) + tuple(flow)))

    def mappings(self, proto="tcp"):
        """The rewriter's table for `proto`, one line per direction."""
        return self._read("%s.%s_table" % (self.rewriter, proto)).splitlines()

    def timeouts(self):
        """The rewriter's timeouts: {keyword: seconds} (its `timeouts`
        handler, e.g. {"TCP_TIMEOUT": 7440, "UDP_TIMEOUT": 300, ...})."""
        out = {}
        for line in self._read("%s.timeouts" % self.rewriter).splitlines():
            word, _, value = line.partition(" ")
            out[word] = int(value)
        return out

    def bindings(self):
        """How many inside endpoints hold an outside port (the rewriter's
        endpoint-independent mappings, ENDPOINT_INDEPENDENT)."""
        return int(self._read("%s.bindings" % self.rewriter).strip() or 0)

    def hotswap(self, config):
        """Replaces the router's configuration by `config` (its text)
        while it runs: the driver's `hotconfig` handler, which needs the
        router started with `rclick -R`. The rewriters' mappings and
        bindings carry over to the same-named rewriters of the new
        configuration, so connections through the NAT go on. Raises
        ControlSocketError if the new configuration is refused (the old
        one then keeps running)."""
        self._write("hotconfig", config)

    def set_manager_class(self, pattern):
        """Chooses which outbound packets are copied to the Manager from
        now on: an IPClassifier pattern (e.g. "udp dst port 53" for DNS
        queries, or "tcp opt syn and not tcp opt ack", the default: new
        TCP connections), written to the classifier's `config`."""
        self._write("%s.config" % self.manager_class, "%s, -" % pattern)

    def set_inbound_rules(self, rules):
        """Replaces the inbound IPFilter's rules (a list of IPFilter rules,
        e.g. ["deny src net 203.0.113.0/24", "allow all"])."""
        self._write("%s.config" % self.inbound, ", ".join(rules))

    def set_outbound_rules(self, rules):
        """Replaces the outbound IPFilter's rules."""
        self._write("%s.config" % self.outbound, ", ".join(rules))

    def block_outbound(self, proto, port):
        """Drops LAN packets to `port` from now on (the outbound IPFilter),
        and removes the mappings already made for it."""
        self._outbound_blocks.append("deny %s and dst port %d" % (proto, port))
        self.set_outbound_rules(self._outbound_blocks + ["allow all"])
        for line in self.mappings(proto):
            # "(A, P, B, Q) => (...) ..." lines; both directions are listed.
            try:
                key = line.split(")")[0].lstrip("(").split(", ")
                if int(key[3]) == port:
                    self.remove_mapping(proto, (key[0], int(key[1]), key[2],
                                                int(key[3])))
            except (IndexError, ValueError, ControlSocketError):
                pass

    def block_inbound_from(self, net):
        """Drops every packet from `net` (a prefix) at the WAN side. The
        inbound IPFilter's rules as they were at the first block (the
        configuration's defaults: bogon sources dropped) stay after the
        blocks, so that blocking one prefix does not open the firewall to
        the others."""
        if self._inbound_defaults is None:
            try:
                rules = " ".join(self._read("%s.config" % self.inbound).split())
            except ControlSocketError:
                rules = ""
            self._inbound_defaults = rules or "allow all"
        self._inbound_blocks.append("deny src net %s" % net)
        self.set_inbound_rules(self._inbound_blocks + [self._inbound_defaults])

    # -- policy

    def forward_port(self, proto, public_port, lan_ip, lan_port):
        """A port forward: connections (or UDP flows) from anywhere to
        WAN_IP:public_port reach lan_ip:lan_port. Each is admitted when its
        first packet reaches the Manager, with a dynamic mapping."""
        self._forwards[(_proto_number(proto), public_port)] = (lan_ip, lan_port)

    def unforward_port(self, proto, public_port):
        """Stops admitting new flows to a forwarded port (flows already
        admitted go on until they end)."""
        self._forwards.pop((_proto_number(proto), public_port), None)

    def on_inbound(self, callback):
        """callback(frame) for inbound packets no port forward takes; it
        returns (lan_ip, lan_port) to admit the flow there, or None."""
        self._inbound_cbs.append(callback)

    def on_log(self, callback):
        """callback(line) for every log line, as it is logged (`log`
        keeps only the latest ones)."""
        self._log_cbs.append(callback)

    def _note(self, line):
        self.log.append(line)
        for cb in self._log_cbs:
            cb(line)

    def on_new_connection(self, callback):
        """callback(frame) for the copies of new outbound connections."""
        self._new_cbs.append(callback)

    # -- the channel

    def send_back(self, frame):
        """Sends a packet back to the router, to be processed as if it had
        arrived on the WAN side (it passes the inbound firewall again)."""
        data = frame.data if isinstance(frame, Frame) else bytes(frame)
        self._sock.sendto(data, self.router)

    def _admit(self, frame, lan_ip, lan_port):
        self.add_mapping(frame.proto_name,
                         (frame.src, frame.sport, frame.dst, frame.dport),
                         (frame.src, frame.sport, lan_ip, lan_port),
                         outputs=(1, 0), dynamic=True)
        self.stats["admitted"] += 1
        self._note("admit %s -> %s:%d" % (frame.flow(), lan_ip, lan_port))
        self.send_back(frame)

    def handle(self, frame):
        """Decides on one frame (called by the serving loop)."""
        self.stats["frames"] += 1
        inbound = ipaddress.IPv4Address(frame.src) not in self.lan_net
        if inbound and frame.sport is not None:
            self.stats["inbound"] += 1
            target = self._forwards.get((frame.proto, frame.dport))
            if target is None:
                for cb in self._inbound_cbs:
                    target = cb(frame)
                    if target:
                        break
            if target:
                self._admit(frame, target[0], target[1])
            else:
                self.stats["refused"] += 1
                self._note("refuse %s" % frame.flow())
        elif not inbound:
            self.stats["new_connections"] += 1
            for cb in self._new_cbs:
                cb(frame)

    def poll(self, timeout=0.2):
        """Receives and handles at most one frame; whether there was one."""
        self._sock.settimeout(timeout)
        try:
            data, addr = self._sock.recvfrom(65535)
        except socket.timeout:
            return False
        if _inet_addr(addr) != self.router:
            # Not the router: a stray or hostile local process.
            self.stats["forged"] += 1
            self._note("forged %s:%d ignored" % (addr[0], addr[1]))
            return True
        try:
            frame = Frame(data)
        except ValueError:
            self.stats["bad"] += 1
            return True
        self.handle(frame)
        return True

    def serve(self, timeout=0.2):
        """poll(), but a failed handler write (the mapping table full, the
        control connection lost) costs that frame only: it is counted in
        stats["errors"] and logged, and serving goes on."""
        try:
            return self.poll(timeout)
        except ControlSocketError as e:
            self.stats["errors"] += 1
            self._note("error %s" % e)
            return True

    def serve_forever(self):
        """Handles frames until stop()."""
        while not self._stop.is_set():
            self.serve()

    def start(self):
        """Serves in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self):
        self.stop()
        self._sock.close()
        self.control.close()


def _inet_addr(addr):
    """(address, port) with the address in dotted form, for comparisons
    (a name such as "localhost" or an IPv4-mapped form such as
    "::ffff:127.0.0.1" is resolved once)."""
    host, port = addr[0], int(addr[1])
    return (socket.gethostbyname(host), port)


def _router_addr(addr):
    """The router's end of the channel as _inet_addr gives it; ValueError
    unless it is one IPv4 address and port. A wildcard (0.0.0.0, port 0)
    would match no datagram's source, since the kernel reports the real
    one: every frame of the router would be dropped as forged."""
    try:
        host, port = _inet_addr(addr)
    except (OSError, UnicodeError) as e:
        raise ValueError("router %r: not an IPv4 address (%s)" % (addr[0], e))
    if host == "0.0.0.0" or not 0 < port < 65536:
        raise ValueError("router %s:%d: give the address and port the router's "
                         "Socket binds (CHANNEL_IP:CHANNEL_PORT), not a wildcard"
                         % (host, port))
    return (host, port)


def _hostport(s):
    host, _, port = s.rpartition(":")
    return host, int(port)


def _main(argv):
    import argparse
    import signal
    ap = argparse.ArgumentParser(description="rclick residential-gateway Manager")
    ap.add_argument("--control", required=True, help="HOST:PORT of the control socket")
    ap.add_argument("--control-secret-file",
                    help="the control socket's secret (rclick --control-secret FILE)")
    ap.add_argument("--listen", default="127.0.0.1:7779", help="HOST:PORT for frames")
    ap.add_argument("--router", default="%s:%d" % DEFAULT_ROUTER,
                    help="HOST:PORT the router's frames come from (CHANNEL_IP:CHANNEL_PORT); "
                    "datagrams from anywhere else are ignored")
    ap.add_argument("--wan-ip", required=True, help="the gateway's public address")
    ap.add_argument("--lan-net", default="192.168.1.0/24", help="the home prefix")
    ap.add_argument("--rewriter", default="rw")
    ap.add_argument("--forward", action="append", default=[],
                    help="PROTO:PORT=LANIP:LANPORT, a port forward")
    ap.add_argument("--block-outbound", action="append", default=[],
                    help="PROTO:PORT, LAN packets to this port are dropped")
    ap.add_argument("--log", action="store_true", help="print each decision")
    a = ap.parse_args(argv)
    host, port = _hostport(a.control)
    m = Manager(ControlSocket(host, port, secret_file=a.control_secret_file),
                listen=_hostport(a.listen), router=_hostport(a.router),
                wan_ip=a.wan_ip, lan_net=a.lan_net, rewriter=a.rewriter)
    for f in a.forward:
        left, right = f.split("=")
        proto, pport = left.split(":")
        lip, lport = _hostport(right)
        ipaddress.IPv4Address(lip)
        m.forward_port(proto, int(pport), lip, lport)
    for b in a.block_outbound:
        proto, port = b.split(":")
        m.block_outbound(proto, int(port))
    if a.log:
        m.on_new_connection(lambda f: print("new %s" % f.flow(), flush=True))
        m.on_log(lambda line: print(line, flush=True))
    signal.signal(signal.SIGTERM, lambda *_: m._stop.set())
    print("manager ready on %s:%d for frames from %s:%d" % (m.address + m.router),
          flush=True)
    try:
        while not m._stop.is_set():
            m.serve()
    except KeyboardInterrupt:
        pass
    print("stats %s" % " ".join("%s=%d" % kv for kv in sorted(m.stats.items())),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
