import { Module } from '@nestjs/common';
import { FilesModule } from '../files/files.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { TenantConfigModule } from '../tenant-config/tenant-config.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { UsageBudgetsModule } from '../usage/usage-budgets.module.js';
import { FileSearchTools } from './file-search/file-search.tool.js';
import { EmbeddingsService } from './embeddings/embeddings.service.js';
import { IngestionRepository } from './ingestion/ingestion.repository.js';
import { IngestionWorker } from './ingestion/ingestion.worker.js';
import { ChunkSearchRepository } from './search/chunk-search.repository.js';
import { VectorIndexProbe } from './vector-index/vector-index.probe.js';
import { VectorStoreSearchService } from './search/vector-store-search.service.js';
import { VectorStoreFilesController } from './vector-store-files.controller.js';
import { VectorStoreFilesRepository } from './vector-store-files.repository.js';
import { VectorStoreFilesService } from './vector-store-files.service.js';
import { VectorStoresController } from './vector-stores.controller.js';
import { VectorStoresRepository } from './vector-stores.repository.js';
import { VectorStoresService } from './vector-stores.service.js';

/**
 * Vector stores: the API, background ingestion of attached files, and search; the file_search
 * tool uses VectorStoreSearchService.
 */
@Module({
  imports: [FilesModule, OrganizationsModule, TenantConfigModule, ToolsModule, UsageBudgetsModule],
  controllers: [VectorStoresController, VectorStoreFilesController],
  providers: [
    VectorStoresRepository,
    VectorStoreFilesRepository,
    IngestionRepository,
    ChunkSearchRepository,
    VectorIndexProbe,
    EmbeddingsService,
    IngestionWorker,
    VectorStoresService,
    VectorStoreFilesService,
    VectorStoreSearchService,
    FileSearchTools,
  ],
  exports: [VectorStoreSearchService, FileSearchTools, VectorIndexProbe],
})
export class VectorStoresModule {}
