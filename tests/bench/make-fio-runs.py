#!/usr/bin/python3
# make-fio-runs.py TEMPLATE OUTDIR FILES JOBS EXPECTED.tsv
# From a real fio json+ output (TEMPLATE), FILES files of JOBS jobs each in
# OUTDIR (runNNN.json): the template's jobs cloned, every value varied (IOPS,
# bandwidth, bytes, clat mean, each bin's count; N and total_ios follow), each
# file with its own start time. EXPECTED.tsv gets the generator's own per-run
# figures (file, IOPS, bandwidth, read clat mean weighted by N) to check the
# tools against. Used by bench-report.sh and bench-profile.sh.
import copy, json, os, random, sys
template, out, n_files, n_jobs, expected = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
doc = json.load(open(template))
base = [j for j in doc["jobs"]]
os.makedirs(out)
rnd = random.Random(20261130)
with open(expected, "w") as exp:
    for f in range(n_files):
        d = copy.deepcopy(doc)
        d["timestamp"] = 1796000000 + 120 * f
        d["timestamp_ms"] = d["timestamp"] * 1000 + rnd.randrange(1000)
        jobs, iops, bw, n_sum, lat_sum = [], 0.0, 0, 0, 0.0
        for k in range(n_jobs):
            j = copy.deepcopy(base[k % len(base)])
            r = j["read"]
            scale = rnd.uniform(0.85, 1.15)
            r["iops"] = round(r["iops"] * scale, 6)
            r["bw"] = int(r["bw"] * scale)
            r["bw_bytes"] = r["bw"] * 1024
            r["io_bytes"] = int(r["io_bytes"] * scale)
            r["io_kbytes"] = r["io_bytes"] // 1024
            c = r["clat_ns"]
            c["bins"] = {v: max(1, int(cnt * rnd.uniform(0.7, 1.3))) for v, cnt in c["bins"].items()}
            c["N"] = sum(c["bins"].values())
            r["total_ios"] = c["N"]
            c["mean"] = round(c["mean"] / scale, 6)
            iops += r["iops"] + j["write"]["iops"]
            bw += r["bw"] + j["write"]["bw"]
            n_sum += c["N"]
            lat_sum += c["N"] * c["mean"]
            jobs.append(j)
        d["jobs"] = jobs
        name = "%s/run%03d.json" % (out, f + 1)
        with open(name, "w") as fh:
            json.dump(d, fh, indent=2)
        exp.write("%s\t%.6f\t%d\t%.6f\n" % (name, iops, bw, lat_sum / n_sum))
