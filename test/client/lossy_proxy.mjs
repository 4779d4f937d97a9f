// A TCP proxy on loopback in front of the server that loses the answer to one statement, the way
// a dropped connection does (the Node twin of lossy_proxy.py): once a client has sent a query
// containing `marker`, the server's replies are held back, and when the server says it is ready
// for the next query (the statement ended, its transaction committed) both connections are
// closed. Only the first statement with the marker loses its answer. The server is the one the
// PG* environment variables name.
import net from 'node:net';
import path from 'node:path';

function readyForQuery(held) {
  let offset = 0;
  while (held.length - offset >= 5) {
    const length = held.readUInt32BE(offset + 1);
    if (held.length - offset < 1 + length) return false;
    if (held[offset] === 0x5a) return true;  // 'Z'
    offset += 1 + length;
  }
  return false;
}

function connectServer() {
  const host = process.env.PGHOST || '/var/run/postgresql';
  const port = Number(process.env.PGPORT || 5432);
  return host.startsWith('/') ? net.connect(path.join(host, `.s.PGSQL.${port}`))
    : net.connect(port, host);
}

export async function startLossyProxy(marker) {
  const proxy = { lost: 0, port: 0, server: null };
  proxy.server = net.createServer((client) => {
    const server = connectServer();
    let seen = Buffer.alloc(0);
    let held = Buffer.alloc(0);
    let armed = false;
    const close = () => { client.destroy(); server.destroy(); };
    client.on('data', (data) => {
      seen = Buffer.concat([seen, data]);
      if (!armed && proxy.lost === 0 && seen.includes(marker)) armed = true;
      server.write(data);
    });
    server.on('data', (data) => {
      if (!armed) { client.write(data); return; }
      held = Buffer.concat([held, data]);
      if (readyForQuery(held)) { proxy.lost += 1; close(); }
    });
    client.on('error', close);
    server.on('error', close);
    client.on('close', close);
    server.on('close', close);
  });
  await new Promise((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
  proxy.port = proxy.server.address().port;
  return proxy;
}
