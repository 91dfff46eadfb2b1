import { Inject, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ConsoleStaticMiddleware } from './console-static.middleware.js';

/**
 * The web console (docs/console.md): static files only. Everything it shows comes from the
 * documented admin and public APIs, called by the browser with the caller's own credential;
 * this module adds no route of its own. CONSOLE_ENABLED=false leaves /console a plain 404.
 */
@Module({ providers: [ConsoleStaticMiddleware] })
export class ConsoleModule implements NestModule {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    if (!this.config.console.enabled) return;
    consumer
      .apply(ConsoleStaticMiddleware)
      .forRoutes(
        { path: 'console', method: RequestMethod.GET },
        { path: 'console/*path', method: RequestMethod.GET },
      );
  }
}
