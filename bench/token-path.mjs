// Allocations and CPU per relayed token of one build's streamed path, without the HTTP front, the
// database or the turn's start (docs/benchmarks.md, round "streamtok"): the fake upstream (a child)
// -> FailoverProvider / OpenAiCompatibleProvider (the SDK, undici, ChatCompletionChunks) -> the
// turn runner's per-read loop -> ResponseRecorder -> SseWriter -> a loopback socket -> a client (a
// child that counts the events and bytes it read). Each round opens <streams> streams at once of
// <tokens> tokens <interval> ms apart; the V8 sampling heap profiler (every 64 bytes, garbage
// included) gives bytes and allocation samples per token, by allocating function.
// usage: node --expose-gc bench/token-path.mjs <worktree> [streams] [tokens] [intervalMs] [rounds]
// (after `npm run build && npx tsc -p bench/tsconfig.json` in <worktree>); NOHEAP=1: CPU only.
import { fork } from 'node:child_process';
import http from 'node:http';
import { Session } from 'node:inspector';
import { unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
const [wt, S = '50', N = '200', I = '5', R = '3'] = process.argv.slice(2);
const streams = +S,
  tokens = +N,
  interval = +I,
  rounds = +R;
const d = `${wt}/dist/src`;
const { OpenAiCompatibleProvider } = await import(`${d}/llm/openai-compatible.provider.js`);
const { FailoverProvider } = await import(`${d}/llm/failover.provider.js`);
const { UpstreamBreakers } = await import(`${d}/llm/upstream-breakers.js`);
const { ResponseRecorder } = await import(`${d}/responses/streaming/response-recorder.js`);
const { SseWriter } = await import(`${d}/responses/streaming/sse-writer.js`);

const up = fork(`${wt}/dist/bench/fake-upstream.js`, [], { env: { ...process.env, BENCH_PORT: '0' } });
const upPort = await new Promise((r) => up.on('message', (m) => m.type === 'ready' && r(m.port)));
const single = new OpenAiCompatibleProvider({
  headersTimeoutMs: 60000,
  firstTokenTimeoutMs: 60000,
  stallTimeoutMs: 60000,
  maxRetries: 0,
  retryBudgetMs: 0,
});
const breakers = new UpstreamBreakers({ upstream: { breakerFailures: 0, breakerCooldownMs: 1000 } }, {});
const failover = new FailoverProvider(
  single,
  breakers,
  { maxRetries: 0, retryBudgetMs: 0, failoverBudgetMs: 10000 },
  {},
);
const settings = {
  provider: 'openai-compatible',
  baseUrl: `http://127.0.0.1:${upPort}/v1`,
  model: `bench-t20-n${tokens}-i${interval}`,
  functionCalling: true,
};
const style = { status: false, reasoning: 'response.reasoning_text' };

const server = http.createServer(async (req, res) => {
  req.resume();
  res.status = (c) => {
    res.statusCode = c;
    return res;
  };
  const writer = new SseWriter(res, 15000);
  writer.open();
  const recorder = new ResponseRecorder(writer, style);
  recorder.emit('response.created', { response: { id: 'resp_x', status: 'in_progress', output: [] } });
  const ac = new globalThis.AbortController();
  res.on('close', () => ac.abort());
  let text = '';
  try {
    const call = failover.stream({
      settings,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      options: {},
      signal: ac.signal,
      log: { attempts: [] },
      relayed: true,
    });
    // Synchronous, as the runner's loop is: the caller awaits only a pending drain.
    const relay = (batch) => {
      if (recorder.batch)
        recorder.batch(() => {
          for (const event of batch) {
            if (event.type === 'text') {
              text += event.delta;
              recorder.text(event.delta, event.logprobs);
            }
          }
        });
      else {
        recorder.cork();
        try {
          for (const event of batch) {
            if (event.type === 'text') {
              text += event.delta;
              recorder.text(event.delta, event.logprobs);
            }
          }
        } finally {
          recorder.uncork();
        }
      }
      return recorder.drain();
    };
    // A build whose call is read per upstream read (read/readable, as its turn runner does),
    // else an async iterable (builds before round "tokenpath").
    if (typeof call.read === 'function') {
      try {
        for (;;) {
          const batch = call.read();
          if (batch === null) await call.readable();
          else if (batch === undefined) break;
          else {
            const drained = relay(batch);
            if (drained) await drained;
          }
        }
      } finally {
        call.close();
      }
    } else
      for await (const batch of call) {
        const drained = relay(batch);
        if (drained) await drained;
      }
    // The turn runner keeps the text for the transcript; so does this loop.
    if (text.length === 0) throw new Error('no text relayed');
    recorder.endMessage();
    recorder.emit('response.completed', {
      response: { id: 'resp_x', status: 'completed', output: recorder.output },
    });
    writer.done();
  } catch (e) {
    console.error('turn failed', e);
    writer.close();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;
const clientFile = join(tmpdir(), `token-path-client-${process.pid}.mjs`);
writeFileSync(
  clientFile,
  `
import http from 'node:http';
const [port, streams] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
process.on('message', async () => {
  let bytes = 0, events = 0;
  await Promise.all(Array.from({ length: streams }, () => new Promise((resolve, reject) => {
    const req = http.request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } }, (res) => {
      res.setEncoding('utf8'); let tail = '';
      res.on('data', (c) => { bytes += c.length; const t = tail + c; const parts = t.split('\\n\\n'); tail = parts.pop(); events += parts.length; });
      res.on('end', resolve); res.on('error', reject);
    });
    req.end('{}');
  })));
  process.send({ bytes, events });
});
process.send('ready');
`,
);
const client = fork(clientFile, [String(port), String(streams)]);
await new Promise((r) => client.once('message', r));
const run = () =>
  new Promise((r) => {
    client.once('message', r);
    client.send('go');
  });
await run();
await run(); // warm-up
const session = new Session();
session.connect();
const post = (m, p) => new Promise((res, rej) => session.post(m, p, (e, r) => (e ? rej(e) : res(r))));
const out = [];
for (let round = 0; round < rounds; round++) {
  globalThis.gc?.();
  const heap = !process.env.NOHEAP;
  if (heap) await post('HeapProfiler.enable');
  if (heap)
    await post('HeapProfiler.startSampling', {
      samplingInterval: 64,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const got = await run();
  const cpu = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  if (!heap) {
    out.push({
      round,
      cpuUsPerToken: ((cpu.user + cpu.system) / (streams * tokens)).toFixed(2),
      wallMs: wall.toFixed(0),
      clientEvents: got.events,
      clientBytes: got.bytes,
    });
    continue;
  }
  const { profile } = await post('HeapProfiler.stopSampling');
  // sum sampled bytes & count per function
  let bytes = 0,
    count = 0;
  const by = new Map();
  const idSize = new Map();
  (profile.samples ?? []).forEach((s) => {
    idSize.set(s.nodeId, (idSize.get(s.nodeId) ?? 0) + 1);
  });
  const walk = (n) => {
    bytes += n.selfSize;
    const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
    const e = by.get(k) ?? [0, 0];
    e[0] += n.selfSize;
    e[1] += idSize.get(n.id) ?? 0;
    by.set(k, e);
    n.children.forEach(walk);
  };
  walk(profile.head);
  for (const e of by.values()) count += e[1];
  const toks = streams * tokens;
  out.push({
    round,
    cpuUsPerToken: ((cpu.user + cpu.system) / toks).toFixed(2),
    wallMs: wall.toFixed(0),
    bytesPerToken: (bytes / toks).toFixed(0),
    samplesPerToken: (count / toks).toFixed(2),
    clientEvents: got.events,
    clientBytes: got.bytes,
  });
  if (round === rounds - 1) {
    console.log('top allocation sites (bytes/token):');
    for (const [k, [b]] of [...by].sort((a, b) => b[1][0] - a[1][0]).slice(0, 30))
      console.log((b / toks).toFixed(1).padStart(8), k);
  }
}
console.table(out);
client.kill();
up.kill();
server.close();
unlinkSync(clientFile);
process.exit(0);
