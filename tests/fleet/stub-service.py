#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A misbehaving central service for report --query (the real ones answer
well). The first path segment picks the answer; every request is logged to
LOG as one JSON line (path, Authorization header, form body).

  /empty/...     200, empty body              /notjson/...  200, an HTML page
  /old/...       h1's runs of 15 days ago, sent only when the window reaches them
  /truncjson/... 200, a JSON line cut short   /cut/...      Content-Length
                                                            larger than sent
  /partial/...   InfluxDB result "partial"    /slow/...     no answer for 60 s
  /503/...       503                          /400/...      400 with a message
  /dup/...       one sample sent twice        /phase/...    only another phase
  /auth/...      401 unless "Bearer tok-q"    /vector/...   a Prometheus vector
  /outlier/...   6 hosts, +10 to +20 %, one +100 % (named h<6>&: markup in a tag)
  /mixed/...     h1's tuned set of two runs, bs=4k and bs=8k (one set, two jobs)
  /negative/...  a tuned KIOPS of -50          /overflow/... finite values whose sum
                                                             overflows (avg inf)
  /outside/...   a tuned point 30 days old     /vstate/...   verify_state "Drifted"
  /ispartial/... a Prometheus matrix with "isPartial": true
  /206/...       the good answer with HTTP 206 (Partial Content)
  /payload/...   the seeds' experiment: h1 stock (no payload) then the payload
                 loaded, no profile applied on either side (verify_state
                 none-applied), 3 runs each; h2 the same without the payload:
                 nothing differs (not applied); h3 from payload 8.3 to 8.4
                 (h1's cohort, another treatment)
  /seeds/...     SPEC.md's seed table on h1: 10 baseline runs (6,255 avg, one
                 at 4,200), 5 tuned (7,350 avg): +17.5 % of the averages
  /latency/...   h1, 6 runs a side with their read latency: KIOPS +10 %, p50
                 the same, p99 +30 %, one tuned run without p99.9
  /devices/...   h1 on several devices, 6 runs a side: KIOPS +10 %, fairness
                 0.99 -> 0.80, the worst device's p99 +50 %
  /fairness13/.. the same with one run's fairness 1.3 (impossible)
  /late/...      a service that shows the points only after a while, by the
                 number of requests, never by time: the 1st to 3rd request
                 503 (one `report --query` with its 3 tries: the service
                 failing for a moment), the 4th 200 with an empty body (no
                 point yet; report --query then asks once more, a year
                 back: the 5th), from the 5th on the answer of /auth/ (h1's
                 baseline and tuned set 20261201T100000Z, 3 runs each)

