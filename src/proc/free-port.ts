/** Asking the OS for a free TCP port (what the `Address already in use` alert suggests). */
import { createServer } from 'node:net';

/**
 * A TCP port that is free on `host` right now: binds port 0 (the OS picks an unused one), reads it, closes.
 * Another process may take it later; say "free when checked". Rejects only when binding fails.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('the OS gave no port'))));
    });
  });
}
