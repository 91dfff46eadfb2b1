import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { OwnAuthentication } from '../auth/auth.decorators.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { Metrics } from './metrics.service.js';

@Controller()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  /** Prometheus text exposition of this replica's metrics. */
  @OwnAuthentication()
  @UseGuards(MetricsTokenGuard)
  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    const { contentType, body } = await this.metrics.render();
    res.status(200).setHeader('Content-Type', contentType).send(body);
  }
}
