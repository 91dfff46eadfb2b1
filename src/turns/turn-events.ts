import { Injectable, Logger } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import type { TokenUsage } from '../llm/llm.types.js';

/** A turn's final write is stored: what the effects after it (usage, budgets, metrics) need. */
export interface TurnRecorded {
  responseId: string;
  organizationId: string;
  assistantId: string;
  status: string;
  background: boolean;
  usage: Required<TokenUsage>;
}

export type TurnRecordedListener = (event: TurnRecorded) => void;

/**
 * The one "turn recorded" hook: the executor announces every stored turn here (foreground JSON,
 * stream and background alike) and the effects subscribe, so the turn knows none of them. A
 * listener runs synchronously after the write; its failure is logged and never fails the turn.
 */
@Injectable()
export class TurnEvents {
  private readonly listeners: TurnRecordedListener[] = [];
  private readonly logger = new Logger('TurnEvents');

  onRecorded(listener: TurnRecordedListener): void {
    this.listeners.push(listener);
  }

  recorded(event: TurnRecorded): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error({ ...describeUnexpected(error), msg: 'an effect of a stored turn failed' });
      }
    }
  }
}
