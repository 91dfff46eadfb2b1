// The chosen stack's floor (docs/benchmarks.md, round "floor"): POST /v1/responses served by NestJS on
// its Express adapter, the upstream called through the openai SDK on the service's own fetch
// (src/llm/upstream-fetch.ts), and each turn stored with one prepared INSERT, as relay-pg does. No
// authentication, validation, turn store, limits, metrics or tracing: what the packages the service
// is built on cost by themselves per turn, for comparison with relay-pg (bare Node.js) and the service.
// JSON turns only. Run by bench/floor-compare.mjs, from a built worktree (`npm run build`):
//   DATABASE_URL=… BENCH_UPSTREAM_URL=http://127.0.0.1:<port>/v1 BENCH_PORT=<port> node bench/stack-floor.mjs
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import OpenAI from 'openai';
import pg from 'pg';
import { upstreamBody, upstreamFetch } from '../dist/src/llm/upstream-fetch.js';

export const FLOOR_APPLICATION = 'bench-stack-floor';
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 20,
  application_name: FLOOR_APPLICATION,
});
await pool.query(
  'CREATE TABLE IF NOT EXISTS bench_floor_turns (id text PRIMARY KEY, model text NOT NULL, input jsonb NOT NULL, output jsonb NOT NULL)',
);
const INSERT = {
  name: 'bench_floor_insert',
  text: 'INSERT INTO bench_floor_turns (id, model, input, output) VALUES ($1, $2, $3, $4)',
};
const model = process.env.BENCH_FLOOR_MODEL ?? 'bench-t20-n1-i0';
const client = new OpenAI({
  baseURL: process.env.BENCH_UPSTREAM_URL,
  apiKey: 'bench',
  maxRetries: 0,
  timeout: 86_400_000,
  organization: null,
  project: null,
  logLevel: 'off',
  fetch: upstreamFetch(),
});

/** The answer's text from the upstream's event stream (the relay's parsing, on undici's body). */
async function answerText(body) {
  let text = '';
  let buffer = '';
  body.setEncoding('utf8');
  for await (const part of body) {
    buffer += part;
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n', start)) {
      const line = buffer.slice(start, end);
      start = end + 2;
      if (line.startsWith('data: ') && line !== 'data: [DONE]')
        text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '';
    }
    buffer = buffer.slice(start);
  }
  return text;
}

class ResponsesController {
  async create(body) {
    const messages = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: String(body.input) },
    ];
    const answer = await client.chat.completions
      .create({ model, messages, stream: true, stream_options: { include_usage: true } })
      .asResponse();
    const text = await answerText(upstreamBody(answer));
    const id = `resp_${randomUUID()}`;
    const content = [{ type: 'output_text', text, annotations: [] }];
    const output = [
      { type: 'message', id: `msg_${randomUUID()}`, status: 'completed', role: 'assistant', content },
    ];
    await pool.query({ ...INSERT, values: [id, model, JSON.stringify(body.input), JSON.stringify(output)] });
    const createdAt = Math.floor(Date.now() / 1000);
    return { id, object: 'response', created_at: createdAt, status: 'completed', model: body.model, output };
  }
}
const create = Object.getOwnPropertyDescriptor(ResponsesController.prototype, 'create');
Reflect.decorate([Post('responses'), HttpCode(200)], ResponsesController.prototype, 'create', create);
Body()(ResponsesController.prototype, 'create', 0);
Controller('v1')(ResponsesController);
class FloorModule {}
Module({ controllers: [ResponsesController] })(FloorModule);

const app = await NestFactory.create(FloorModule, { logger: false });
// As the service has it (src/bootstrap/create-app.ts).
app.getHttpAdapter().getInstance().disable('x-powered-by').set('etag', false);
await app.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1');
process.stdout.write(`stack floor on ${await app.getUrl()}\n`);
