import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../common/errors/error-catalogue.js';
import { checkStorableText } from '../common/http/storable-text.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { parseFileId } from './dto/files.dto.js';
import { StoredFileEntity, type TextStatus } from './entities/stored-file.entity.js';
import { USER_SCOPED_PURPOSE, type FilePurpose } from './file-purposes.js';
import type { UploadedPart } from './file-upload.interceptor.js';
import { FilesRepository, type FileRecord } from './files.repository.js';
import { extractFileText } from './text-extraction.js';

const MAX_FILENAME_LENGTH = 512;

export interface FilePage {
  items: FileRecord[];
  hasMore: boolean;
}

/** Who is asking: the key's organization and the request's `x-user-id` (null without it). */
export interface FileCaller {
  organizationId: string;
  userId: string | null;
}

/**
 * The Files API (docs/knowledge.md). A `user_data` file is its uploader's (`x-user-id`) alone;
 * files of every other purpose are the organization's. What a caller may not see is a 404,
 * exactly as what does not exist.
 */
@Injectable()
export class FilesService {
  constructor(
    private readonly files: FilesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async upload(
    caller: FileCaller,
    purpose: FilePurpose,
    part: UploadedPart | undefined,
  ): Promise<FileRecord> {
    if (part === undefined) {
      throw new ApiError(
        'missing_required_field',
        'Missing required field: file (a multipart/form-data file part)',
      );
    }
    const userScoped = purpose === USER_SCOPED_PURPOSE;
    if (userScoped && caller.userId === null) {
      throw new ApiError(
        'missing_required_field',
        'A user_data file needs the x-user-id header: it belongs to that user',
      );
    }
    if (part.size > this.config.files.maxBytes) {
      throw new ApiError(
        'file_too_large',
        `The file exceeds the limit of ${this.config.files.maxBytes} bytes`,
      );
    }
    const filename = part.originalname === '' ? 'upload' : part.originalname;
    checkStorableText(filename, 'The file name');
    if (filename.length > MAX_FILENAME_LENGTH) {
      throw new ApiError(
        'invalid_request',
        `The file name must be at most ${MAX_FILENAME_LENGTH} characters`,
      );
    }
    const mediaType = part.mimetype.slice(0, 255) || 'application/octet-stream';
    const extracted = await extractFileText(filename, mediaType, part.buffer);
    const file = Object.assign(new StoredFileEntity(), {
      id: randomUUID(),
      organizationId: caller.organizationId,
      userId: userScoped ? caller.userId : null,
      purpose,
      filename,
      mediaType,
      bytes: String(part.size),
      content: part.buffer,
      textStatus: extracted.status,
      extractedText: extracted.text,
      createdAt: new Date(),
      expiresAt: null,
    });
    if (!(await this.files.insertWithinQuota(file, this.config.files.organizationMaxBytes))) {
      throw new ApiError(
        'file_storage_quota_exceeded',
        `The organization's files would exceed their limit of ${this.config.files.organizationMaxBytes} bytes: delete files first`,
      );
    }
    return {
      id: file.id,
      userId: file.userId,
      purpose,
      filename,
      bytes: part.size,
      textStatus: file.textStatus,
      createdAt: file.createdAt,
      expiresAt: null,
    };
  }

  async list(
    caller: FileCaller,
    query: { limit: number; after: string | null; order: 'asc' | 'desc'; purpose: FilePurpose | null },
  ): Promise<FilePage> {
    let after: { createdAt: Date; id: string } | null = null;
    if (query.after !== null) {
      const id = parseFileId(query.after);
      const last = id === null ? null : await this.files.find(caller.organizationId, caller.userId, id);
      if (last === null) throw new ApiError('invalid_request', 'after names no file this caller can see');
      after = { createdAt: last.createdAt, id: last.id };
    }
    const rows = await this.files.listPage(caller.organizationId, caller.userId, {
      purpose: query.purpose,
      after,
      order: query.order,
      limit: query.limit + 1,
    });
    return { items: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  async get(caller: FileCaller, id: string | null): Promise<FileRecord> {
    const file = id === null ? null : await this.files.find(caller.organizationId, caller.userId, id);
    if (file === null) throw notFound();
    return file;
  }

  async content(caller: FileCaller, id: string | null): Promise<{ filename: string; content: Buffer }> {
    const file = id === null ? null : await this.files.findContent(caller.organizationId, caller.userId, id);
    if (file === null) throw notFound();
    return file;
  }

  /**
   * The text extracted at upload, for chunking and search (vector stores, file_search): null
   * text with status `unavailable` for formats not yet extracted; 404 as for every other read.
   */
  async text(
    caller: FileCaller,
    id: string,
  ): Promise<{ filename: string; textStatus: TextStatus; text: string | null }> {
    const file = await this.files.findText(caller.organizationId, caller.userId, id);
    if (file === null) throw notFound();
    return file;
  }

  async delete(caller: FileCaller, id: string | null): Promise<void> {
    if (id === null || !(await this.files.delete(caller.organizationId, caller.userId, id))) throw notFound();
  }
}

function notFound(): ApiError {
  return new ApiError('file_not_found', 'No file with this id');
}
