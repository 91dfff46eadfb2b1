import { Injectable } from '@nestjs/common';

/** Process-wide lifecycle flags shared by readiness and the shutdown sequence. */
@Injectable()
export class LifecycleState {
  shuttingDown = false;
}
