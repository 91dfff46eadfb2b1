import type { Response } from 'express';

/**
 * Aborts a request's turn as soon as its client goes away (the response closed before it
 * finished). A stream aborts this same controller for its own reasons too (its lease lost, the
 * replica's grace period over) instead of chaining a second one to it, so `left` says whether
 * the client is gone, whatever the signal's reason: each open stream holds one controller fewer.
 */
export class ClientDeparture extends AbortController {
  /** The client went away before its response was finished. */
  left = false;

  constructor(res: Response) {
    super();
    res.on('close', () => {
      if (res.writableFinished) return;
      this.left = true;
      this.abort();
    });
  }
}
