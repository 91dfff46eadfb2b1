import { ApiError } from '../../common/errors/error-catalogue.js';
import {
  MAX_USER_ID_LENGTH,
  parseAssistantFilter,
  singleQueryParam,
} from '../../common/http/request-params.js';
import type { UsageDimension } from '../usage.repository.js';

export interface UsageQuery {
  period: 'day' | 'month';
  groupBy: UsageDimension[];
  /** Inclusive UTC days, `YYYY-MM-DD`. */
  from: string;
  to: string;
  assistantId: string | null;
  userId: string | null;
}

const DIMENSIONS: readonly UsageDimension[] = ['organization', 'assistant', 'specialist', 'key', 'user'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** A year and a day of days: a request for more is refused rather than scanning for ever. */
const MAX_RANGE_DAYS = 366;

/**
 * `GET …/usage` query: `period=day|month` (default day), `group_by=` a comma-separated list of
 * organization, assistant, specialist, key, user; `from`/`to` inclusive UTC days (default: the
 * current month up to today); optional `assistant_id` and `user_id` narrowings.
 */
export function parseUsageQuery(query: Record<string, unknown>, today = new Date()): UsageQuery {
  const period = singleQueryParam(query, 'period') ?? 'day';
  if (period !== 'day' && period !== 'month') {
    throw new ApiError('invalid_request', 'period must be "day" or "month"');
  }
  const groupRaw = singleQueryParam(query, 'group_by') ?? '';
  const groupBy = groupRaw === '' ? [] : groupRaw.split(',').map((part) => part.trim());
  for (const dimension of groupBy) {
    if (!DIMENSIONS.includes(dimension as UsageDimension)) {
      throw new ApiError('invalid_request', `group_by takes ${DIMENSIONS.join(', ')}; got "${dimension}"`);
    }
  }
  if (new Set(groupBy).size !== groupBy.length) {
    throw new ApiError('invalid_request', 'group_by names a dimension twice');
  }
  const todayText = today.toISOString().slice(0, 10);
  const from = day(query, 'from') ?? `${todayText.slice(0, 7)}-01`;
  const to = day(query, 'to') ?? todayText;
  if (from > to) throw new ApiError('invalid_request', 'from must not be after to');
  if ((Date.parse(to) - Date.parse(from)) / 86_400_000 >= MAX_RANGE_DAYS) {
    throw new ApiError('invalid_request', `from and to may be at most ${MAX_RANGE_DAYS} days apart`);
  }
  const userId = singleQueryParam(query, 'user_id');
  if (userId !== undefined && (userId.length === 0 || userId.length > MAX_USER_ID_LENGTH)) {
    throw new ApiError('invalid_request', `user_id must be 1 to ${MAX_USER_ID_LENGTH} characters`);
  }
  return {
    period,
    groupBy: groupBy as UsageDimension[],
    from,
    to,
    assistantId: parseAssistantFilter(query),
    userId: userId ?? null,
  };
}

function day(query: Record<string, unknown>, name: string): string | undefined {
  const raw = singleQueryParam(query, name);
  if (raw === undefined) return undefined;
  const parsed = DAY.test(raw) ? new Date(`${raw}T00:00:00Z`) : null;
  if (!parsed || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== raw) {
    throw new ApiError('invalid_request', `${name} must be a day as YYYY-MM-DD`);
  }
  return raw;
}
