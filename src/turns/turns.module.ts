import { Module } from '@nestjs/common';
import { TurnEvents } from './turn-events.js';

/** The turn core's shared services: the "turn recorded" hook its effects subscribe to. */
@Module({
  providers: [TurnEvents],
  exports: [TurnEvents],
})
export class TurnsModule {}
