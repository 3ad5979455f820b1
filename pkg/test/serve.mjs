// A static file server for the browser tests: a folder on 127.0.0.1, an ephemeral port.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/**
 * Serves `root`; answers its origin and a closer. Paths outside `root` get 403, missing files
 * 404. With `onPost(path, headers, body)`, a POST gets the status it answers (default 201).
 */
export async function serve(root, { onPost } = {}) {
  const server = http.createServer(async (req, res) => {
    if (req.method === 'POST' && onPost) {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const status = onPost(new URL(req.url, 'http://x').pathname, req.headers, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(status ?? 201).end();
      return;
    }
    const file = path.join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!file.startsWith(root + path.sep)) { res.writeHead(403).end(); return; }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}
