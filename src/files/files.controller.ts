import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  Param,
  Post,
  Query,
  Res,
  StreamableFile,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { optionalUserId } from '../common/http/request-params.js';
import { FileListQueryDto, FileParams, toFileId, UploadFileBodyDto } from './dto/files.dto.js';
import { FileUploadInterceptor, type UploadedPart } from './file-upload.interceptor.js';
import type { FileRecord } from './files.repository.js';
import { FilesService, type FileCaller } from './files.service.js';

type RequestHeaders = Record<string, string | string[] | undefined>;

/** OpenAI's file object. */
export interface FileView {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  expires_at?: number;
}

export interface FileListView {
  object: 'list';
  data: FileView[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

function toView(file: FileRecord): FileView {
  return {
    id: toFileId(file.id),
    object: 'file',
    bytes: file.bytes,
    created_at: seconds(file.createdAt),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    ...(file.expiresAt === null ? {} : { expires_at: seconds(file.expiresAt) }),
  };
}

/** A filename as an RFC 5987 ext-value: percent-encoded UTF-8, including what encodeURIComponent leaves. */
const rfc5987 = (name: string) =>
  encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

function callerOf(principal: ApiKeyPrincipal, headers: RequestHeaders): FileCaller {
  return { organizationId: principal.organizationId, userId: optionalUserId(headers) };
}

/**
 * OpenAI's Files API as the official SDKs call it (docs/knowledge.md). Keys with the `user`
 * scope (or `full_access`) may use it; `assistant` keys only create responses.
 */
@Controller('v1/files')
@RequireScopes('user')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @Post()
  @UseInterceptors(FileUploadInterceptor)
  async upload(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Body() body: UploadFileBodyDto,
    @UploadedFile() part: UploadedPart | undefined,
  ): Promise<FileView> {
    return toView(await this.files.upload(callerOf(principal, headers), body.purpose, part));
  }

  @Get()
  async list(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: FileListQueryDto,
  ): Promise<FileListView> {
    const page = await this.files.list(callerOf(principal, headers), {
      limit: query.limit,
      after: query.after ?? null,
      order: query.order,
      purpose: query.purpose ?? null,
    });
    const data = page.items.map(toView);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
      has_more: page.hasMore,
    };
  }

  @Get(':fileId')
  async retrieve(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param() { fileId }: FileParams,
  ): Promise<FileView> {
    return toView(await this.files.get(callerOf(principal, headers), fileId));
  }

  /** The bytes as uploaded, always as a download (never rendered: an uploaded HTML page stays inert). */
  @Get(':fileId/content')
  async content(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param() { fileId }: FileParams,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile> {
    const file = await this.files.content(callerOf(principal, headers), fileId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    return new StreamableFile(file.content, {
      type: 'application/octet-stream',
      disposition: `attachment; filename*=UTF-8''${rfc5987(file.filename)}`,
      length: file.content.length,
    });
  }

  @Delete(':fileId')
  async delete(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param() { fileId }: FileParams,
  ): Promise<{ id: string; object: 'file'; deleted: true }> {
    await this.files.delete(callerOf(principal, headers), fileId);
    return { id: toFileId(fileId!), object: 'file', deleted: true };
  }
}
