import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, ValidateBy } from 'class-validator';
import { PageLimit } from '../../common/http/request-params.js';

/**
 * `include` values this endpoint honours. Image URLs (and file data) are always in the items,
 * so asking for them changes nothing; any other value is refused by name.
 */
const SUPPORTED_INCLUDES = ['message.input_image.image_url'];

/** `include` once or repeated, each value one this endpoint honours; the message names the first other. */
const SupportedIncludes = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === undefined ? undefined : [value].flat())),
    ValidateBy({
      name: 'isSupportedInclude',
      validator: {
        validate: (values: unknown) =>
          Array.isArray(values) && values.every((value) => SUPPORTED_INCLUDES.includes(value as string)),
        defaultMessage: (args) => {
          const values = (args?.value ?? []) as unknown[];
          const unsupported = values.find((value) => !SUPPORTED_INCLUDES.includes(value as string));
          return `include value ${JSON.stringify(unsupported)} is not supported by this endpoint (supported: ${SUPPORTED_INCLUDES.join(', ')})`;
        },
      },
    }),
  );

/** GET /v1/responses/{id}/input_items: OpenAI's cursor list parameters, validated by the global pipe. */
export class ListInputItemsQueryDto {
  /** An item id of the previous page (its `last_id`); absent for the first page. */
  @IsOptional()
  @IsString({ message: 'after is not a cursor this endpoint returned' })
  @Length(1, 300, { message: 'after is not a cursor this endpoint returned' })
  after?: string;

  @PageLimit(100)
  limit: number = 20;

  @IsIn(['asc', 'desc'], { message: 'order must be "asc" or "desc"' })
  order: 'asc' | 'desc' = 'desc';

  @IsOptional()
  @SupportedIncludes()
  include?: string[];

  /** The SDKs send repeated `include[]` keys for arrays. */
  @IsOptional()
  @SupportedIncludes()
  'include[]'?: string[];

  @ValidateBy(
    { name: 'isAbsent', validator: { validate: (value: unknown) => value === undefined } },
    { message: 'before is not supported by this endpoint: page with after' },
  )
  before?: never;
}

/** What the view pages by. */
export interface ListInputItemsQuery {
  after: string | null;
  limit: number;
  order: 'asc' | 'desc';
}
