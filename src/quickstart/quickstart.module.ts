import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { QuickstartService } from './quickstart.service.js';

@Module({
  imports: [OrganizationsModule, AssistantsModule, ApiKeysModule],
  providers: [QuickstartService],
  exports: [QuickstartService],
})
export class QuickstartModule {}
