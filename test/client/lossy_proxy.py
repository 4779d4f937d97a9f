"""A TCP proxy on loopback in front of the server that loses the answer to one statement, the way
a dropped connection does (the Python twin of test/tap/LossyProxy.pm): once a client has sent a
query containing ``marker``, the server's replies are held back, and when the server says it is
ready for the next query (the statement ended, its transaction committed) both connections are
closed. Only the first statement with the marker loses its answer.

The server is the one the PG* environment variables name (PGHOST a socket directory or a host).
"""

import os
import select
import socket
import struct
import threading


def _server_socket():
    host = os.environ.get('PGHOST', '/var/run/postgresql')
    port = int(os.environ.get('PGPORT', '5432'))
    if host.startswith('/'):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(os.path.join(host, f'.s.PGSQL.{port}'))
    else:
        sock = socket.create_connection((host, port))
    return sock


def _ready_for_query(held):
    offset = 0
    while len(held) - offset >= 5:
        kind, length = struct.unpack('!cI', held[offset:offset + 5])
        if len(held) - offset < 1 + length:
            return False
        if kind == b'Z':
            return True
        offset += 1 + length
    return False


class LossyProxy:
    def __init__(self, marker):
        self.marker = marker.encode()
        self.lost = 0  # answers lost so far
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def dsn(self, **extra):
        """A libpq connection string through the proxy, for the PG* variables' database."""
        parts = {'host': '127.0.0.1', 'port': str(self.port), 'sslmode': 'disable',
                 'gssencmode': 'disable'}
        if 'PGDATABASE' in os.environ:
            parts['dbname'] = os.environ['PGDATABASE']
        parts.update(extra)
        return ' '.join(f'{k}={v}' for k, v in parts.items())

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client):
        server = _server_socket()
        seen, held, armed = b'', b'', False
        try:
            while True:
                readable, _, _ = select.select([client, server], [], [])
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is client:
                        seen += data
                        if not armed and self.lost == 0 and self.marker in seen:
                            armed = True
                        server.sendall(data)
                    elif not armed:
                        client.sendall(data)
                    else:
                        held += data
                        if _ready_for_query(held):
                            self.lost += 1
                            return
        finally:
            client.close()
            server.close()
