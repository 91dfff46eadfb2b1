import { Controller, Get } from '@nestjs/common';
import { Public } from '../auth/auth.decorators.js';

/**
 * Serves the document from the builder, so the image needs no generated file. Built on the
 * first request, not at boot: the builder's code and the document (~1 MiB of heap) stay out of
 * an idle service's memory.
 */
@Controller()
export class OpenApiController {
  private document: Promise<Record<string, unknown>> | undefined;

  @Public()
  @Get('openapi.json')
  describe(): Promise<Record<string, unknown>> {
    this.document ??= import('./openapi.builder.js')
      .then((builder) => builder.buildOpenApiDocument())
      .catch((error: unknown) => {
        // Not remembered: the next request builds it again.
        this.document = undefined;
        throw error;
      });
    return this.document;
  }
}
