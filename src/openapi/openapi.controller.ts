import { Controller, Get } from '@nestjs/common';
import { Public } from '../auth/auth.decorators.js';
import { buildOpenApiDocument } from './openapi.builder.js';

/** Serves the document from the builder, so the image needs no generated file. */
@Controller()
export class OpenApiController {
  private readonly document = buildOpenApiDocument();

  @Public()
  @Get('openapi.json')
  describe(): Record<string, unknown> {
    return this.document;
  }
}
