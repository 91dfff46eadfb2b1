import { Inject, Injectable } from '@nestjs/common';
import { takesInput, type ModelSettings } from '../llm/model-settings.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { GuardedFetch, readCappedBytes } from '../tools/ssrf/guarded-fetch.js';
import { SsrfRefusedError } from '../common/network/ssrf-policy.js';
import type { InputItem, InputPart } from '../turns/input-item.types.js';
import { parseFileId } from '../files/dto/files.dto.js';
import { FilesService, type FileCaller } from '../files/files.service.js';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * Images and files of a request, made ready for the model before anything is sent: the
 * assistant's model must take them (model settings `vision` / `fileInput`), each must fit its
 * size limit, and an http(s) URL is fetched by the service through the SSRF guard and inlined as
 * a data URL. Inlining makes every upstream see the same bytes (local servers often cannot reach
 * the URL, or take only data URLs) and lets the thread keep what the model saw after the URL
 * changes. A `file_id` names a file of the Files API the caller may see (its organization's, or
 * its end user's `user_data`): the model gets the text extracted at upload as a text part, so
 * any model takes it. Returns the items the model sees; the request's own items are stored as sent.
 */
@Injectable()
export class InputAttachments {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly http: GuardedFetch,
    private readonly files: FilesService,
  ) {}

  async forModel(
    input: InputItem[],
    model: ModelSettings,
    caller: FileCaller,
    signal?: AbortSignal,
  ): Promise<InputItem[]> {
    if (!input.some((item) => item.type === 'message' && item.parts)) return input;
    return Promise.all(
      input.map(async (item, index) => {
        if (item.type !== 'message' || !item.parts) return item;
        const parts = await Promise.all(
          item.parts.map((part, partIndex) =>
            this.part(part, `input[${index}].content[${partIndex}]`, model, caller, signal),
          ),
        );
        return { ...item, parts };
      }),
    );
  }

  private async part(
    part: InputPart,
    path: string,
    model: ModelSettings,
    caller: FileCaller,
    signal: AbortSignal | undefined,
  ): Promise<InputPart> {
    if (part.type === 'input_text') return part;
    if (part.type === 'input_file' && part.fileId !== undefined) {
      return this.uploadedFile(part.fileId, `${path}.file_id`, caller);
    }
    if (part.type === 'input_image') {
      if (!takesInput(model, 'vision')) {
        throw new ApiError(
          'invalid_request',
          `${path} (input_image): the model behind this assistant does not take images (its model setting vision is off)`,
        );
      }
      const limit = this.config.inputs.maxImageBytes;
      if (part.imageUrl.startsWith('data:')) {
        checkSize(decodedSize(part.imageUrl), limit, `${path}.image_url`, 'INPUT_IMAGE_MAX_BYTES');
        return part;
      }
      const { type, bytes } = await this.fetch(
        part.imageUrl,
        `${path}.image_url`,
        limit,
        'INPUT_IMAGE_MAX_BYTES',
        signal,
      );
      if (!IMAGE_TYPES.has(type)) {
        throw new ApiError(
          'invalid_request',
          `${path}.image_url answered ${type || 'no content type'}; a PNG, JPEG, GIF or WebP image is needed`,
        );
      }
      return { ...part, imageUrl: `data:${type};base64,${bytes.toString('base64')}` };
    }
    if (!takesInput(model, 'fileInput')) {
      throw new ApiError(
        'invalid_request',
        `${path} (input_file): the model behind this assistant does not take files (its model setting fileInput is off)`,
      );
    }
    const limit = this.config.inputs.maxFileBytes;
    if (part.fileData !== null) {
      checkSize(decodedSize(part.fileData), limit, `${path}.file_data`, 'INPUT_FILE_MAX_BYTES');
      return part;
    }
    const url = part.fileUrl as string;
    const { type, bytes } = await this.fetch(url, `${path}.file_url`, limit, 'INPUT_FILE_MAX_BYTES', signal);
    const filename = part.filename ?? lastPathSegment(url);
    return {
      type: 'input_file',
      filename,
      fileData: `data:${type || 'application/octet-stream'};base64,${bytes.toString('base64')}`,
      fileUrl: null,
    };
  }

  /**
   * An uploaded file as the model reads it: its name, then its extracted text. Another
   * organization's file (or another end user's `user_data`) is a 404 exactly as a missing one.
   */
  private async uploadedFile(fileId: string, param: string, caller: FileCaller): Promise<InputPart> {
    const id = parseFileId(fileId);
    const file = id === null ? null : await this.files.text(caller, id).catch(unlessNotFound);
    if (file === null) throw new ApiError('file_not_found', `${param}: no file ${fileId}`);
    if (file.text === null) {
      throw new ApiError(
        'invalid_request',
        `${param}: no text could be extracted from ${file.filename}; send it as file_data to a model that takes files`,
      );
    }
    return { type: 'input_text', text: `[file ${file.filename} (${fileId})]\n${file.text}` };
  }

  /** GET through the SSRF guard, bounded in time and size; every failure names the parameter. */
  private async fetch(
    url: string,
    param: string,
    limit: number,
    limitName: string,
    signal: AbortSignal | undefined,
  ): Promise<{ type: string; bytes: Buffer }> {
    const timeout = AbortSignal.timeout(this.config.inputs.urlTimeoutMs);
    const deadline = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await this.http.request(url, { signal: deadline, headers: { accept: '*/*' } });
    } catch (error) {
      if (error instanceof SsrfRefusedError) {
        // The guard's own message names hosts and addresses: an internal network's layout stays inside.
        throw new ApiError('invalid_request', `${param} was not fetched: the address is not allowed`);
      }
      const reason = deadline.aborted ? 'it did not answer in time' : 'it could not be reached';
      throw new ApiError('invalid_request', `${param} was not fetched: ${reason}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ApiError('invalid_request', `${param} was not fetched: it answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > limit) {
      await response.body?.cancel();
      checkSize(declared, limit, param, limitName);
    }
    let read: { bytes: Buffer; truncated: boolean };
    try {
      read = await readCappedBytes(response, limit);
    } catch {
      throw new ApiError('invalid_request', `${param} was not fetched: the transfer failed`);
    }
    if (read.truncated) checkSize(limit + 1, limit, param, limitName);
    const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    return { type, bytes: read.bytes };
  }
}

function unlessNotFound(error: unknown): null {
  if (error instanceof ApiError && error.code === 'file_not_found') return null;
  throw error;
}

/** The URL's last path segment, decoded (as it was written when it cannot be), or null. */
function lastPathSegment(url: string): string | null {
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment) || null;
  } catch {
    return segment || null;
  }
}

/** Bytes a base64 data URL (or bare base64) decodes to, without decoding it. */
function decodedSize(data: string): number {
  const base64 = data.startsWith('data:') ? data.slice(data.indexOf(',') + 1) : data;
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

function checkSize(size: number, limit: number, param: string, limitName: string): void {
  if (size <= limit) return;
  throw new ApiError(
    'invalid_request',
    `${param} is larger than ${limit} bytes, the limit for this service (${limitName})`,
  );
}