Usage: stub-service.py PORT LOG
"""
import http.server
import json
import socketserver
import sys
import threading
import time
import urllib.parse

port, log = int(sys.argv[1]), sys.argv[2]
NOW = int(time.time() * 1000)


def line(host, phase, value, ts, file="run1.json", field="kiops", **tags):
    return json.dumps({"metric": {"__name__": "scsitune_fio_" + field, "host": host, "phase": phase,
                                  "set": "20261201T100000Z", "file": file, **tags},
                       "values": [value], "timestamps": [ts]})


# h1: 3 runs a side, every tuned run above every baseline run by more than 5 % (a gate's test can show
# kiops>=+5% at 95 % only so: one run a side is too few).
GOOD = "\n".join([line("h1", "baseline", v, NOW - 7200000 + k * 1000, "run%d.json" % (k + 1))
                   for k, v in enumerate((40.0, 41.0, 40.5))] +
                  [line("h1", "tuned", v, NOW - 3600000 + k * 1000, "run%d.json" % (k + 1))
                   for k, v in enumerate((50.0, 51.0, 50.5))]) + "\n"


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    late = 0  # requests to /late/ so far
    lock = threading.Lock()

    def answer(self, code, body, ctype="application/json", length=None):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        mode = self.path.strip("/").split("/")[0]
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization"),
                                "form": urllib.parse.parse_qs(body)}) + "\n")
        if mode == "empty":
            self.answer(200, "")
        elif mode == "old":
            # h1's runs of 15 days ago: sent only to a request whose window reaches back to them
            start = float(urllib.parse.parse_qs(body).get("start", ["0"])[0]) * 1000
            old = NOW - 15 * 86400000
            self.answer(200, "".join(line("h1", ph, v, old + k * 1000, "run%d.json" % (k + 1)) + "\n"
                                     for k, (ph, v) in enumerate((("baseline", 40.0), ("tuned", 50.0))))
                        if start <= old else "")
        elif mode == "notjson":
            self.answer(200, "<html><body>502 Bad Gateway</body></html>\n", "text/html")
        elif mode == "truncjson":
            self.answer(200, GOOD + GOOD.splitlines()[0][:40])
        elif mode == "cut":
            self.answer(200, GOOD[:50], length=len(GOOD))
            self.close_connection = True
        elif mode == "partial":
            self.answer(200, json.dumps({"results": [{"statement_id": 0, "partial": True, "series": [
                {"name": "scsitune_fio", "tags": {"host": "h1", "phase": "tuned"}, "columns": ["time", "kiops"],
                 "values": [[NOW - 3600000, 50.0]]}]}]}))
        elif mode == "slow":
            time.sleep(60)
            self.answer(200, GOOD)
        elif mode == "503":
            self.answer(503, '{"error":"stub overloaded"}')
        elif mode == "400":
            self.answer(400, '{"status":"error","errorType":"bad_data","error":"stub says the query is bad"}')
        elif mode == "dup":
            extra = line("h1", "tuned", 50.0, NOW - 3600000)
            self.answer(200, GOOD + extra + "\n")
        elif mode == "outlier":
            tuned = {"h1": 44.0, "h2": 45.0, "h3": 46.0, "h4": 47.0, "h5": 48.0, "h<6>&": 80.0}
            self.answer(200, "".join(line(h, "baseline", 40.0, NOW - 7200000) + "\n" +
                                     line(h, "tuned", v, NOW - 3600000) + "\n" for h, v in tuned.items()))
        elif mode == "mixed":
            self.answer(200, "".join(l + "\n" for l in (
                line("h1", "baseline", 40.0, NOW - 7200000, "run1.json", bs="4k"),
                line("h1", "baseline", 41.0, NOW - 7100000, "run2.json", bs="4k"),
                line("h1", "tuned", 50.0, NOW - 3600000, "run1.json", bs="4k"),
                line("h1", "tuned", 70.0, NOW - 3500000, "run2.json", bs="8k"))))
        elif mode == "negative":
            self.answer(200, line("h1", "baseline", 40.0, NOW - 7200000) + "\n" +
                        line("h1", "tuned", -50.0, NOW - 3600000) + "\n")
        elif mode == "overflow":
            self.answer(200, line("h1", "baseline", 40.0, NOW - 7200000) + "\n" +
                        line("h1", "tuned", 1.5e308, NOW - 3600000, "run1.json") + "\n" +
                        line("h1", "tuned", 1.6e308, NOW - 3500000, "run2.json") + "\n")
        elif mode == "outside":
            self.answer(200, line("h1", "baseline", 40.0, NOW - 7200000) + "\n" +
                        line("h1", "tuned", 50.0, NOW - 30 * 86400000) + "\n")
        elif mode == "vstate":
            self.answer(200, line("h1", "baseline", 40.0, NOW - 7200000) + "\n" +
                        line("h1", "tuned", 50.0, NOW - 3600000, verify_state="Drifted") + "\n")
        elif mode == "ispartial":
            series = [{"metric": {"__name__": "scsitune_fio_kiops", "host": "h1", "phase": p,
                                  "set": "20261201T100000Z", "file": "run1.json"},
                       "values": [[(NOW - ago) / 1000, v]]} for p, v, ago in
                      (("baseline", "40", 7200000), ("tuned", "50", 3600000))]
            self.answer(200, json.dumps({"status": "success", "isPartial": True,
                                         "data": {"resultType": "matrix", "result": series}}))
        elif mode == "206":
            self.answer(206, GOOD)
        elif mode == "payload":
            rows = []
            for h, before, pay in (("h1", None, "8.4.0.0-scsitune1"), ("h2", None, None),
                                   ("h3", "8.3.0.0-scsitune1", "8.4.0.0-scsitune1")):
                for k, (b, t) in enumerate(((6200.0, 7300.0), (6300.0, 7400.0), (6250.0, 7350.0))):
                    f = "run%d.json" % (k + 1)
                    rows.append(line(h, "baseline", b, NOW - 7200000 + k * 1000, f, verify_state="none-applied",
                                     **({"payload": before} if before else {})))
                    rows.append(line(h, "tuned", t, NOW - 3600000 + k * 1000, f, verify_state="none-applied",
                                     **({"payload": pay} if pay else {})))
            self.answer(200, "".join(r + "\n" for r in rows))
        elif mode == "seeds":
            rows = [line("h1", "baseline", v, NOW - 7200000 + k * 1000, "base%d.json" % (k + 1))
                    for k, v in enumerate((4200, 6700, 6400, 6500, 6450, 6460, 6470, 6480, 6440, 6450))]
            rows += [line("h1", "tuned", v, NOW - 3600000 + k * 1000, "tuned%d.json" % (k + 1))
                     for k, v in enumerate((7000, 7700, 7350, 7300, 7400))]
            self.answer(200, "".join(r + "\n" for r in rows))
        elif mode == "latency":
            # h1, 6 runs a side of a 16-job randread (json output: p99 the largest job's, an upper bound):
            # KIOPS +10 %, p50 the same, p99 +30 %, p99.9 missing from one tuned run.
            rows = []
            for k in range(6):
                for ph, at, kiops, p50, p99 in (("baseline", 7200000, 6600 + 10 * k, 800000 + 1000 * k, 2000000 + 9000 * k),
                                                ("tuned", 3600000, 7260 + 10 * k, 800500 + 1000 * k, 2600000 + 9000 * k)):
                    tags = dict(rw="randread", numjobs="16", output_format="json")
                    f, ts = "run%d.json" % (k + 1), NOW - at + k * 1000
                    rows.append(line("h1", ph, kiops, ts, f, **tags))
                    rows.append(line("h1", ph, p50, ts, f, "read_clat_p50_ns", **tags))
                    rows.append(line("h1", ph, p99, ts, f, "read_clat_p99_ns", **tags))
                    if not (ph == "tuned" and k == 5):
                        rows.append(line("h1", ph, p99 * 2, ts, f, "read_clat_p99_9_ns", **tags))
                    rows.append(line("h1", ph, 1.0, ts, f, "write_clat_p99_ns", **tags))  # not the job's
            self.answer(200, "".join(r + "\n" for r in rows))
        elif mode in ("devices", "fairness13"):
            # h1 on 4 devices, 6 runs a side: KIOPS +10 %, but the devices' fairness falls from 0.99 to 0.80
            # and the worst device's p99 rises 50 %; /fairness13/: one run says 1.3 (no Jain's index can).
            rows = []
            for k in range(6):
                for ph, at, kiops, fair, worst in (("baseline", 7200000, 6600 + 10 * k, 0.99 - 0.001 * k, 2000000 + 5000 * k),
                                                   ("tuned", 3600000, 7260 + 10 * k, 0.80 - 0.001 * k, 3000000 + 5000 * k)):
                    if mode == "fairness13" and ph == "tuned" and k == 2:
                        fair = 1.3
                    f, ts = "run%d.json" % (k + 1), NOW - at + k * 1000
                    rows.append(line("h1", ph, kiops, ts, f))
                    rows.append(line("h1", ph, fair, ts, f, "fairness"))
                    rows.append(line("h1", ph, worst, ts, f, "worst_clat_p99_ns"))
            self.answer(200, "".join(r + "\n" for r in rows))
        elif mode == "phase":
            self.answer(200, line("h1", "other", 50.0, NOW - 3600000) + "\n")
        elif mode == "auth":
            if self.headers.get("Authorization") != "Bearer tok-q":
                self.answer(401, "Unauthorized: '%s' is not the token\n" % self.headers.get("Authorization"),
                            "text/plain")
            else:
                self.answer(200, GOOD)
        elif mode == "late":
            with H.lock:
                H.late += 1
                n = H.late
            if n <= 3:
                self.answer(503, '{"error":"stub: not up yet (request %d)"}' % n)
            elif n == 4:
                self.answer(200, "")
            else:
                self.answer(200, GOOD)
        elif mode == "vector":
            self.answer(200, json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}))
        else:
            self.answer(404, "no such mode\n", "text/plain")

    def log_message(self, *a):
        pass


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


S(("127.0.0.1", port), H).serve_forever()
