import { Module } from '@nestjs/common';
import { TenantConfigModule } from '../tenant-config/tenant-config.module.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ToolsApplySection } from './admin/tools.apply-section.js';
import { McpClientService } from './mcp/mcp-client.service.js';
import { McpSessionOpener } from './mcp/mcp-session-opener.js';
import { McpServerTools } from './mcp/mcp-server-tools.service.js';
import { GuardedFetch } from './ssrf/guarded-fetch.js';
import { GuardedFetchPool } from './ssrf/guarded-fetch-pool.js';
import { SsrfPolicy } from '../common/network/ssrf-policy.js';
import { ToolCatalogService } from './tool-catalog.service.js';
import { ToolsRepository } from './tools.repository.js';
import { ToolsService } from './tools.service.js';
import { OfflineWebSearchTools } from './web-search/offline-web-search.tool.js';
import { WebSearchCacheRepository } from './web-search/web-search-cache.repository.js';

/**
 * Server-side tools: the catalogue (plugins and tools per organization), their executors, the
 * SSRF-guarded HTTP client they all use (exported: responses fetch image and file URLs with it), and the `apply -f` section that declares them.
 */
@Module({
  imports: [OrganizationsModule, TenantConfigModule],
  providers: [
    ToolsRepository,
    ToolsService,
    ToolCatalogService,
    McpClientService,
    McpSessionOpener,
    McpServerTools,
    GuardedFetchPool,
    {
      provide: GuardedFetch,
      useFactory: (config: AppConfig) => new GuardedFetch(new SsrfPolicy(config.tools.ssrfAllowlist)),
      inject: [APP_CONFIG],
    },
    ToolsApplySection,
    WebSearchCacheRepository,
    OfflineWebSearchTools,
  ],
  exports: [ToolCatalogService, ToolsService, GuardedFetch, GuardedFetchPool, OfflineWebSearchTools],
})
export class ToolsModule {}
