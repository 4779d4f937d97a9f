#!/usr/bin/env python3
"""A minimal PostgreSQL v3 wire client (trust auth, unix socket), enough to send extended-protocol
messages with or without Sync and with an Execute row limit (max_rows), which libpq never sends."""
import socket, struct, sys, os

class Conn:
    def __init__(self, sockdir, port, user, db, appname="pgwire"):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(os.path.join(sockdir, ".s.PGSQL.%d" % port))
        params = b"user\0" + user.encode() + b"\0database\0" + db.encode() + \
                 b"\0application_name\0" + appname.encode() + b"\0\0"
        body = struct.pack("!i", 196608) + params
        self.s.sendall(struct.pack("!i", len(body) + 4) + body)
        self.buf = b""
        while True:
            t, m = self.read()
            if t == b"R" and struct.unpack("!i", m[:4])[0] != 0:
                raise RuntimeError("auth other than trust is not supported")
            if t == b"E":
                raise RuntimeError(self.err(m))
            if t == b"Z":
                break

    def _recv(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read(self):
        t = self._recv(1)
        ln = struct.unpack("!i", self._recv(4))[0]
        return t, self._recv(ln - 4)

    @staticmethod
    def err(m):
        fields = {}
        for part in m.split(b"\0"):
            if part:
                fields[chr(part[0])] = part[1:].decode()
        return "%s %s" % (fields.get("C"), fields.get("M"))

    def send(self, t, body=b""):
        self.s.sendall(t + struct.pack("!i", len(body) + 4) + body)

    def parse(self, sql, name=b""):
        self.send(b"P", name + b"\0" + sql.encode() + b"\0" + struct.pack("!h", 0))

    def bind(self, portal=b"", stmt=b""):
        self.send(b"B", portal + b"\0" + stmt + b"\0" + struct.pack("!hhh", 0, 0, 0))

    def execute(self, portal=b"", max_rows=0):
        self.send(b"E", portal + b"\0" + struct.pack("!i", max_rows))

    def flush(self):
        self.send(b"H")

    def sync(self):
        self.send(b"S")

    def query(self, sql):
        self.send(b"Q", sql.encode() + b"\0")

    def until(self, stop):
        """Reads messages until one of type in `stop`; returns a list of (type, text)."""
        out = []
        while True:
            t, m = self.read()
            if t == b"D":
                ncol = struct.unpack("!h", m[:2])[0]
                vals, off = [], 2
                for _ in range(ncol):
                    ln = struct.unpack("!i", m[off:off + 4])[0]; off += 4
                    vals.append(None if ln < 0 else m[off:off + ln].decode()); off += max(ln, 0)
                out.append(("row", vals))
            elif t == b"E":
                out.append(("error", self.err(m)))
            elif t == b"C":
                out.append(("complete", m[:-1].decode()))
            elif t == b"s":
                out.append(("suspended", ""))
            elif t == b"Z":
                out.append(("ready", m.decode()))
            elif t in (b"1", b"2", b"T", b"n", b"N", b"S", b"K"):
                pass
            else:
                out.append((t.decode(), ""))
            if t in stop:
                return out
