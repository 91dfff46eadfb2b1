import { AsyncLocalStorage } from 'node:async_hooks';

/** What a log line may say about the request it belongs to. Never a secret. */
export interface RequestContext {
  /** What `x-request-id` answers: the client's own when it sent a sane one, else `serverRequestId`. */
  requestId: string;
  /** Always the server's (`req_<uuid>`): what the audit log records. */
  serverRequestId?: string;
  organizationId?: string;
  assistantId?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestContext(): RequestContext | undefined {
  return requestContext.getStore();
}
