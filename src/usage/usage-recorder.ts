import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { TurnEvents } from '../turns/turn-events.js';
import { EmbeddingUsageRepository, type EmbeddingUsage } from './embedding-usage.repository.js';
import { UsageBudgetService } from './usage-budget.service.js';
import { UsageFlusher } from './usage-flusher.service.js';

/**
 * The recording side of usage: every stored turn (foreground or background) counts against its
 * organization's monthly budget at once and in the usage metrics, and its usage, which the turn's
 * own write left pending, joins this replica's next flush into the rollups. Embeddings calls
 * (vector stores) are recorded here by `embeddings()`, outside any turn, straight into the rollups.
 */
@Injectable()
export class UsageRecorder implements OnModuleInit {
  private readonly logger = new Logger('UsageRecorder');

  constructor(
    private readonly events: TurnEvents,
    private readonly budgets: UsageBudgetService,
    private readonly flusher: UsageFlusher,
    private readonly embeddingUsage: EmbeddingUsageRepository,
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

  /**
   * One embeddings call's tokens, in the rollups and against the monthly budget. The call has
   * happened (and cost) whatever this write does: a failed write is logged, never thrown into
   * the ingestion or search that made the call.
   */
  async embeddings(usage: EmbeddingUsage, now = new Date()): Promise<void> {
    if (usage.tokens <= 0) return;
    this.budgets.spent(usage.organizationId, usage.tokens, now);
    try {
      await this.embeddingUsage.add(usage, now);
    } catch (error) {
      this.logger.warn({ ...describeUnexpected(error), msg: 'embeddings usage not recorded' });
    }
  }
}
