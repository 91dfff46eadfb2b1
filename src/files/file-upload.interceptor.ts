import {
  BadRequestException,
  Inject,
  Injectable,
  PayloadTooLargeException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Observable } from 'rxjs';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

/** The multipart part the upload route receives (multer's memory storage; typed here, no @types/multer). */
export interface UploadedPart {
  originalname: string;
  mimetype: string;
  size: number;
  buffer: Buffer;
}

/**
 * Reads POST /v1/files' multipart body (after the guards: an unauthenticated upload is refused
 * before any of it is read) with multer, in memory, stopping at FILES_MAX_BYTES. The JSON body
 * limit (BODY_LIMIT) does not apply: the request edge parses JSON bodies only. multer's errors
 * are said in the catalogue's words.
 */
@Injectable()
export class FileUploadInterceptor implements NestInterceptor {
  private readonly multer: NestInterceptor;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const Multer = FileInterceptor('file', {
      // Filenames as UTF-8, as browsers and the official SDKs send them.
      defParamCharset: 'utf8',
      limits: { fileSize: config.files.maxBytes, files: 1, fields: 8, fieldSize: 1024, parts: 10 },
    });
    this.multer = new Multer();
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    try {
      return await this.multer.intercept(context, next);
    } catch (error) {
      if (error instanceof PayloadTooLargeException) {
        throw new ApiError(
          'file_too_large',
          `The file exceeds the limit of ${this.config.files.maxBytes} bytes`,
        );
      }
      if (error instanceof BadRequestException) {
        throw new ApiError('invalid_request', `The multipart body was refused: ${error.message}`);
      }
      throw error;
    }
  }
}
