// Plots, drawn with uPlot: messages per second per run, lag per partition over time, and data
// files per table over time (the small-file curve that compaction bends).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { get } from "../api";
import { ErrorBox, useData } from "../ui";
import { JobLinks } from "./history";

const COLOURS = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#65a30d", "#db2777"];

function Chart({
  title,
  series,
  testid,
}: {
  title: string;
  series: { label: string; points: [number, number][] }[];
  testid: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!ref.current) return;
    const times = [...new Set(series.flatMap((s) => s.points.map(([t]) => t)))].sort((a, b) => a - b);
    const data: uPlot.AlignedData = [
      times,
      ...series.map((s) => {
        const byTime = new Map(s.points);
        return times.map((t) => byTime.get(t) ?? null);
      }),
    ];
    const plot = new uPlot(
      {
        width: ref.current.clientWidth || 900,
        height: 240,
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            spanGaps: true,
            points: { show: true, size: 6 },
          })),
        ],
        axes: [{}, { size: 60 }],
        scales: { x: { time: true } },
      },
      data,
      ref.current,
    );
    return () => plot.destroy();
  }, [JSON.stringify(series)]);
  return (
    <div class="card" data-testid={testid}>
      <h2>{title}</h2>
      {series.every((s) => s.points.length === 0) ? <p class="muted">No data yet.</p> : <div ref={ref} class="chart" />}
    </div>
  );
}

export function PlotsPage({ job }: { job: string }) {
  const metrics = useData(() => get<any>(`/api/jobs/${job}/metrics`), [job], 5000);
  const m = metrics.data;
  const t = (iso: string) => new Date(iso).getTime() / 1000;
  const lagSeries = new Map<string, [number, number][]>();
  for (const s of m?.lag ?? []) {
    const key = `${s.topic} [${s.partition}]`;
    lagSeries.set(key, [...(lagSeries.get(key) ?? []), [t(s.at), s.lag]]);
  }
  return (
    <section>
      <h1>Plots of {job}</h1>
      <JobLinks job={job} />
      <ErrorBox error={metrics.error} />
      {m ? (
        <>
          <Chart
            testid="plot-rate"
            title="Messages per second, per run"
            series={[{ label: "messages/s", points: m.runs.map((r: any) => [t(r.startedAt), r.perSecond]) }]}
          />
          <Chart
            testid="plot-lag"
            title="Lag per partition at each run's start (messages)"
            series={[...lagSeries].map(([label, points]) => ({ label, points }))}
          />
          <Chart
            testid="plot-files"
            title="Data files per table over time"
            series={m.dataFiles.map((d: any) => ({
              label: d.table,
              points: d.points.map((p: any) => [t(p.at), p.dataFiles]),
            }))}
          />
        </>
      ) : null}
    </section>
  );
}
