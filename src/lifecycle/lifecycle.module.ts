import { Global, Module } from '@nestjs/common';
import { LifecycleState } from './lifecycle.state.js';

/** The shutdown state; the app's edge middleware counts requests in it (src/bootstrap/http-edge.middleware.ts). */
@Global()
@Module({
  providers: [LifecycleState],
  exports: [LifecycleState],
})
export class LifecycleModule {}
