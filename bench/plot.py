#!/usr/bin/env python3
"""Draws bench/run.sh's charts from the JSON the benches wrote, with gnuplot.

usage: plot.py REPORT_DIR"""
import json
import os
import subprocess
import sys

d = sys.argv[1]


def load(name):
    return json.load(open(os.path.join(d, name + ".json")))


log, cap, red, nat, bak, snap = (load(n) for n in
                                 ("log", "capture", "redis", "nats", "backup", "snapshot"))
rows = []  # (label, ratio to peer or limit, target)
for r in cap["drain"]:
    rows.append((f"capture {r['workload'][2:]} {r['transport']}\\nvs pg_recvlogical",
                 r["ratio"], 0.9))
red_j = red
rows.append(("redis stream\\nvs redis-benchmark", red_j["stream_ratio"], 0.5))
rows.append(("redis hash\\nvs redis-benchmark", red_j["hash_ratio"], 0.5))
rows.append(("nats R1\\nvs publish loop", nat["r1_ratio"], 0.7))
rows.append(("nats R3\\nvs publish loop", nat["r3_ratio"], 0.7))
rows.append(("backup create\\nvs cp -r + sync", bak["create_cp_sync_ratio"], 0.8))
rows.append(("backup --no-sync\\nvs cp -r", bak["create_no_sync_cp_ratio"], 0.8))
rows.append(("backup verify\\nvs sha256sum", bak["verify_ratio"], 0.9))
rows.append(("snapshot 1 table\\nvs psql COPY", snap["ratio_1_table"], 0.85))
rows.append(("snapshot 4 tables\\nvs 4 psql COPYs", snap["ratio_4_tables"], 0.85))
if os.path.exists(os.path.join(d, "tail.json")):
    for r in load("tail")["results"]:
        if r["min_ratio"] > 0:
            rows.append((f"cdc-tail {r['case'].split(' ')[0]} {r['rows']}-row\\nvs cat",
                         r["cat_over_tail"], r["min_ratio"]))
with open(os.path.join(d, "throughput.dat"), "w") as f:
    for i, (label, ratio, target) in enumerate(rows):
        f.write(f'{i} "{label}" {ratio:.3f} {target}\n')
with open(os.path.join(d, "latency.dat"), "w") as f:
    runs = cap["latency"]["runs"]
    ref = cap["latency"]["reference_pg_recvlogical_test_decoding"]["runs"]
    a = runs[0].get("series", [])
    b = ref[0].get("series", [])
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else [i, "NaN", "NaN"]
        y = b[i] if i < len(b) else [i, "NaN", "NaN"]
        f.write(f"{i} {x[1]} {x[2]} {y[1]} {y[2]}\n")
script = f"""
set terminal pngcairo size 1200,560 font "sans,10" noenhanced
set output "{d}/throughput.png"
set title "Throughput against each peer or limit (1.0 = as fast), with targets"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set grid y
set xtics rotate by -35 scale 0
set key top right
plot "{d}/throughput.dat" using 1:3:xtic(2) with boxes title "measured ratio", \\
     "" using 1:4 with points pt 7 ps 1.2 title "target"
set output "{d}/latency.png"
set title "Commit to reader latency at {cap['latency']['rate']} events/s (per second)"
set xtics norotate
set xlabel "seconds"
set ylabel "ms"
set logscale y
set yrange [*:*]
plot "{d}/latency.dat" using 1:2 with lines lw 2 title "cdc-capture -> cdc-tail -f, p50", \\
     "" using 1:3 with lines lw 2 title "cdc-capture -> cdc-tail -f, p99", \\
     "" using 1:4 with lines dt 2 title "pg_recvlogical (test_decoding), p50", \\
     "" using 1:5 with lines dt 2 title "pg_recvlogical (test_decoding), p99"
"""
subprocess.run(["gnuplot"], input=script, text=True, check=True)
print(f"wrote {d}/throughput.png and {d}/latency.png")
