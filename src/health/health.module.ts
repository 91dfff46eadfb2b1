import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';

/** Probes; LifecycleState comes from the global LifecycleModule. */
@Module({
  controllers: [HealthController],
})
export class HealthModule {}
