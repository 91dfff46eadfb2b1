import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { API_KEY_SCOPES } from '../../api-keys/entities/api-key.entity.js';

/** An optional list of up to 100 strings, or null for none (the organization's name lists). */
function NullableNameList(): PropertyDecorator {
  return applyDecorators(
    IsOptional(),
    ValidateIf((_dto, value) => value !== null),
    IsArray(),
    IsString({ each: true }),
    ArrayMaxSize(100),
  );
}

/**
 * The bodies of the admin API's writes. Only shapes are checked here; the rules (slug format,
 * model settings, tool configs, scope names) stay in the services the CLI and `apply` use, so
 * there is one copy of each.
 */
export class PutOrganizationDto {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  /** null: back to the configured default. Platform only, like every field below. */
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsInt()
  @Min(1)
  rateLimitPerMinute?: number | null;

  /** Tokens per UTC month; null: no budget. */
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsInt()
  @Min(1)
  monthlyTokenBudget?: number | null;

  /** Environment variables the organization's admin may reference; null: none. */
  @NullableNameList()
  secretEnvGrants?: string[] | null;

  /** Non-public hosts the organization's configuration may reach; null: none. */
  @NullableNameList()
  ssrfAllowlist?: string[] | null;

  /**
   * The organization's embeddings endpoint: platform only, and set by `apply` only. Accepted
   * here so that an organization's admin key stating it meets the platform-only refusal (403
   * naming it) like every other platform field, not a shape error; the service refuses it to
   * the platform too (400 naming `apply`).
   */
  @IsOptional()
  @Allow()
  embeddings?: unknown;
}

export class PutAssistantDto {
  @IsOptional()
  @IsString()
  instructions?: string;

  /** The whole model settings object (as `--model-json`). */
  @IsOptional()
  @IsObject()
  model?: Record<string, unknown>;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @ArrayMaxSize(128)
  tools?: string[];
}

export class PutSpecialistDto {
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  role?: string;

  @IsOptional()
  @IsString()
  instructions?: string;

  /** null: the assistant's model. */
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsObject()
  model?: Record<string, unknown> | null;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @ArrayMaxSize(128)
  tools?: string[];
}

export class PutToolDto {
  @IsString()
  kind!: string;

  @IsObject()
  config!: Record<string, unknown>;

  @IsOptional()
  @IsString()
  description?: string;

  /** A plugin of the organization by name; null detaches it; omitted keeps it. */
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsString()
  plugin?: string | null;
}

export class PutGatewayDto {
  /** Catalogue tool names the gateway exposes, or `["*"]` for all of them. */
  @IsArray()
  @IsString({ each: true })
  @ArrayMaxSize(256)
  tools!: string[];
}

export class CreateApiKeyDto {
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;

  @IsArray()
  @IsIn(API_KEY_SCOPES, { each: true })
  scopes!: string[];
}

export class AuditLogQueryDto {
  /** A platform administrator's filter (slug or id); an organization key always sees its own. */
  @IsOptional()
  @IsString()
  organization?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @IsOptional()
  @IsString()
  after?: string;
}

export class ApplyQueryDto {
  @IsOptional()
  @IsIn(['true', 'false'])
  dry_run?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  prune?: string;
}
