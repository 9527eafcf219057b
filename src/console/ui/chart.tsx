/**
 * @module
 * A uPlot time-series chart with its data as a table beside it (collapsed): the table is the
 * chart's text alternative for screen readers and what tests read.
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'

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
  /** Bars for counts per bucket; lines for live readings. */
  kind?: 'bars' | 'lines'
  xLabel?: (t: number) => string
}

export function Chart({ title, x, lines, unit = '', id, kind = 'lines', xLabel }: ChartProps) {
  const host = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const shape = `${kind}|${lines.map((l) => l.label).join('|')}`
  const shapeRef = useRef('')

  useEffect(() => {
    const el = host.current
    if (!el) return
    const data = [x, ...lines.map((l) => l.values)] as uPlot.AlignedData
    if (plot.current && shapeRef.current === shape) {
      plot.current.setData(data)
      return
    }
    plot.current?.destroy()
    shapeRef.current = shape
    const bars = kind === 'bars' ? uPlot.paths.bars?.({ size: [0.8, 40] }) : undefined
    plot.current = new uPlot(
      {
        width: Math.max(260, el.clientWidth),
        height: 220,
        legend: { show: lines.length > 1 },
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, vals) => vals.map((v) => `${v}${unit}`) }],
        series: [
          {},
          ...lines.map((l, i) => ({
            label: l.label,
            stroke: COLORS[i % COLORS.length],
            fill: kind === 'bars' ? `${COLORS[i % COLORS.length]}55` : undefined,
            width: 2,
            paths: bars,
            points: { show: false },
          })),
        ],
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

  const fmtX = xLabel ?? ((t: number) => new Date(t * 1000).toLocaleString())
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
                    <td class="num">{l.values[i] ?? ''}</td>
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
