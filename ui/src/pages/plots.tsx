// Plots, drawn with uPlot: messages per second per run, lag per partition over time, and data
// files per table over time (the small-file curve that compaction bends).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { api, call } from "../api";
import { ErrorBox, useData } from "../components/ui";
import { countLabel, timeLabel, timeRange } from "../logic";
import { JobLinks } from "./history";

const COLOURS = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#65a30d", "#db2777"];

function Chart({
  title,
  series,
  testid,
  yLabel,
}: {
  title: string;
  series: { label: string; points: [number, number][] }[];
  testid: string;
  yLabel: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const times = [...new Set(series.flatMap((s) => s.points.map(([t]) => t)))].sort((a, b) => a - b);
    const data: uPlot.AlignedData = [
      times,
      ...series.map((s) => {
        const byTime = new Map(s.points);
        return times.map((t) => byTime.get(t) ?? null);
      }),
    ];
    const [xMin, xMax] = timeRange(times);
    const yMax = Math.max(1, ...series.flatMap((s) => s.points.map(([, v]) => v)));
    const xLabels: string[] = [];
    const yLabels: string[] = [];
    const styles = getComputedStyle(document.documentElement);
    const ink = styles.getPropertyValue("--muted").trim() || "#6b7280";
    const grid = styles.getPropertyValue("--line").trim() || "#e5e7eb";
    const plot = new uPlot(
      {
        width: el.clientWidth || 900,
        height: 240,
        // Every time in UTC, as the rest of the UI.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        series: [
          {
            label: "time (UTC)",
            value: (_u, v) =>
              v == null ? "—" : `${new Date(v * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC`,
          },
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            spanGaps: true,
            points: { show: true, size: 6 },
            value: (_u: uPlot, v: number | null) => (v == null ? "—" : countLabel(v)),
          })),
        ],
        axes: [
          {
            stroke: ink,
            grid: { stroke: grid },
            values: (_u, splits) => {
              const labels = splits.map((v) => timeLabel(v, xMax - xMin));
              xLabels.splice(0, xLabels.length, ...labels);
              return labels;
            },
          },
          {
            stroke: ink,
            grid: { stroke: grid },
            label: yLabel,
            // Counts: whole-number ticks only.
            incrs: [
              1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7,
            ],
            // Room for the longest label: never clipped.
            size: (_u, values) => 24 + Math.max(2, ...(values ?? []).map((v) => String(v).length)) * 8,
            values: (_u, splits) => {
              const labels = splits.map(countLabel);
              yLabels.splice(0, yLabels.length, ...labels);
              return labels;
            },
          },
        ],
        // What the axes show, for the browser test (the canvas holds no text to read).
        hooks: {
          draw: [
            (u) => {
              el.dataset["xSpan"] = String(xMax - xMin);
              el.dataset["xLabels"] = xLabels.join("|");
              el.dataset["yLabels"] = yLabels.join("|");
              el.dataset["yAxisWidth"] = String((u.axes[1] as { _size?: number })._size ?? "");
            },
          ],
        },
        scales: {
          x: { time: true, range: () => [xMin, xMax] },
          y: { range: () => [0, yMax * 1.1] },
        },
      },
      data,
      el,
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
  const metrics = useData(() => call(api.jobs[":name"].metrics.$get({ param: { name: job } })), [job], 5000);
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
      <p class="muted">Times in UTC.</p>
      <ErrorBox error={metrics.error} />
      {m ? (
        <>
          <Chart
            testid="plot-rate"
            title="Messages per second, per run"
            yLabel="messages/s"
            series={[{ label: "messages/s", points: m.runs.map((r) => [t(r.startedAt), r.perSecond]) }]}
          />
          <Chart
            testid="plot-lag"
            title="Lag per partition at each run's start (messages)"
            yLabel="messages"
            series={[...lagSeries].map(([label, points]) => ({ label, points }))}
          />
          <Chart
            testid="plot-files"
            title="Data files per table over time"
            yLabel="data files"
            series={m.dataFiles.map((d) => ({
              label: d.table,
              points: d.points.map((p) => [t(p.at), p.dataFiles] as [number, number]),
            }))}
          />
        </>
      ) : null}
    </section>
  );
}
