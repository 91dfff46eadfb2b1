import { Injectable, OnModuleInit } from '@nestjs/common';
import { TurnEvents } from '../turns/turn-events.js';
import { UsageBudgetService } from './usage-budget.service.js';

/**
 * The recording side of usage: every stored turn (foreground or background) counts against its
 * organization's monthly budget at once and in the usage metrics. The tokens themselves reach the
 * rollup table inside the turn's own write.
 */
@Injectable()
export class UsageRecorder implements OnModuleInit {
  constructor(
    private readonly events: TurnEvents,
    private readonly budgets: UsageBudgetService,
  ) {}

  onModuleInit(): void {
    this.events.onRecorded((turn) =>
      this.budgets.recorded({
        organizationId: turn.organizationId,
        assistantId: turn.assistantId,
        ...turn.usage,
      }),
    );
  }
}
