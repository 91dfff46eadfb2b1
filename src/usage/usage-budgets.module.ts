import { Module } from '@nestjs/common';
import { TurnsModule } from '../turns/turns.module.js';
import { EmbeddingUsageRepository } from './embedding-usage.repository.js';
import { UsageBudgetService } from './usage-budget.service.js';
import { UsageFlusher } from './usage-flusher.service.js';
import { UsageRecorder } from './usage-recorder.js';
import { UsageRollups } from './usage-rollups.repository.js';
import { UsageRepository } from './usage.repository.js';

/**
 * Usage on the hot path: the monthly budget check before a turn, the recording of every stored
 * turn's tokens (UsageRecorder, on the turn core's "turn recorded" event) and their flush into the
 * rollups (UsageFlusher), and the recording of every embeddings call (UsageRecorder.embeddings,
 * for vector stores). It imports nothing of the admin API; the report endpoint is UsageModule's.
 */
@Module({
  imports: [TurnsModule],
  providers: [
    UsageRepository,
    UsageRollups,
    UsageFlusher,
    UsageBudgetService,
    UsageRecorder,
    EmbeddingUsageRepository,
  ],
  exports: [UsageBudgetService, UsageRepository, UsageFlusher, UsageRecorder],
})
export class UsageBudgetsModule {}
