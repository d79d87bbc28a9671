import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { nanoOf, usdOfNano } from '../money.ts';

export interface Bucket {
  start: string;
  cost: string;
  requests: number;
  errors: number;
}

/** Spend per bucket as bars, in integer nano-dollars; axis labels are formatted from integers. */
export function SpendChart({ series, label, from, to }: { series: Bucket[]; label: string; from: string; to: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const xs = series.map((bucket) => Date.parse(bucket.start) / 1000);
    const ys = series.map((bucket) => nanoOf(bucket.cost));
    const width = Math.max(280, element.clientWidth);
    const chart = new uPlot(
      {
        width,
        height: 220,
        legend: { show: false },
        scales: {
          x: { time: true, range: () => [Date.parse(from) / 1000, Date.parse(to) / 1000] },
          y: { range: (_chart, _min, max) => [0, Math.max(1, max) * 1.1] },
        },
        axes: [{}, { values: (_chart, ticks) => ticks.map((tick) => usdOfNano(tick)), size: 96 }],
        series: [
          {},
          {
            label: 'Spend',
            stroke: '#2557d6',
            fill: 'rgba(37, 87, 214, 0.25)',
            paths: uPlot.paths.bars!({ size: [0.8, 40] }),
            points: { show: false },
          },
        ],
      },
      [xs, ys],
      element,
    );
    const resize = () => chart.setSize({ width: Math.max(280, element.clientWidth), height: 220 });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [series, from, to]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
