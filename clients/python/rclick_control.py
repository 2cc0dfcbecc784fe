"""Client for the Click ControlSocket protocol (version 1.3), as spoken by
rclick's ControlSocket element and by Click itself.

Standard library only.

    from rclick_control import ControlSocket, ControlSocketError
    with ControlSocket("127.0.0.1", 7777) as cs:
        print(cs.read("c.count"))
        cs.write("q.capacity", "200")
        print(cs.handlers("q"))

A socket in rclick's shared-secret mode (ControlSocket SECRET_FILE, or
`rclick --control-secret FILE`) wants `AUTH SECRET` first: pass
`secret=...` or `secret_file=...`.

Run as a program, it is also the wrapper through which Click's own tools
(which know nothing of AUTH) use such a socket:

    python3 rclick_control.py proxy --listen /run/user/1000/click.sock \
        --connect 127.0.0.1:7777 --secret-file ~/.rclick-secret

serves a Unix socket (mode 0600: only you may connect) and, for each
client, connects to the router, authenticates, and then relays bytes both
ways, so the client sees the plain protocol, greeting first.
"""

import os
import select
import socket
import sys
import threading

__all__ = ["ControlSocket", "ControlSocketError", "read_secret_file", "proxy"]

PROTOCOL_PREFIX = "Click::ControlSocket/"


class ControlSocketError(Exception):
    """An error reply (code and message lines), or a broken connection
    (code 0)."""

    def __init__(self, code, message, lines=None):
        super().__init__("%d %s" % (code, message) if code else message)
        self.code = code
        self.message = message
        self.lines = list(lines or [message])


