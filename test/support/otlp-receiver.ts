import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the test reads it: OTLP/JSON flattened, attribute values unwrapped. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number };
  service: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

function unwrap(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(unwrap);
  return undefined;
}

const attributesOf = (list: { key: string; value: OtlpValue }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, unwrap(a.value)]));

/**
 * An OpenTelemetry collector's OTLP/HTTP traces endpoint (JSON encoding), in the test process.
 * Records every span it receives and the content type of each export.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  private servers: Server[] = [];
  url = '';

  /**
   * On a free port of 127.0.0.1; or, with `defaultPort`, on OTLP/HTTP's default 4318 on both
   * loopback addresses, where an exporter left without an endpoint sends (`localhost:4318`).
   * Another test holding 4318 is waited for, within a bound.
   */
  async start(options: { defaultPort?: boolean } = {}): Promise<this> {
    if (!options.defaultPort) {
      const server = await this.listen(0, '127.0.0.1');
      this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return this;
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await this.listen(4318, '127.0.0.1');
        await this.listen(4318, '::1').catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EADDRNOTAVAIL' && error.code !== 'EAFNOSUPPORT') throw error;
        });
        this.url = 'http://localhost:4318';
        return this;
      } catch (error) {
        await this.stop();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  private async listen(port: number, host: string): Promise<Server> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.contentTypes.push(String(req.headers['content-type']));
        if (req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
          this.record(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.servers.push(server);
    return server;
  }

  /** Waits until a span matches (exports are batched, about once a second). */
  async waitFor(predicate: (span: ReceivedSpan) => boolean, timeoutMs = 15_000): Promise<ReceivedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`no matching span; received: ${this.spans.map((s) => s.name).join(', ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    const servers = this.servers.splice(0);
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  private record(body: any): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            status: span.status ?? {},
            service,
          });
        }
      }
    }
  }
}
