import { Module } from '@nestjs/common';
import { OpenApiController } from './openapi.controller.js';

/** `GET /openapi.json`; `npm run openapi` writes the same document to docs/openapi.json. */
@Module({
  controllers: [OpenApiController],
})
export class OpenApiModule {}
