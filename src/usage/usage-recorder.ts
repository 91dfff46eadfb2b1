import { Injectable, OnModuleInit } from '@nestjs/common';
import { TurnEvents } from '../turns/turn-events.js';
import { UsageBudgetService } from './usage-budget.service.js';
import { UsageFlusher } from './usage-flusher.service.js';

/**
 * The recording side of usage: every stored turn (foreground or background) counts against its
 * organization's monthly budget at once and in the usage metrics, and its usage, which the turn's
 * own write left pending, joins this replica's next flush into the rollups.
 */
@Injectable()
export class UsageRecorder implements OnModuleInit {
  constructor(
    private readonly events: TurnEvents,
    private readonly budgets: UsageBudgetService,
    private readonly flusher: UsageFlusher,
  ) {}

  onModuleInit(): void {
    this.events.onRecorded((turn) => {
      this.flusher.add(turn.responseId);
      this.budgets.recorded({
        organizationId: turn.organizationId,
        assistantId: turn.assistantId,
        ...turn.usage,
      });
    });
  }
}
