# Draws the benchmarks' charts: reads a JSON spec on stdin, writes one PNG.
# {"title", "x", "out", "series": [{"name", "points": [{x-key..., key: value}]}], "panels": [{"key", "label"}], "xKey",
#  "kind": "line" (default) or "bar" (one bar per point, labelled by its x-key, each series side by side)}
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

spec = json.load(sys.stdin)
panels = spec["panels"]
cols = 2 if len(panels) > 1 else 1
rows = math.ceil(len(panels) / cols)
size = (7.5, 4.5) if spec.get("kind") == "bar" else (6, 3.2)
fig, axes = plt.subplots(rows, cols, figsize=(size[0] * cols, size[1] * rows), squeeze=False)
for i, panel in enumerate(panels):
    ax = axes[i // cols][i % cols]
    for k, series in enumerate(spec["series"]):
        xs = [p[spec.get("xKey", "hour")] for p in series["points"]]
        ys = [p[panel["key"]] for p in series["points"]]
        if spec.get("kind") == "bar":
            width = 0.8 / len(spec["series"])
            positions = [i + k * width for i in range(len(xs))]
            bars = ax.bar(positions, ys, width=width, label=series["name"])
            ax.bar_label(bars, fmt="{:,.0f}" if max(ys, default=0) >= 100 else "{:,.1f}", fontsize=6)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(xs))], xs, fontsize=6)
        else:
            ax.plot(xs, ys, marker="o", markersize=2.5, label=series["name"])
    ax.set_title(panel["label"], fontsize=10)
    ax.set_xlabel(spec["x"], fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
for j in range(len(panels), rows * cols):
    axes[j // cols][j % cols].axis("off")
fig.suptitle(spec["title"], fontsize=12)
fig.tight_layout()
fig.savefig(spec["out"], dpi=110)
