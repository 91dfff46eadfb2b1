import { AsyncLocalStorage } from 'node:async_hooks';

/** What a log line may say about the request it belongs to. Never a secret. */
export interface RequestContext {
  requestId: string;
  organizationId?: string;
  assistantId?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestContext(): RequestContext | undefined {
  return requestContext.getStore();
}
