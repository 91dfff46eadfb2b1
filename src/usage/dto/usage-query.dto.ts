import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { AssistantFilterQuery, MAX_USER_ID_LENGTH } from '../../common/http/request-params.js';
import type { UsageDimension, UsagePeriod } from '../usage.repository.js';

export interface UsageQuery {
  period: UsagePeriod;
  groupBy: UsageDimension[];
  /** Inclusive UTC days, `YYYY-MM-DD`. */
  from: string;
  to: string;
  assistantId: string | null;
  userId: string | null;
}

const DIMENSIONS: readonly UsageDimension[] = [
  'organization',
  'assistant',
  'specialist',
  'key',
  'user',
  'model',
];
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** A year and a day of days: a request for more is refused rather than scanning for ever. */
const MAX_RANGE_DAYS = 366;
/** Hourly buckets over at most a month: 744 buckets per line of dimensions. */
const MAX_HOURLY_RANGE_DAYS = 31;

/**
 * `GET …/usage` query, validated by the global pipe: `period=hour|day|month` (default day),
 * `group_by=` a comma-separated list of organization, assistant, specialist, key, user, model;
 * `from`/`to` inclusive UTC days (default: the current month up to today); optional
 * `assistant_id` and `user_id` narrowings.
 */
export class UsageQueryDto extends AssistantFilterQuery {
  @IsOptional()
  @IsIn(['hour', 'day', 'month'], { message: 'period must be "hour", "day" or "month"' })
  period: UsagePeriod = 'day';

  @IsOptional()
  @IsString({ message: `group_by takes ${DIMENSIONS.join(', ')}` })
  group_by?: string;

  @IsOptional()
  @Matches(DAY, { message: 'from must be a day as YYYY-MM-DD' })
  from?: string;

  @IsOptional()
  @Matches(DAY, { message: 'to must be a day as YYYY-MM-DD' })
  to?: string;

  @IsOptional()
  @IsString({ message: `user_id must be 1 to ${MAX_USER_ID_LENGTH} characters` })
  @Length(1, MAX_USER_ID_LENGTH, { message: `user_id must be 1 to ${MAX_USER_ID_LENGTH} characters` })
  user_id?: string;
}

/** The checks that relate the fields to each other, and the defaults that depend on today. */
export function toUsageQuery(dto: UsageQueryDto, today = new Date()): UsageQuery {
  const groupBy = dto.group_by ? dto.group_by.split(',').map((part) => part.trim()) : [];
  for (const dimension of groupBy) {
    if (!DIMENSIONS.includes(dimension as UsageDimension)) {
      throw new ApiError('invalid_request', `group_by takes ${DIMENSIONS.join(', ')}; got "${dimension}"`);
    }
  }
  if (new Set(groupBy).size !== groupBy.length) {
    throw new ApiError('invalid_request', 'group_by names a dimension twice');
  }
  const todayText = today.toISOString().slice(0, 10);
  const from = calendarDay(dto.from, 'from') ?? `${todayText.slice(0, 7)}-01`;
  const to = calendarDay(dto.to, 'to') ?? todayText;
  if (from > to) throw new ApiError('invalid_request', 'from must not be after to');
  const maxDays = dto.period === 'hour' ? MAX_HOURLY_RANGE_DAYS : MAX_RANGE_DAYS;
  if ((Date.parse(to) - Date.parse(from)) / 86_400_000 >= maxDays) {
    throw new ApiError(
      'invalid_request',
      `from and to may be at most ${maxDays} days apart${dto.period === 'hour' ? ' for period=hour' : ''}`,
    );
  }
  return {
    period: dto.period,
    groupBy: groupBy as UsageDimension[],
    from,
    to,
    assistantId: dto.assistant_id ?? null,
    userId: dto.user_id ?? null,
  };
}

/** A day that exists (`2026-13-01` is shaped like one and is refused here). */
function calendarDay(raw: string | undefined, name: string): string | undefined {
  if (raw === undefined) return undefined;
  const parsed = new Date(`${raw}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== raw) {
    throw new ApiError('invalid_request', `${name} must be a day as YYYY-MM-DD`);
  }
  return raw;
}
