/**
 * @module
 * A uPlot time-series chart with its data as a table beside it (collapsed): the table is the
 * chart's text alternative for screen readers and what tests read. Times are UTC everywhere
 * (axis, hover legend, table), whatever the browser's time zone (`./utc.ts`).
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import { num } from './format.ts'
import { type Precision, UTC_STEPS, utcSplits, utcStamp, utcTicks } from './utc.ts'

export interface Line {
  label: string
  values: Array<number | null>
}

const COLORS = [
  '#0b5cad',
  '#c2410c',
  '#15803d',
  '#7e22ce',
  '#b91c1c',
  '#0e7490',
  '#a16207',
  '#be185d',
  '#4d7c0f',
  '#1e3a8a',
  '#9f1239',
  '#334155',
  '#6b7280',
]

export interface ChartProps {
  title: string
  /** Bucket starts, epoch seconds. */
  x: number[]
  lines: Line[]
  unit?: string
  id?: string
  /**
   * Bars: stacked counts per bucket, each bar filling its bucket [t, t + step), so equal series
   * never hide each other and the last bucket is drawn whole. Lines: readings over time.
   */
  kind?: 'bars' | 'lines'
  /** A bar's bucket width, seconds (bars only; default: the gap between the first two x). */
  step?: number
  /** The x axis's span, epoch seconds: a window fixed to the present, not to the data. */
  range?: [number, number]
  /** A time as the legend and the table show it (default: UTC, to the day for daily bars, to the minute for hourly, to the second for lines). */
  xLabel?: (t: number) => string
  /** A value as the axis, the legend and the table show it (default: `num`). */
  format?: (v: number) => string
}

/** uPlot's axis font and its tick length plus gap, px. */
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
const TICK_AND_GAP = 10 + 5
let measure: CanvasRenderingContext2D | null = null

/** The y axis's width in px for its labels: the widest label, the tick and a margin. */
export function axisWidth(values: string[] | null | undefined): number {
  if (!values?.length) return 50
  measure ??= document.createElement('canvas').getContext('2d')
  if (!measure) return 50
  measure.font = AXIS_FONT
  const widest = Math.max(...values.map((v) => measure!.measureText(v ?? '').width))
  return Math.max(40, Math.ceil(widest) + TICK_AND_GAP + 6)
}

/** A y-axis label with as many decimals as the ticks' step has (at most 6), thousands separated. */
export function tickLabel(v: number, step: number): string {
  const s = String(Number(step.toPrecision(6)))
  const decimals = s.includes('e-') ? Number(s.split('e-')[1]) : (s.split('.')[1]?.length ?? 0)
  return v.toLocaleString('en-US', { maximumFractionDigits: Math.min(6, decimals) })
}

/** Running sums of the lines, bottom first: what stacked bars draw. */
export function stack(lines: Line[]): Array<Array<number | null>> {
  const out: Array<Array<number | null>> = []
  lines.forEach((l, i) => {
    out.push(l.values.map((v, j) => (v ?? 0) + ((i ? out[i - 1]![j] : 0) ?? 0)))
  })
  return out
}

