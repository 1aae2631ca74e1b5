#!/usr/bin/env python3
"""Draws how cost grows with size, from the growth benches' JSON, with gnuplot.

usage: plot_growth.py REPORT_DIR

Reads REPORT_DIR/followers.json (cdc-bench-followers), seek.json
(cdc-bench-seek) and tables.json (bench/tables/run.sh), whichever exist,
and writes REPORT_DIR/growth.png: one panel each, cost against size."""
import json
import os
import statistics
import subprocess
import sys

d = sys.argv[1]


def load(name):
    path = os.path.join(d, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


panels = []
fol = load("followers")
if fol:
    with open(os.path.join(d, "growth_followers.dat"), "w") as f:
        for r in fol["results"]:
            f.write(f"{r['followers']} {r['cpu_us_per_event_per_follower']:.3f} {r['p99_ms']:.2f}\n")
    panels.append(f"""
set title "cdc-tail -f followers of one log at {fol['rate']} events/s"
set xlabel "followers"; set logscale x; set ylabel "CPU µs per event, each"
set y2label "p99 latency, ms"; set y2tics; set logscale y2; set ytics nomirror
plot "{d}/growth_followers.dat" using 1:2 with linespoints lw 2 title "CPU per follower per event", \\
     "" using 1:3 axes x1y2 with linespoints lw 2 title "p99 latency"
unset logscale x; unset logscale y2; unset y2tics; unset y2label; set ytics mirror
""")
seek = load("seek")
if seek:
    by = {}
    for r in seek["results"]:
        kind = r["seek"].split(" ")[0]
        by.setdefault((r["log_bytes"], kind), []).append(r["warm_ms_median"])
    sizes = sorted({b for b, _ in by})
    kinds = ["earliest", "seq", "lsn", "time"]
    with open(os.path.join(d, "growth_seek.dat"), "w") as f:
        for b in sizes:
            f.write(f"{b / 1e9:.2f} " + " ".join(
                f"{statistics.median(by.get((b, k), [0])):.2f}" for k in kinds) + "\n")
    panels.append(f"""
set title "Seek: cdc-tail --from POS -n 1, time to first event (warm)"
set xlabel "log size, GB"; set logscale x; set ylabel "ms"; set yrange [0:60]
plot "{d}/growth_seek.dat" using 1:2 with linespoints lw 2 title "--from earliest (floor)", \\
     "" using 1:3 with linespoints lw 2 title "seq:", \\
     "" using 1:4 with linespoints lw 2 title "lsn:", \\
     "" using 1:5 with linespoints lw 2 title "time:", \\
     50 with lines dt 2 title "target"
unset logscale x; set yrange [*:*]
""")
tab = load("tables")
if tab:
    with open(os.path.join(d, "growth_tables.dat"), "w") as f:
        for r in tab["results"]:
            f.write(f"{r['tables']} {r['start']['wall_s']:.3f} {r['start']['peak_rss_kib'] / 1024:.1f} "
                    f"{r['one_table_cpu_us_per_event']:.2f}\n")
    panels.append(f"""
set title "Published tables: cdc-capture's start and per-event cost"
set xlabel "tables in the publication"; set logscale x; set ylabel "start s / CPU µs per event"
set y2label "peak RSS at start, MiB"; set y2tics; set y2range [0:*]; set ytics nomirror
plot "{d}/growth_tables.dat" using 1:2 with linespoints lw 2 title "start time, s", \\
     "" using 1:4 with linespoints lw 2 title "CPU µs per event (one table)", \\
     "" using 1:3 axes x1y2 with linespoints lw 2 title "peak RSS, MiB"
unset logscale x; unset y2tics; unset y2label; set ytics mirror
""")
if not panels:
    sys.exit("plot_growth.py: none of followers.json, seek.json, tables.json in " + d)
script = f"""
set terminal pngcairo size 1000,{380 * len(panels)} font ",10"
set output "{d}/growth.png"
set multiplot layout {len(panels)},1
set grid; set key top left
""" + "".join(panels) + "unset multiplot\n"
subprocess.run(["gnuplot"], input=script.encode(), check=True)
print(f"wrote {d}/growth.png")
