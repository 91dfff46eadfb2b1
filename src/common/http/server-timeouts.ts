import type { Server } from 'node:http';

/**
 * Idle keep-alive connections live `keepAliveTimeoutMs` (Node answers `Keep-Alive: timeout=N`,
 * so clients that read it close first). Node wants the headers deadline above it, or a request
 * arriving on an idle connection just before it closes can be cut while its headers are read.
 */
export function applyServerTimeouts(server: Server, limits: { keepAliveTimeoutMs: number }): void {
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.headersTimeout = limits.keepAliveTimeoutMs + 1000;
}