export function Chart({
  title,
  x,
  lines,
  unit = '',
  id,
  kind = 'lines',
  step,
  range,
  xLabel,
  format = num,
}: ChartProps) {
  const host = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const shape = `${kind}|${lines.map((l) => l.label).join('|')}`
  const shapeRef = useRef('')
  // Read by the scale's range function, so a new range applies without a rebuild.
  const span = useRef<{ min: number; max: number } | null>(null)
  const current = useRef(lines)
  current.current = lines
  const bars = kind === 'bars'
  const width = bars ? (step ?? (x.length > 1 ? x[1]! - x[0]! : 3600)) : 0
  span.current = range
    ? { min: range[0], max: range[1] }
    : bars && x.length
      ? { min: x[0]!, max: x[x.length - 1]! + width }
      : null
  const precision: Precision = !bars ? 'second' : width >= 86_400 ? 'day' : 'minute'
  const fmtX = xLabel ?? ((t: number) => utcStamp(t, precision))
  // Read by uPlot's formatters, so new ones apply without a rebuild.
  const fmt = useRef({ x: fmtX, v: format })
  fmt.current = { x: fmtX, v: format }

  useEffect(() => {
    const el = host.current
    if (!el) return
    // Bars are drawn from their running sums, the top of the stack first, so each one shows
    // above the ones below it; the legend and the table keep each series' own value.
    const sums = bars ? stack(lines) : lines.map((l) => l.values)
    const order = bars ? lines.map((_, i) => lines.length - 1 - i) : lines.map((_, i) => i)
    // No data yet: the window's two ends, empty, so the axis still reads the window.
    const data = (
      !x.length && range ? [range, ...order.map(() => [null, null])] : [x, ...order.map((i) => sums[i]!)]
    ) as uPlot.AlignedData
    if (plot.current && shapeRef.current === shape) {
      plot.current.setData(data)
      return
    }
    plot.current?.destroy()
    shapeRef.current = shape
    const paths = bars ? uPlot.paths.bars?.({ size: [0.85, 60], align: 1 }) : undefined
    plot.current = new uPlot(
      {
        width: Math.max(260, el.clientWidth),
        height: 220,
        legend: { show: lines.length > 1 },
        scales: {
          x: {
            time: true,
            range: (_u, min, max) => {
              const s = span.current
              return s ? [s.min, s.max] : [min, max]
            },
          },
        },
        axes: [
          {
            incrs: UTC_STEPS,
            splits: (_u, _i, min, max, step) => utcSplits(min, max, step),
            values: (_u, ticks, _i, _space, step) => {
              const labels = utcTicks(ticks, step)
              // The ticks and their labels, for tests and for whoever inspects the page.
              if (el.parentElement)
                el.parentElement.dataset.xTicks = JSON.stringify(ticks.map((t, i) => [t, labels[i]]))
              return labels
            },
          },
          {
            // Plain numbers keep the digits their step has (0.0005 steps read 0.0015, not 0.002).
            values: (_u, vals, _i, _space, step) => {
              const labels = vals.map(
                (v) => `${fmt.current.v === num ? tickLabel(v, step) : fmt.current.v(v)}${unit}`,
              )
              // The labels as drawn, for tests and for whoever inspects the page.
              if (el.parentElement) el.parentElement.dataset.yTicks = JSON.stringify(labels)
              return labels
            },
            // As wide as its longest label: uPlot's fixed 50 px cut `10,000` to `0,000`.
            size: (_u, values) => axisWidth(values),
          },
        ],
        series: [
          { value: (_u, t) => (t === null ? '—' : fmt.current.x(t)) },
          ...order.map((i) => ({
            label: lines[i]!.label,
            stroke: COLORS[i % COLORS.length],
            fill: bars ? COLORS[i % COLORS.length] : undefined,
            width: bars ? 0 : 2,
            paths,
            // Lines: uPlot shows the points where they are sparse (an hour apart), not where dense.
            points: bars ? { show: false } : {},
            value: bars
              ? (_u: uPlot, _v: number | null, _s: number, j: number | null) =>
                  j === null ? '' : fmt.current.v(current.current[i]?.values[j] ?? 0)
              : (_u: uPlot, v: number | null) => (v === null ? '—' : fmt.current.v(v)),
          })),
        ],
        hooks: {
          setScale: [
            (u, key) => {
              // The drawn span, for tests and for whoever inspects the page.
              if (key !== 'x' || !el.parentElement) return
              el.parentElement.dataset.xMin = String(u.scales.x!.min)
              el.parentElement.dataset.xMax = String(u.scales.x!.max)
            },
          ],
        },
      },
      data,
      el,
    )
  }, [x, lines, shape])

  useEffect(() => {
    const el = host.current
    if (!el) return
    const ro = new ResizeObserver(() =>
      plot.current?.setSize({ width: Math.max(260, el.clientWidth), height: 220 }),
    )
    ro.observe(el)
    return () => {
      ro.disconnect()
      plot.current?.destroy()
      plot.current = null
    }
  }, [])

  return (
    <figure class="chart" id={id} data-testid={id}>
      <figcaption>{title}</figcaption>
      <div class="plot" ref={host} role="img" aria-label={`${title} chart; the data is in the table below`} />
      <details>
        <summary>Data as a table</summary>
        <div class="table-wrap">
          <table class="chart-data">
            <thead>
              <tr>
                <th scope="col">time</th>
                {lines.map((l) => (
                  <th scope="col" class="num">
                    {l.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {x.map((t, i) => (
                <tr>
                  <th scope="row" data-t={t}>
                    {fmtX(t)}
                  </th>
                  {lines.map((l) => (
                    <td class="num">{l.values[i] == null ? '' : format(l.values[i]!)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}

/** Series from the usage API as chart lines of one metric. */
export function seriesLines(
  series: Array<{ group: string; points: Array<Record<string, any>> }>,
  metric: string,
): { x: number[]; lines: Line[] } {
  const x = (series[0]?.points ?? []).map((p) => Date.parse(p.t) / 1000)
  return { x, lines: series.map((s) => ({ label: s.group, values: s.points.map((p) => p[metric] ?? 0) })) }
}
