import type { Request, Response } from 'express';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { extractContext, startSpan, tracingActive, type Span } from './tracing.js';

/**
 * One SERVER span per HTTP request, continuing the caller's W3C trace, or null (and nothing
 * registered) while tracing is off. The edge middleware runs the rest of the request inside it
 * (`withActiveSpan`). Named by the matched route template once it is known (never the raw path:
 * ids would make every name unique).
 */
export function startHttpSpan(req: Request, res: Response): Span | null {
  if (!tracingActive()) return null;
  const span = startSpan(
    `${req.method}`,
    { 'http.request.method': req.method, 'url.scheme': req.protocol },
    SpanKind.SERVER,
    extractContext(req.headers),
  );
  if (span === null) return null;
  res.once('close', () => {
    const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
    const route = typeof path === 'string' ? `${req.baseUrl}${path}` : undefined;
    if (route) {
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    const status = res.headersSent ? res.statusCode : 499;
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  return span;
}
