import { formatNumber } from '../ui';
import type { UsageLine } from './usage-data';

/**
 * Tokens per bucket as an SVG bar chart, straight from the API's ungrouped lines (one line per
 * period), so each bar is the API's own total. Hand-written: a charting library would be most of
 * the bundle for one bar chart. A table with the same numbers follows it for screen readers.
 */
export function UsageChart({ lines, query }: { lines: UsageLine[]; query?: string }) {
  if (lines.length === 0) return null;
  const width = 720;
  const height = 180;
  const max = Math.max(1, ...lines.map((line) => line.total_tokens));
  const slot = width / lines.length;
  const bar = Math.min(48, Math.max(2, slot * 0.7));
  // Hour labels (`11-28T04:00`) are twice as long as days': half as many fit under the bars.
  const labelEvery = Math.ceil(lines.length / (lines[0].period.length > 10 ? 8 : 16));
  return (
    <figure class="chart" data-testid="usage-chart" data-query={query}>
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-labelledby="usage-chart-title">
        <title id="usage-chart-title">Total tokens per period</title>
        {lines.map((line, index) => {
          const h = Math.round((line.total_tokens / max) * height);
          return (
            <g key={line.period}>
              <rect class="bar" x={index * slot + (slot - bar) / 2} y={height - h} width={bar} height={h}>
                <title>{`${line.period}: ${formatNumber(line.total_tokens)} tokens`}</title>
              </rect>
              {index % labelEvery === 0 ? (
                <text class="axis" x={index * slot + slot / 2} y={height + 14} text-anchor="middle">
                  {line.period.slice(5, 16) || line.period}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption class="muted">Total tokens per period (the API&apos;s ungrouped totals).</figcaption>
    </figure>
  );
}
