// Calls Switchboard with the official openai SDK: one answer, then a streamed follow-up in the
// same thread. Run it from the checkout (where `openai` is installed) after pasting the
// quickstart's export lines:  node examples/responses-sdk.mjs
import OpenAI from 'openai';

const client = new OpenAI({
  apiKey: process.env.SWITCHBOARD_KEY,
  baseURL: `${process.env.SWITCHBOARD_URL ?? 'http://localhost:8080'}/v1`,
});
const model = process.env.ASSISTANT_ID;

const first = await client.responses.create({ model, input: 'hello' });
console.log(first.output_text);

// continue the thread, streamed
const stream = client.responses.stream({ model, input: 'and again', previous_response_id: first.id });
stream.on('response.output_text.delta', (event) => process.stdout.write(event.delta));
await stream.finalResponse();
process.stdout.write('\n');
