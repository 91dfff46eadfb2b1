import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ApiKeysApplySection } from './admin/api-keys.apply-section.js';
import { ApiKeyAuthenticator } from './api-key-authenticator.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';

/** API keys: storage, authentication and its cache, and the `apply -f` section of declared keys. */
@Module({
  imports: [OrganizationsModule],
  providers: [ApiKeysRepository, ApiKeyAuthenticator, ApiKeysService, ApiKeysApplySection],
  exports: [ApiKeysService, ApiKeyAuthenticator],
})
export class ApiKeysModule {}
