import { Transform } from 'class-transformer';
import { Allow, IsDefined, IsIn, IsOptional, IsString } from 'class-validator';
import { failsWith } from '../../common/validation/validation.pipe.js';
import { PageLimit, parsePrefixedUuid } from '../../common/http/request-params.js';
import { FILE_PURPOSES, type FilePurpose } from '../file-purposes.js';

const PURPOSE_MESSAGE = `$path must be one of ${FILE_PURPOSES.join(', ')}`;

/** `file-<uuid>` as the API shows it; anything else (null) names no file, so 404. */
export const parseFileId = (raw: string): string | null => parsePrefixedUuid(raw, 'file-', false);

export const toFileId = (id: string): string => `file-${id}`;

/** POST /v1/files: the multipart form's text fields (the file part is read by the interceptor). */
export class UploadFileBodyDto {
  @IsDefined(failsWith('missing_required_field', 'Missing required field: purpose'))
  @IsIn(FILE_PURPOSES, { message: PURPOSE_MESSAGE })
  purpose!: FilePurpose;
}

/** As OpenAI: up to 10,000 files a page, 10,000 unless `limit` says otherwise. */
export const FILES_PAGE = { default: 10_000, max: 10_000 } as const;

/** GET /v1/files */
export class FileListQueryDto {
  @PageLimit(FILES_PAGE.max)
  limit: number = FILES_PAGE.default;

  /** The id of the last file of the previous page, as the official SDKs page. */
  @IsOptional()
  @IsString()
  after?: string;

  @IsOptional()
  @IsIn(['asc', 'desc'], { message: '$path must be "asc" or "desc"' })
  order: 'asc' | 'desc' = 'desc';

  @IsOptional()
  @IsIn(FILE_PURPOSES, { message: PURPOSE_MESSAGE })
  purpose?: FilePurpose;
}

/** /v1/files/:fileId… */
export class FileParams {
  @Allow()
  @Transform(({ value }: { value: string }) => parseFileId(value))
  fileId!: string | null;
}
