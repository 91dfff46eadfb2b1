import { Global, Module } from '@nestjs/common';
import { LifecycleState } from './lifecycle.state.js';

/** The shutdown state; its middleware is applied by AppModule, which fixes the order of the edge. */
@Global()
@Module({
  providers: [LifecycleState],
  exports: [LifecycleState],
})
export class LifecycleModule {}
