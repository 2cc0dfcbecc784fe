"""Client for the Click ControlSocket protocol (version 1.3), as spoken by
rclick's ControlSocket element and by Click itself.

Standard library only.

    from rclick_control import ControlSocket, ControlSocketError
    with ControlSocket("127.0.0.1", 7777) as cs:
        print(cs.read("c.count"))
        cs.write("q.capacity", "200")
        print(cs.handlers("q"))
"""

import socket

__all__ = ["ControlSocket", "ControlSocketError"]

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

    def __init__(self, host="127.0.0.1", port=7777, timeout=30.0, _sock=None):
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

    @classmethod
    def unix(cls, path, timeout=30.0):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
        except OSError:
            s.close()
            raise
        return cls(timeout=timeout, _sock=s)

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
