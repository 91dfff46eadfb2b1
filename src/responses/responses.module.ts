import { FilesModule } from '../files/files.module.js';
import { VectorStoresModule } from '../vector-stores/vector-stores.module.js';
import { Module } from '@nestjs/common';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { LlmModule } from '../llm/llm.module.js';
import { MemoryModule } from '../memory/memory.module.js';
import { SpecialistsModule } from '../specialists/specialists.module.js';
import { TenantConfigModule } from '../tenant-config/tenant-config.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { TurnsModule } from '../turns/turns.module.js';
import { BackgroundResponses } from './durable/background-responses.service.js';
import { BackgroundTurns } from './durable/background-turns.service.js';
import { ResumedStreams } from './durable/resumed-streams.service.js';
import { TurnLeases } from './durable/turn-leases.service.js';
import { CompactionService } from './compaction.service.js';
import { InputAttachments } from './input-attachments.js';
import { UsageBudgetsModule } from '../usage/usage-budgets.module.js';
import { ResponsesController } from './responses.controller.js';
import { ResponsesService } from './responses.service.js';
import { TurnStoreModule } from './store/turn-store.module.js';
import { TurnStreams } from './streaming/turn-stream.js';
import { ModelAccess } from './model-access.js';
import { ModelCallStreamer } from './model-call-streamer.js';
import { TurnPreparer } from './turn-preparer.js';
import { TurnPlanner } from './turn-planner.js';
import { TurnExecutor } from './turn-executor.js';
import { TurnRunner } from './turn-runner.js';

@Module({
  imports: [
    AssistantsModule,
    FilesModule,
    LlmModule,
    MemoryModule,
    SpecialistsModule,
    TenantConfigModule,
    ToolsModule,
    TurnStoreModule,
    TurnsModule,
    UsageBudgetsModule,
    VectorStoresModule,
  ],
  controllers: [ResponsesController],
  providers: [
    ResponsesService,
    CompactionService,
    TurnPreparer,
    TurnPlanner,
    TurnRunner,
    ModelCallStreamer,
    TurnExecutor,
    ModelAccess,
    TurnStreams,
    InputAttachments,
    TurnLeases,
    BackgroundTurns,
    BackgroundResponses,
    ResumedStreams,
  ],
})
export class ResponsesModule {}
