import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyStrategy } from './api-key.strategy.js';

@Module({
  imports: [ApiKeysModule],
  providers: [ApiKeyStrategy, { provide: APP_GUARD, useClass: ApiKeyGuard }],
})
export class AuthModule {}
