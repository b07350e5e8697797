/**
 * A small SVG chart of one analytics graph (GET /v1/analytics/graphs/:metric): one series as bars, several as lines,
 * each with a legend; the figures are in the elements' titles and in a visually hidden table for screen readers.
 */
import { time } from './format.ts';

export interface Point {
  timestamp: string;
  [series: string]: number | string | null;
}

const COLOURS = ['#0b57d0', '#b3261e', '#146c2e', '#7c4dff'];
const W = 400;
const H = 100;

export function Chart({ title, data, series, format }: { title: string; data: Point[]; series: string[]; format: (v: number) => string }) {
  const values = data.flatMap((d) => series.map((s) => Number(d[s] ?? 0)));
  const max = Math.max(0, ...values);
  const scale = (v: number) => (max === 0 ? 0 : (v / max) * H);
  const step = data.length > 0 ? W / data.length : W;
  return (
    <figure class="chart">
      <figcaption>
        {title} <span class="muted">(max {format(max)})</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" aria-hidden="true">
        {series.length === 1
          ? data.map((d, i) => {
              const v = Number(d[series[0]!] ?? 0);
              return (
                <rect key={d.timestamp} x={i * step} width={Math.max(step * 0.8, 0.5)} y={H - scale(v)} height={scale(v)} fill={COLOURS[0]}>
                  <title>
                    {time(d.timestamp)}: {format(v)}
                  </title>
                </rect>
              );
            })
          : series.map((s, k) => (
              <polyline
                key={s}
                fill="none"
                stroke={COLOURS[k % COLOURS.length]}
                stroke-width="1.5"
                vector-effect="non-scaling-stroke"
                points={data.map((d, i) => `${i * step + step / 2},${H - scale(Number(d[s] ?? 0))}`).join(' ')}
              />
            ))}
      </svg>
      {series.length > 1 && (
        <p class="legend">
          {series.map((s, k) => (
            <span key={s}>
              <i style={{ background: COLOURS[k % COLOURS.length] }} /> {s.replace(/_/g, ' ')}
            </span>
          ))}
        </p>
      )}
      <table class="sr-only">
        <caption>{title}</caption>
        <tbody>
          {data
            .filter((d) => series.some((s) => Number(d[s] ?? 0) !== 0))
            .map((d) => (
              <tr key={d.timestamp}>
                <th scope="row">{time(d.timestamp)}</th>
                {series.map((s) => (
                  <td key={s}>{format(Number(d[s] ?? 0))}</td>
                ))}
              </tr>
            ))}
        </tbody>
      </table>
    </figure>
  );
}
