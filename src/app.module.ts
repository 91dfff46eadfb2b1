import { DynamicModule, Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AssistantsModule } from './assistants/assistants.module.js';
import { AuthModule } from './auth/auth.module.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { ApiError } from './common/errors/error-catalogue.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import type { DatabaseHandle } from './database/embedded-postgres.js';
import { HealthModule } from './health/health.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { QuickstartModule } from './quickstart/quickstart.module.js';

/** The one validation pipe: DTO failures become 400 invalid_request in the envelope. */
const validationPipe = new ValidationPipe({
  whitelist: true,
  transform: true,
  exceptionFactory: (errors) =>
    new ApiError(
      'invalid_request',
      errors
        .flatMap((error) =>
          Object.values(error.constraints ?? { [error.property]: `${error.property} is invalid` }),
        )
        .join('; '),
    ),
});

@Module({})
export class AppModule {
  static register(config: AppConfig, database: DatabaseHandle): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, config.database.poolMax),
        HealthModule,
        OrganizationsModule,
        ApiKeysModule,
        AssistantsModule,
        AuthModule,
        QuickstartModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useValue: validationPipe },
      ],
    };
  }
}
