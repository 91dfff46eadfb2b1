import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { ApiKeyGuard } from './api-key.guard.js';

/** API-key authentication; AppModule makes its guard the first global guard. */
@Module({
  imports: [ApiKeysModule],
  providers: [ApiKeyGuard],
  exports: [ApiKeyGuard],
})
export class AuthModule {}
