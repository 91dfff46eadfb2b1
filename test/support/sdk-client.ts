import OpenAI from 'openai';

/** The official SDK against a test service, as one key (and end user, sent as `x-user-id`); no retries. */
export function sdkClient(baseUrl: string, key: string, userId?: string): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: `${baseUrl}/v1`,
    maxRetries: 0,
    defaultHeaders: userId === undefined ? {} : { 'x-user-id': userId },
  });
}
