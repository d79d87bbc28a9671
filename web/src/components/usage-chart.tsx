import { useEffect, useRef, useState } from 'preact/hooks';

export interface ChartPoint {
  start: string;
  group: string;
  value: number;
}

/** The periods a usage chart covers, as the console's range selects offer them (the usage API's `range`). */
export function RangeOptions() {
  return (
    <>
      <option value="24h">Last 24 hours</option>
      <option value="7d">Last 7 days</option>
      <option value="30d">Last 30 days</option>
      <option value="90d">Last 90 days</option>
    </>
  );
}

const COLORS = ['#1f4fc4', '#c2410c', '#0f766e', '#7e22ce', '#b91c1c', '#4d7c0f', '#a16207', '#be185d', '#475569'];
const HOUR_MS = 3_600_000;

/** A color per group, stable for the chart's legend. */
export function groupColor(index: number): string {
  return COLORS[index % COLORS.length]!;
}

function bucketLabel(ms: number, bucket: 'hour' | 'day'): string {
  const text = new Date(ms).toISOString();
  return bucket === 'hour' ? `${text.slice(5, 10)} ${text.slice(11, 13)}:00` : text.slice(5, 10);
}

/**
 * Stacked bars per UTC hour or day, one color per group, drawn as plain SVG at the box's own
 * width (so text stays legible on a phone). Hovering or focusing a bar shows every group's value
 * in that bucket; all times are UTC and the axis says so.
 */
export function UsageChart(props: {
  points: ChartPoint[];
  groups: Array<{ id: string; label: string }>;
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  format: (value: number) => string;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(600);
  const [active, setActive] = useState<number | null>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(Math.max(240, element.clientWidth)));
    observer.observe(element);
    setWidth(Math.max(240, element.clientWidth));
    return () => observer.disconnect();
  }, []);

  const size = props.bucket === 'hour' ? HOUR_MS : 24 * HOUR_MS;
  const first = Math.floor(Date.parse(props.from) / size) * size;
  const last = Math.floor((Date.parse(props.to) - 1) / size) * size;
  const starts: number[] = [];
  for (let at = first; at <= last; at += size) starts.push(at);
  const order = new Map(props.groups.map((group, index) => [group.id, index]));
  const cells = starts.map(() => new Array<number>(props.groups.length).fill(0));
  for (const point of props.points) {
    const column = Math.round((Date.parse(point.start) - first) / size);
    const row = order.get(point.group);
    if (cells[column] && row !== undefined) cells[column]![row]! += point.value;
  }
  const totals = cells.map((column) => column.reduce((sum, value) => sum + value, 0));
  const top = Math.max(1, ...totals);
  const height = 220;
  const axis = [0, 0.5, 1].map((share) => ({ share, text: props.format(top * share) }));
  // Room for the longest amount on the axis (11 px digits are under 7 px wide), never under the usual margin.
  const longest = Math.max(...axis.map((label) => label.text.length));
  const left = Math.min(Math.round(width / 3), Math.max(width < 480 ? 56 : 80, 14 + 7 * longest));
  const bottom = 28;
  const plotWidth = width - left - 8;
  const plotHeight = height - bottom - 10;
  const step = plotWidth / Math.max(1, starts.length);
  const barWidth = Math.max(1, step * 0.8);
  const labelEvery = Math.max(1, Math.ceil(starts.length / Math.floor(plotWidth / (props.bucket === 'hour' ? 90 : 56))));
  const y = (value: number) => 10 + plotHeight - (value / top) * plotHeight;

  return (
    <div class="usage-chart" ref={box}>
      <svg width={width} height={height} role="img" aria-label={props.label}>
        {axis.map(({ share, text }) => (
          <g key={share}>
            <line x1={left} x2={width - 8} y1={y(top * share)} y2={y(top * share)} class="grid" />
            <text x={left - 6} y={y(top * share) + 4} text-anchor="end" class="axis">
              {text}
            </text>
          </g>
        ))}
        {starts.map((start, column) => {
          let base = 0;
          const x = left + column * step + (step - barWidth) / 2;
          return (
            <g
              key={start}
              tabIndex={totals[column] ? 0 : -1}
              onMouseEnter={() => setActive(column)}
              onMouseLeave={() => setActive(null)}
              onFocus={() => setActive(column)}
              onBlur={() => setActive(null)}
            >
              <rect x={left + column * step} y={10} width={step} height={plotHeight} fill="transparent" />
              {cells[column]!.map((value, row) => {
                if (!value) return null;
                const y0 = y(base);
                base += value;
                return <rect key={row} x={x} width={barWidth} y={y(base)} height={Math.max(1, y0 - y(base))} fill={groupColor(row)} />;
              })}
              {column % labelEvery === 0 && (
                <text x={left + column * step + step / 2} y={height - 10} text-anchor="middle" class="axis">
                  {bucketLabel(start, props.bucket)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <p class="hint">Times in UTC, per {props.bucket}.</p>
      {active !== null && totals[active] !== undefined && (
        <div class="chart-tip" role="status" style={{ left: `${Math.min(width - 200, Math.max(0, left + active * step))}px` }}>
          <strong>
            {new Date(starts[active]!)
              .toISOString()
              .slice(0, props.bucket === 'hour' ? 13 : 10)
              .replace('T', ' ')}
            {props.bucket === 'hour' ? ':00' : ''} UTC
          </strong>
          <ul>
            {props.groups.map((group, row) =>
              cells[active]![row] ? (
                <li key={group.id}>
                  <span class="swatch" style={{ background: groupColor(row) }} /> {group.label}: {props.format(cells[active]![row]!)}
                </li>
              ) : null,
            )}
          </ul>
          <span>Total {props.format(totals[active]!)}</span>
        </div>
      )}
    </div>
  );
}

/** The chart's groups with their colors. */
export function Legend({ groups }: { groups: Array<{ id: string; label: string }> }) {
  if (groups.length < 2) return null;
  return (
    <ul class="legend" aria-label="Colors">
      {groups.map((group, index) => (
        <li key={group.id}>
          <span class="swatch" style={{ background: groupColor(index) }} /> {group.label}
        </li>
      ))}
    </ul>
  );
}