class ControlSocket:
    """A connection to a ControlSocket. TCP with ControlSocket(host, port),
    Unix-domain with ControlSocket.unix(path)."""

    def __init__(self, host="127.0.0.1", port=7777, timeout=30.0, _sock=None,
                 secret=None, secret_file=None):
        if _sock is None:
            _sock = socket.create_connection((host, port), timeout=timeout)
        self._sock = _sock
        self._sock.settimeout(timeout)
        self._buf = b""
        greeting = self._line()
        if not greeting.startswith(PROTOCOL_PREFIX):
            self.close()
            raise ControlSocketError(0, "unexpected greeting %r" % greeting)
        self.protocol_version = greeting[len(PROTOCOL_PREFIX):]
        if secret_file is not None:
            secret = read_secret_file(secret_file)
        if secret is not None:
            self.auth(secret)

    @classmethod
    def unix(cls, path, timeout=30.0, secret=None, secret_file=None):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
        except OSError:
            s.close()
            raise
        return cls(timeout=timeout, _sock=s, secret=secret, secret_file=secret_file)

    def auth(self, secret):
        """Says `AUTH SECRET` (rclick's shared-secret mode). Raises
        ControlSocketError (530) if the router refuses it; it then closes
        the connection."""
        if isinstance(secret, bytes):
            secret = secret.decode()
        secret = "".join(secret.split())
        if not secret:
            raise ValueError("empty secret")
        self._send(("AUTH %s\r\n" % secret).encode())
        code, lines = self._reply()
        self._check(code, lines)

    # -- context manager
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Says QUIT (if still possible) and closes the connection."""
        if self._sock is None:
            return
        try:
            self._sock.sendall(b"QUIT\r\n")
        except OSError:
            pass
        try:
            self._sock.close()
        finally:
            self._sock = None

    # -- low level
    def _fill(self):
        if self._sock is None:
            raise ControlSocketError(0, "connection closed")
        try:
            chunk = self._sock.recv(65536)
        except OSError as e:
            raise ControlSocketError(0, "connection error: %s" % e)
        if not chunk:
            raise ControlSocketError(0, "connection closed by the router")
        self._buf += chunk

    def _line(self):
        while b"\n" not in self._buf:
            self._fill()
        line, self._buf = self._buf.split(b"\n", 1)
        return line.rstrip(b"\r").decode("utf-8", "replace")

    def _exact(self, n):
        while len(self._buf) < n:
            self._fill()
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def _send(self, data):
        if self._sock is None:
            raise ControlSocketError(0, "connection closed")
        try:
            self._sock.sendall(data)
        except OSError as e:
            raise ControlSocketError(0, "connection error: %s" % e)

    def _reply(self):
        """Reads one reply; returns (code, message lines)."""
        lines = []
        while True:
            line = self._line()
            if len(line) < 3 or not line[:3].isdigit() or line[3:4] not in ("", " ", "-"):
                raise ControlSocketError(0, "malformed reply %r" % line)
            lines.append(line[4:])
            if line[3:4] != "-":
                return int(line[:3]), lines

    def _check(self, code, lines):
        if code // 100 != 2:
            detail = lines[1:] if len(lines) > 1 else lines
            raise ControlSocketError(code, "\n".join(detail), lines)

    def _data(self):
        line = self._line()
        if not line.startswith("DATA "):
            raise ControlSocketError(0, "expected DATA, got %r" % line)
        try:
            n = int(line[5:])
        except ValueError:
            raise ControlSocketError(0, "bad DATA line %r" % line)
        return self._exact(n)

    @staticmethod
    def _bytes(value):
        if isinstance(value, bytes):
            return value
        return str(value).encode("utf-8")

    @staticmethod
    def _name(handler):
        if not handler or any(c.isspace() for c in handler):
            raise ValueError("bad handler name %r" % handler)
        return handler

    # -- the API
    def read_bytes(self, handler, param=None):
        """Reads a handler; returns its value as bytes."""
        h = self._name(handler)
        if param is None:
            self._send(("READ %s\r\n" % h).encode())
        else:
            p = self._bytes(param)
            self._send(("READDATA %s %d\r\n" % (h, len(p))).encode() + p)
        code, lines = self._reply()
        self._check(code, lines)
        return self._data()

    def read(self, handler, param=None):
        """Reads a handler (with an optional parameter); returns a str."""
        return self.read_bytes(handler, param).decode("utf-8", "replace")

    def write(self, handler, value=""):
        """Writes a handler. Returns the reply code (200, or 220 for OK with
        warnings)."""
        v = self._bytes(value)
        self._send(("WRITEDATA %s %d\r\n" % (self._name(handler), len(v))).encode() + v)
        code, lines = self._reply()
        self._check(code, lines)
        return code

    def _check_handler(self, command, handler):
        self._send(("%s %s\r\n" % (command, self._name(handler))).encode())
        code, lines = self._reply()
        if code // 100 == 2:
            return True
        if code in (511, 530):
            return False
        self._check(code, lines)
        return False

    def check_read(self, handler):
        """Whether `handler` exists and is readable."""
        return self._check_handler("CHECKREAD", handler)

    def check_write(self, handler):
        """Whether `handler` exists and is writable (here)."""
        return self._check_handler("CHECKWRITE", handler)

    def handlers(self, element=None):
        """(name, flags) pairs of an element's handlers, or the global ones
        when `element` is None."""
        text = self.read("%s.handlers" % element if element else "handlers")
        out = []
        for line in text.splitlines():
            if line:
                name, _, flags = line.partition("\t")
                out.append((name, flags))
        return out

    def elements(self):
        """Element names, in router order."""
        lines = self.read("list").splitlines()
        return lines[1:]

    # -- element packages and the plugin control path (docs/packages.md)
    def packages(self):
        """Loaded element packages: (name, file, [classes]) triples."""
        out = []
        for line in self.read("packages").splitlines():
            if line:
                name, _, rest = line.partition("\t")
                path, _, classes = rest.partition("\t")
                out.append((name, path, classes.split()))
        return out

    def load_package(self, package):
        """Loads an element package: a name (found on the router's
        CLICKPATH, as `require(package NAME)` finds it) or a library file."""
        return self.write("load_package", package)

    def unload_package(self, name):
        """Unregisters a package's classes (refused while elements of them
        exist; the library stays mapped)."""
        return self.write("unload_package", name)

    def create_instance(self, name, element_class, from_port, to_port=None):
        """Creates element `name` :: `element_class` (a class with its
        configuration, e.g. "Counter" or "Queue(10)") and splices it after
        output `from_port` ("gate[1]"), leading where that output led, or to
        `to_port` ("out[0]"). The router is hot swapped (it needs -R)."""
        value = "%s %s FROM %s" % (name, element_class, from_port)
        if to_port is not None:
            value += " TO %s" % to_port
        return self.write("create_instance", value)

    def free_instance(self, name):
        """Removes an instance (hot swap); refused while it is registered."""
        return self.write("free_instance", name)

    def register_instance(self, name, filter_spec):
        """Binds flows matching `filter_spec` ("src 10.0.0.0/8 dport 80") to
        instance `name`: writes the add_filter handler of the gate it hangs
        off, with the gate output leading to it."""
        return self.write("register_instance", "%s %s" % (name, filter_spec))

    def deregister_instance(self, name, filter_spec=""):
        """Removes one filter of `name`, or all of them."""
        return self.write("deregister_instance", ("%s %s" % (name, filter_spec)).strip())

    def instances(self):
        """(instance, gate[port], filter) triples: one per registered filter,
        then package-class elements with none ("-" for gate and filter)."""
        out = []
        for line in self.read("instances").splitlines():
            if line:
                parts = line.split("\t")
                out.append(tuple(parts + ["-"] * (3 - len(parts)))[:3])
        return out


def read_secret_file(path):
    """The secret in `path`: its first line, whitespace removed."""
    with open(os.path.expanduser(path)) as f:
        first = f.readline()
    secret = "".join(first.split())
    if not secret:
        raise ValueError("%s: no secret in the file" % path)
    return secret


def _relay(client, upstream):
    """Copies bytes both ways between the client and the router until the
    router closes. The client's end of file is passed on as a half-close,
    so a client that shuts its write side after its commands still gets
    every reply (as from the router directly, which closes once it has
    answered them)."""
    open_ = [client, upstream]
    try:
        while True:
            readable, _, _ = select.select(open_, [], [])
            for s in readable:
                data = s.recv(65536)
                if s is upstream:
                    if not data:
                        return
                    client.sendall(data)
                elif data:
                    upstream.sendall(data)
                else:
                    open_.remove(client)
                    upstream.shutdown(socket.SHUT_WR)
    except OSError:
        return
    finally:
        for s in (client, upstream):
            try:
                s.close()
            except OSError:
                pass


def _serve_one(client, host, port, secret):
    try:
        upstream = socket.create_connection((host, port), timeout=30)
    except OSError as e:
        client.sendall(("590 proxy: cannot reach %s:%d: %s\r\n" % (host, port, e)).encode())
        client.close()
        return
    # Read the greeting, authenticate, and pass on only the greeting.
    buf = b""
    try:
        while buf.count(b"\n") < 1:
            chunk = upstream.recv(4096)
            if not chunk:
                raise OSError("closed")
            buf += chunk
        greeting, buf = buf.split(b"\n", 1)
        upstream.sendall(("AUTH %s\r\n" % secret).encode())
        while b"\n" not in buf:
            chunk = upstream.recv(4096)
            if not chunk:
                raise OSError("closed")
            buf += chunk
        reply, buf = buf.split(b"\n", 1)
    except OSError as e:
        client.close()
        upstream.close()
        sys.stderr.write("proxy: %s\n" % e)
        return
    if not reply.startswith(b"200"):
        # Say why, in the protocol, then close.
        client.sendall(greeting + b"\n" + reply + b"\n")
        client.close()
        upstream.close()
        return
    upstream.settimeout(None)
    client.sendall(greeting + b"\n" + buf)
    _relay(client, upstream)


def proxy(listen, host, port, secret, ready=None):
    """Serves Unix socket `listen` (mode 0600) and relays each client to the
    router at host:port after authenticating with `secret`. Runs until
    interrupted; `ready` (a threading.Event) is set once listening."""
    try:
        os.unlink(listen)
    except FileNotFoundError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(listen)
    finally:
        os.umask(old)
    os.chmod(listen, 0o600)
    server.listen(16)
    if ready is not None:
        ready.set()
    try:
        while True:
            client, _ = server.accept()
            threading.Thread(target=_serve_one, args=(client, host, port, secret),
                             daemon=True).start()
    finally:
        server.close()
        try:
            os.unlink(listen)
        except OSError:
            pass


def _main(argv):
    import argparse
    ap = argparse.ArgumentParser(
        prog="rclick_control.py",
        description="Wrapper for Click tools: a Unix socket in front of an rclick "
                    "ControlSocket that requires AUTH (SECRET_FILE).")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("proxy", help="serve a Unix socket that authenticates for its clients")
    p.add_argument("--listen", required=True, help="Unix socket to create (mode 0600)")
    p.add_argument("--connect", required=True, help="the router's HOST:PORT")
    p.add_argument("--secret-file", required=True, help="file whose first line is the secret")
    args = ap.parse_args(argv)
    host, _, port = args.connect.rpartition(":")
    proxy(args.listen, host or "127.0.0.1", int(port), read_secret_file(args.secret_file))


if __name__ == "__main__":
    try:
        _main(sys.argv[1:])
    except KeyboardInterrupt:
        pass
