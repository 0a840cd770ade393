/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report --html FILE: the result set as one self-contained HTML document.
 *
 * Inline CSS and inline SVG drawn here; no script, no font, no image, nothing
 * fetched (a Content-Security-Policy of default-src 'none' says so to the
 * browser too). Every string from outside (file names, fio job names and
 * options, host names, labels) goes through html_str(): the terminal escaping
 * of out_escape() (control bytes and bytes that are not UTF-8 become \xNN),
 * then & < > " ' as entities. Every number is the one -o json prints: the
 * digits of out_fmt_json_dbl() go into data-v, the element's data-k names
 * its JSON path (data-doc="ref": in the --compare reference's saved
 * document), and the text shown is those digits read back and formatted as
 * the text output formats them (data-div: divided by it first, ns to µs).
 * The renderer writes to f only; the caller opens, fsyncs and renames.
 */
#include "render-html.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utctime.h"
#include "report/fio.h"
#include "report/resultset.h"
#include "stats/rank.h"
#include "out.h"

#ifndef SCSITUNE_VERSION
#define SCSITUNE_VERSION "unknown"
#endif

/* A string as HTML text or attribute value; NULL (unknown) as "-". */
static void html_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("-", f);
		return;
	}
	_cleanup_free_ char *e = out_escape(s, 0);
	for (const char *p = e ? e : "(out of memory)"; *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*p, f);
		}
	}
}

/* A number as JSON has it: json (digits or "null") and the value those digits read back as (NAN: null). */
struct jnum {
	char json[64];
	double v;
};

static struct jnum jnum_of(double v)
{
	struct jnum n;
	n.v = out_fmt_json_dbl(n.json, sizeof(n.json), v) ? strtod(n.json, NULL) : NAN;
	return n;
}

/* A run's KIOPS as JSON has it (out_dbl_exact: 12 significant digits). */
static struct jnum jnum_exact(double v)
{
	struct jnum n;
	n.v = out_fmt_json_exact(n.json, sizeof(n.json), v) ? strtod(n.json, NULL) : NAN;
	return n;
}

/* The text shown for n: out_fmt_dbl of n.v / div, "-" when null. */
static void jnum_shown(char *buf, size_t size, struct jnum n, double div, int decimals)
{
	out_fmt_dbl(buf, size, isnan(n.v) ? NAN : n.v / div, decimals);
}

/* data-k, data-v (and data-div, data-doc) of one number. */
static void num_attrs(FILE *f, const char *key, struct jnum n, double div, bool ref)
{
	fprintf(f, " data-k=\"%s\" data-v=\"%s\"", key, n.json);
	if (div != 1)
		fprintf(f, " data-div=\"%g\"", div);
	if (ref)
		fputs(" data-doc=\"ref\"", f);
}

/* <td class="n" data-k=KEY data-v=JSON>SHOWN</td> */
static void jnum_td(FILE *f, const char *key, struct jnum n, double div, int decimals)
{
	char shown[80];
	jnum_shown(shown, sizeof(shown), n, div, decimals);
	fputs("<td class=\"n\"", f);
	num_attrs(f, key, n, div, false);
	fprintf(f, ">%s</td>", shown);
}

static void num_td(FILE *f, const char *key, double v, double div, int decimals)
{
	jnum_td(f, key, jnum_of(v), div, decimals);
}

static void str_td(FILE *f, const char *s)
{
	fputs("<td>", f);
	html_str(f, s);
	fputs("</td>", f);
}

/* snprintf into a key buffer: keys are made of our own names and indices only. */
static const char *key_of(char *buf, size_t size, const char *fmt, ...) _printf_(3, 4);
static const char *key_of(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return buf;
}

static void fmt_time_utc(char *buf, size_t size, int64_t ms)
{
	struct stune_utc u;
	if (ms <= 0 || stune_utc_from_epoch(ms / 1000, &u) < 0 ||
	    snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d UTC", u.year, u.month, u.day, u.hour, u.min, u.sec) >=
		(int)size)
		snprintf(buf, size, "-");
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "color:#1d2733;background:#fff;margin:24px auto;max-width:1100px;padding:0 16px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d5dbe3;"
    "padding-bottom:4px}p.sub{color:#5b6775;margin:0 0 12px}"
    "table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}"
    "th,td{border-bottom:1px solid #e3e7ec;padding:3px 10px;text-align:left;vertical-align:top}"
    "th{background:#f3f5f8;font-weight:600}td.n{text-align:right;white-space:nowrap}td.host{white-space:nowrap}"
    "td.path{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px;word-break:break-all}"
    ".note{color:#5b6775;font-size:13px}.warn{color:#9a5b00}"
    ".up{color:#1a7f37;font-weight:600}.down{color:#b42318;font-weight:600}"
    "svg{display:block;margin:8px 0;max-width:100%;height:auto}"
    "svg text{font:11px system-ui,'DejaVu Sans',sans-serif;fill:#1d2733;paint-order:stroke;stroke:#fff;"
    "stroke-width:3px;stroke-linejoin:round}"
    ".headline{font-size:16px;background:#f3f5f8;border-left:4px solid #4878a8;padding:8px 12px;margin:8px 0}"
    "svg .axis{stroke:#7a8591;stroke-width:1}svg .grid{stroke:#e3e7ec;stroke-width:1}"
    "svg .bar{fill:#4878a8}svg .bar.ref{fill:#9aa7b4}svg .band{fill:#f2c14e;fill-opacity:.25}"
    "svg .avg{stroke:#b42318;stroke-width:1.5;stroke-dasharray:5 3}"
    "svg .p0{fill:#7fb3d5}svg .p1{fill:#2e6f9e}svg .p2{fill:#173f5f}"
    "details{margin:4px 0}summary{cursor:pointer}"
    ".warnbox{border:2px solid #b42318;background:#fdecea;padding:8px 12px;margin:8px 0}"
    ".warnbox ul{margin:4px 0 0 0}";

/* Axis top for a linear chart from 0: 1, 2, 2.5, 5 or 10 times a power of ten, above max. */
static double nice_ceil(double max)
{
	if (!(max > 0))
		return 1;
	double p = pow(10, floor(log10(max)));
	static const double steps[] = {1, 2, 2.5, 5, 10};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] * p >= max)
			return steps[i] * p;
	return 10 * p;
}

/* One set of runs in the KIOPS chart. */
struct kiops_set {
	const char *label;
	const double *kiops; /* JSON-rounded (jnum) at drawing time */
	size_t n;
	const struct stune_stats *st;
	const char *stats_key; /* "summary" or "compare.reference" */
	bool ref;	       /* per-run values from the reference's saved document */
};

#define KW 1000
#define KH 300
#define KL 64
#define KR 16
#define KT 16
#define KB 64

static double ky(double v, double top)
{
	return KT + (KH - KT - KB) * (1 - v / top);
}

static void kiops_group(FILE *f, const struct kiops_set *k, double x0, double gw, double top)
{
	char key[96], shown[80];
	double pad = 14, slot = (gw - 2 * pad) / (double)(k->n ? k->n : 1);
	double bw = fmin(slot * 0.7, 44);
	struct jnum mn = jnum_of(k->st->min), mx = jnum_of(k->st->max), avg = jnum_of(k->st->avg),
		    spread = jnum_of(k->st->spread * 100);
	/* The min-max band behind the bars. */
	fprintf(f,
		"<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>min – "
		"max</title></rect>\n",
		x0 + 4, ky(mx.v, top), gw - 8, fmax(ky(mn.v, top) - ky(mx.v, top), 0.5));
	for (size_t i = 0; i < k->n; i++) {
		struct jnum v = jnum_exact(k->kiops[i]);
		double x = x0 + pad + slot * (double)i + (slot - bw) / 2, y = ky(v.v, top);
		key_of(key, sizeof(key), "runs.%zu.kiops", i);
		jnum_shown(shown, sizeof(shown), v, 1, 1);
		fprintf(f, "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"",
			k->ref ? " ref" : "", x, y, bw, ky(0, top) - y);
		num_attrs(f, key, v, 1, k->ref);
		fprintf(f, "><title>run %zu: %s KIOPS</title></rect>\n", i + 1, shown);
		fprintf(f, "<text class=\"val\" transform=\"translate(%.1f %.1f) rotate(-90)\"", x + bw / 2 + 4, y - 4);
		num_attrs(f, key, v, 1, k->ref);
		fprintf(f, ">%s</text>\n", shown);
	}
	/* The avg line over the group, labelled at its right end. */
	key_of(key, sizeof(key), "%s.avg_kiops", k->stats_key);
	jnum_shown(shown, sizeof(shown), avg, 1, 1);
	fprintf(f, "<line class=\"avg\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", x0 + 4, x0 + gw - 4,
		ky(avg.v, top), ky(avg.v, top));
	/* Under the axis: the label, the runs; avg, range and spread. */
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-weight=\"600\">", x0 + gw / 2, KH - KB + 18);
	html_str(f, k->label);
	fprintf(f, " (%zu run%s)</text>\n", k->n, k->n == 1 ? "" : "s");
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">avg <tspan", x0 + gw / 2, KH - KB + 34);
	num_attrs(f, key, avg, 1, false);
	fprintf(f, ">%s</tspan>, range <tspan", shown);
	key_of(key, sizeof(key), "%s.min_kiops", k->stats_key);
	jnum_shown(shown, sizeof(shown), mn, 1, 1);
	num_attrs(f, key, mn, 1, false);
	fprintf(f, ">%s</tspan> – <tspan", shown);
	key_of(key, sizeof(key), "%s.max_kiops", k->stats_key);
	jnum_shown(shown, sizeof(shown), mx, 1, 1);
	num_attrs(f, key, mx, 1, false);
	fprintf(f, ">%s</tspan> KIOPS</text>\n", shown);
	key_of(key, sizeof(key), "%s.spread_pct", k->stats_key);
	jnum_shown(shown, sizeof(shown), spread, 1, 1);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">spread <tspan", x0 + gw / 2, KH - KB + 50);
	num_attrs(f, key, spread, 1, false);
	fprintf(f, ">%s</tspan> %% = (max − min) / max</text>\n", shown);
}

static void kiops_chart(FILE *f, const struct kiops_set *sets, size_t n_sets)
{
	double max = 0;
	for (size_t s = 0; s < n_sets; s++)
		for (size_t i = 0; i < sets[s].n; i++)
			max = fmax(max, jnum_exact(sets[s].kiops[i]).v);
	double top = nice_ceil(max * 1.08);
	fprintf(
	    f,
	    "<svg class=\"chart\" data-scale=\"linear\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
	    "aria-label=\"KIOPS per run\" xmlns=\"http://www.w3.org/2000/svg\">\n",
	    KW, KH, KW, KH);
	for (int t = 0; t <= 5; t++) {
		char lbl[80];
		double v = top * t / 5, y = ky(v, top);
		out_fmt_dbl(lbl, sizeof(lbl), v, top >= 50 ? 0 : 1);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", KL, KW - KR, y, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", KL - 6, y + 4, lbl);
	}
	fprintf(f, "<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">KIOPS</text>\n",
		(KH - KB + KT) / 2);
	double gw = (double)(KW - KL - KR) / (double)n_sets;
	for (size_t s = 0; s < n_sets; s++)
		kiops_group(f, &sets[s], KL + gw * (double)s, gw, top);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", KL, KW - KR, ky(0, top),
		ky(0, top));
	fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.1f\"/>\n</svg>\n", KL, KL, KT,
		ky(0, top));
}

static const char *const pct_keys[STUNE_N_PCT] = {"p50", "p99", "p99_9"};
static const char *const pct_names[STUNE_N_PCT] = {"p50", "p99", "p99.9"};

static bool dir_has_samples(const struct stune_report_set *s, int d)
{
	for (size_t i = 0; i < s->n_runs; i++)
		if (s->runs[i]->total[d].clat.samples > 0)
			return true;
	return false;
}

static void lat_label(char *buf, size_t size, double us)
{
	if (us >= 1000)
		snprintf(buf, size, "%g ms", us / 1000);
	else
		snprintf(buf, size, "%g µs", us);
}

/* Completion latency percentiles per run, one direction, log scale in µs. */
static void lat_chart(FILE *f, const struct stune_report_set *s, int d)
{
	const char *dn = stune_fio_dir_name(d);
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct stune_lat *l = &s->runs[i]->total[d].clat;
		for (int k = 0; k < STUNE_N_PCT; k++) {
			double us = jnum_of(l->pct_set[k] ? l->pct_ns[k] : NAN).v / 1000;
			if (us > 0) {
				lo = fmin(lo, us);
				hi = fmax(hi, us);
			}
		}
	}
	if (!(hi > 0))
		return;
	int dlo = (int)floor(log10(lo)), dhi = (int)ceil(log10(hi));
	if (dhi <= dlo)
		dhi = dlo + 1;
	const int W = KW, H = 260, L = KL, R = KR, T = KT, B = 40;
	double ph = H - T - B, gw = (double)(W - L - R) / (double)s->n_runs;
	fprintf(f,
		"<svg class=\"chart\" data-scale=\"log\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
		"aria-label=\"%s completion latency percentiles per run\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		W, H, W, H, dn);
	for (int e = dlo; e <= dhi; e++) {
		char lbl[32];
		double y = T + ph * (1 - (double)(e - dlo) / (dhi - dlo));
		lat_label(lbl, sizeof(lbl), pow(10, e));
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", L, W - R, y, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", L - 6, y + 4, lbl);
	}
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct stune_lat *l = &s->runs[i]->total[d].clat;
		double x0 = L + gw * (double)i, bw = fmin((gw - 16) / STUNE_N_PCT, 28);
		double xs = x0 + (gw - bw * STUNE_N_PCT) / 2;
		for (int k = 0; k < STUNE_N_PCT; k++) {
			char key[96], shown[80];
			struct jnum v = jnum_of(l->pct_set[k] ? l->pct_ns[k] : NAN);
			if (!(v.v > 0))
				continue;
			double frac = (log10(v.v / 1000) - dlo) / (dhi - dlo), y = T + ph * (1 - frac);
			key_of(key, sizeof(key), "runs.%zu.%s.clat_ns.%s", i, dn, pct_keys[k]);
			jnum_shown(shown, sizeof(shown), v, 1000, 1);
			fprintf(f, "<rect class=\"p%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", k,
				xs + bw * k, y, bw - 2, T + ph - y);
			num_attrs(f, key, v, 1000, false);
			fprintf(f, "><title>run %zu %s: %s µs</title></rect>\n", i + 1, pct_names[k], shown);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">run %zu</text>\n", x0 + gw / 2,
			T + ph + 16, i + 1);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", L, W - R, T + ph, T + ph);
	for (int k = 0; k < STUNE_N_PCT; k++)
		fprintf(f,
			"<rect class=\"p%d\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/><text x=\"%d\" "
			"y=\"%d\">%s</text>\n",
			k, L + 10 + 80 * k, H - 14, L + 24 + 80 * k, H - 5, pct_names[k]);
	fputs("</svg>\n", f);
}

/* The latency table of one direction: mean, percentiles, min, max in µs; samples; where the percentiles come from. */
static void lat_table(FILE *f, const struct stune_report_set *s, int d)
{
	const char *dn = stune_fio_dir_name(d);
	char key[96];
	bool approx = false;
	fprintf(f,
		"<table class=\"lat\" id=\"lat-%s\"><tr><th>run</th><th>mean µs</th><th>p50 µs</th><th>p99 µs</th>"
		"<th>p99.9 µs</th><th>min µs</th><th>max µs</th><th>samples</th><th>percentiles from</th></tr>\n",
		dn);
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct stune_lat *l = &s->runs[i]->total[d].clat;
		bool any = l->samples > 0;
		fprintf(f, "<tr><td>%zu</td>", i + 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.%s.clat_ns.mean", i, dn), any ? l->mean_ns : NAN, 1000, 1);
		for (int k = 0; k < STUNE_N_PCT; k++)
			num_td(f, key_of(key, sizeof(key), "runs.%zu.%s.clat_ns.%s", i, dn, pct_keys[k]),
			       l->pct_set[k] ? l->pct_ns[k] : NAN, 1000, 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.%s.clat_ns.min", i, dn), any ? l->min_ns : NAN, 1000, 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.%s.clat_ns.max", i, dn), any ? l->max_ns : NAN, 1000, 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.%s.clat_ns.samples", i, dn), (double)l->samples, 1, 0);
		str_td(f, stune_pct_source_name(l->pct_source));
		fputs("</tr>\n", f);
		approx |= l->pct_source == STUNE_PCT_MAX_OF_JOBS;
	}
	fputs("</table>\n", f);
	if (approx)
		fputs(
		    "<p class=\"note warn\">max-of-jobs: percentiles APPROXIMATE (the largest per-job value, an upper "
		    "bound; fio wrote no json+ histograms to merge). merged-bins: exact, from the merged json+ "
		    "histograms.</p>\n",
		    f);
}

/* A row of the provenance table; v NULL: unknown. */
static void prov_row(FILE *f, const char *name, const char *v)
{
	fprintf(f, "<tr><th>%s</th>", name);
	str_td(f, v);
	fputs("</tr>\n", f);
}

static void prov_strv(FILE *f, const char *name, char *const *v)
{
	fprintf(f, "<tr><th>%s</th><td>", name);
	if (!v || !*v)
		fputs("-", f);
	for (size_t i = 0; v && v[i]; i++) {
		if (i)
			fputc(' ', f);
		html_str(f, v[i]);
	}
	fputs("</td></tr>\n", f);
}

static void render_provenance(FILE *f, const struct stune_report_set *s)
{
	const struct stune_provenance *p = s->prov;
	char buf[80];
	fputs("<h2 id=\"provenance\">Provenance</h2>\n", f);
	if (!p) {
		fputs(
		    "<p class=\"note\">fio output files ingested: the host, kernel, HBA, payload and profile they were "
		    "made with are not known to scsitune; fio version and job options are per run (below). "
		    "<code>report --run</code>, or <code>--host-facts</code> on the host that ran fio, records "
		    "them.</p>\n",
		    f);
		return;
	}
	fputs("<table class=\"prov\">\n", f);
	prov_row(f, "source", p->host_facts ? "host (--host-facts: this host's facts as of the report)" : "run");
	prov_row(f, "host", p->host);
	prov_row(f, "kernel", p->kernel);
	if (p->have_hba) {
		prov_row(f, "HBA", p->hba_model);
		prov_row(f, "firmware", p->hba_firmware);
		prov_row(f, "PCI address", p->hba_pci_address);
		prov_row(f, "driver", p->hba_driver);
		snprintf(buf, sizeof(buf), "%lld", (long long)p->hba_numa_node.v);
		prov_row(f, "HBA NUMA node", p->hba_numa_node.set ? buf : NULL);
	} else {
		prov_row(f, "HBA", "- (the devices are not behind a detected HBA)");
	}
	prov_row(f, "payload version", p->payload_version ? p->payload_version : "- (stock modules)");
	prov_row(f, "payload verify", p->payload_state);
	prov_row(f, "profile", p->profile ? p->profile : "- (none applied)");
	prov_row(f, "profile sha256", p->profile_digest);
	prov_row(f, "journal", p->profile_journal_state);
	prov_row(f, "profile in effect (verify)", p->profile_verify_state);
	snprintf(buf, sizeof(buf), "%lld", (long long)p->profile_verify_drifted.v);
	prov_row(f, "drifted settings", p->profile_verify_drifted.set ? buf : NULL);
	if (p->profile_note)
		prov_row(f, "profile note", p->profile_note);
	prov_row(f, "state directory (journal)", p->profile_journal_dir);
	if (p->host_facts) {
		fmt_time_utc(buf, sizeof(buf), p->start_ms);
		prov_row(f, "facts taken", buf);
		fputs("</table>\n<p class=\"note\">fio ran outside scsitune: the host, HBA (the first mpi3mr HBA's), "
		      "payload and profile are this host's when the files were reported.</p>\n",
		      f);
		return;
	}
	prov_row(f, "fio", p->fio_path);
	prov_row(f, "fio version", p->fio_version);
	fmt_time_utc(buf, sizeof(buf), p->start_ms);
	prov_row(f, "started", buf);
	snprintf(buf, sizeof(buf), "%u", p->runs);
	prov_row(f, "runs", buf);
	if (p->job_file)
		prov_row(f, "job file", p->job_file);
	else
		prov_strv(f, "devices", p->devices);
	prov_row(f, "read-only (fio --readonly)", p->readonly ? "yes" : "no");
	prov_strv(f, "fio arguments", p->fio_args);
	if (p->bound_node >= 0) {
		snprintf(buf, sizeof(buf), "%d", p->bound_node);
		prov_row(f, "fio bound to NUMA node", buf);
		prov_row(f, "CPUs of that node", p->bound_cpus);
	} else {
		prov_row(f, "fio not bound", p->binding_note);
	}
	fputs("</table>\n", f);
}

static void render_summary(FILE *f, const struct stune_stats *st)
{
	fputs("<table class=\"summary\"><tr><th>runs</th><th>avg KIOPS</th><th>min KIOPS</th><th>max KIOPS</th>"
	      "<th>spread %</th><th>stddev KIOPS</th><th>CoV %</th></tr>\n<tr>",
	      f);
	num_td(f, "summary.runs", (double)st->n, 1, 0);
	num_td(f, "summary.avg_kiops", st->avg, 1, 1);
	num_td(f, "summary.min_kiops", st->min, 1, 1);
	num_td(f, "summary.max_kiops", st->max, 1, 1);
	num_td(f, "summary.spread_pct", st->spread * 100, 1, 1);
	num_td(f, "summary.stddev_kiops", st->has_stddev ? st->stddev : NAN, 1, 1);
	num_td(f, "summary.cov_pct", st->has_stddev ? st->cov * 100 : NAN, 1, 1);
	fputs("</tr></table>\n<p class=\"note\">KIOPS = thousands of I/O per second, read + write, all jobs summed; "
	      "spread = (max − min) / max; stddev: sample (n − 1); CoV = stddev / avg",
	      f);
	if (!st->has_stddev)
		fputs(" (stddev and CoV need at least 2 runs)", f);
	fputs(".</p>\n", f);
}

/* The runs beyond the robust z bound: named, kept in every statistic (summary.outliers in JSON). */
static void render_outliers(FILE *f, const struct stune_report_set *s)
{
	char key[96];
	size_t k = 0;
	for (size_t i = 0; s->robust_z && i < s->n_runs; i++) {
		if (!(fabs(s->robust_z[i]) > STUNE_OUTLIER_Z))
			continue;
		if (!k)
			fprintf(f,
				"<p class=\"note\" id=\"outliers\">Outliers (robust z beyond ±%.1f; named, not "
				"dropped):",
				STUNE_OUTLIER_Z);
		fprintf(f, "%s run %zu (", k ? ";" : "", i + 1);
		html_str(f, s->runs[i]->path ? s->runs[i]->path : "stdin");
		fputs(") ", f);
		char shown[80];
		struct jnum n = jnum_of(s->kiops[i]);
		jnum_shown(shown, sizeof(shown), n, 1, 1);
		fputs("<span", f);
		num_attrs(f, key_of(key, sizeof(key), "summary.outliers.%zu.kiops", k), n, 1, false);
		fprintf(f, ">%s</span> KIOPS", shown);
		k++;
	}
	if (k)
		fputs(".</p>\n", f);
}

static void compare_row(FILE *f, const char *key, const char *label, const char *source, const struct stune_stats *st)
{
	char k[96];
	fputs("<tr>", f);
	str_td(f, label);
	num_td(f, key_of(k, sizeof(k), "%s.runs", key), (double)st->n, 1, 0);
	num_td(f, key_of(k, sizeof(k), "%s.avg_kiops", key), st->avg, 1, 1);
	num_td(f, key_of(k, sizeof(k), "%s.min_kiops", key), st->min, 1, 1);
	num_td(f, key_of(k, sizeof(k), "%s.max_kiops", key), st->max, 1, 1);
	num_td(f, key_of(k, sizeof(k), "%s.spread_pct", key), st->spread * 100, 1, 1);
	fputs("<td class=\"path\">", f);
	html_str(f, source ? source : "this report");
	fputs("</td></tr>\n", f);
}

/* The change, signed, coloured by whether it is better (more IOPS, less spread). */
/* A change, green when better and red when worse; uncoloured when the sets are not comparable. */
static void change_span(FILE *f, const char *key, double v, bool higher_better, bool comparable, const char *unit)
{
	char shown[80];
	struct jnum n = jnum_of(v);
	jnum_shown(shown, sizeof(shown), n, 1, 1);
	bool better = higher_better ? n.v > 0 : n.v < 0;
	fprintf(f, "<span class=\"%s\">%s<span",
		n.v == 0 || !comparable ? ""
		: better		? "up"
					: "down",
		n.v > 0 ? "+" : "");
	num_attrs(f, key, n, 1, false);
	fprintf(f, ">%s</span>%s</span>", shown, unit);
}

static void render_change(FILE *f, const struct stune_report_compare *c)
{
	html_str(f, c->ref_label);
	fputs(" → ", f);
	html_str(f, c->cur_label);
	fputs(": avg KIOPS ", f);
	change_span(f, "compare.avg_change_pct", c->cmp.avg_change * 100, true, !c->n_mismatch, " %");
	fputs(", spread ", f);
	change_span(f, "compare.spread_change_points", c->cmp.spread_change * 100, false, !c->n_mismatch, " points");
	fputs("; median change ", f);
	change_span(f, "compare.median_change.estimate_pct", c->change_estimate * 100, true, !c->n_mismatch, " %");
	if (c->has_low && c->has_high) {
		fprintf(f, ", %g %% interval ", STUNE_REPORT_CHANGE_CONFIDENCE * 100);
		change_span(f, "compare.median_change.low_pct", c->change_low * 100, true, false, " %");
		fputs(" to ", f);
		change_span(f, "compare.median_change.high_pct", c->change_high * 100, true, false, " %");
	} else {
		fprintf(f, ", too few runs for a %g %% interval", STUNE_REPORT_CHANGE_CONFIDENCE * 100);
	}
	if (c->n_mismatch)
		fputs(" <strong class=\"nc\">(not comparable: the change means nothing)</strong>", f);
}

static void render_compare(FILE *f, const struct stune_report_compare *c, const struct stune_stats *cur)
{
	fputs("<table class=\"compare\"><tr><th>configuration</th><th>runs</th><th>avg KIOPS</th><th>min KIOPS</th>"
	      "<th>max KIOPS</th><th>spread %</th><th>source</th></tr>\n",
	      f);
	compare_row(f, "compare.reference", c->ref_label, c->ref_source, &c->ref);
	compare_row(f, "compare.current", c->cur_label, NULL, cur);
	fputs("</table>\n<p class=\"change\">", f);
	render_change(f, c);
	fputs("</p>\n<p class=\"treatment\">treatment: ", f);
	if (!c->treatment_known)
		fputs("unknown (a set without host facts: --run, --host-facts record them)", f);
	else if (!c->n_treatment)
		fputs("none: nothing differs (an A/A comparison)", f);
	for (size_t i = 0; i < c->n_treatment; i++) {
		fputs(i ? "; " : "", f);
		html_str(f, c->what[i]);
		fputc(' ', f);
		html_str(f, c->t_ref[i]);
		fputs(" → ", f);
		html_str(f, c->t_cur[i]);
	}
	fputs("</p>\n", f);
}

static void render_runs(FILE *f, const struct stune_report_set *s)
{
	char key[96], when[64];
	fputs("<table class=\"runs\"><tr><th>run</th><th>file</th><th>fio</th><th>started</th><th>output</th>"
	      "<th>jobs</th><th>failed</th><th>IOPS</th><th>KIOPS</th><th>read IOPS</th><th>write IOPS</th>"
	      "<th>MiB/s</th></tr>\n",
	      f);
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct stune_fio_run *r = s->runs[i];
		fprintf(f, "<tr><td>%zu</td><td class=\"path\">", i + 1);
		html_str(f, r->path);
		fputs("</td>", f);
		str_td(f, r->fio_version);
		fmt_time_utc(when, sizeof(when), r->timestamp_ms);
		str_td(f, when);
		if (r->group >= 0) {
			char out[64];
			snprintf(out, sizeof(out), "%s, fio group %lld", r->json_plus ? "json+" : "json",
				 (long long)r->group);
			str_td(f, out);
		} else {
			str_td(f, r->json_plus ? "json+" : "json");
		}
		num_td(f, key_of(key, sizeof(key), "runs.%zu.job_count", i), (double)r->n_jobs, 1, 0);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.failed_jobs", i), (double)r->n_failed, 1, 0);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.iops", i), r->iops, 1, 1);
		jnum_td(f, key_of(key, sizeof(key), "runs.%zu.kiops", i), jnum_exact(s->kiops[i]), 1, 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.read.iops", i), r->total[STUNE_FIO_READ].iops, 1, 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.write.iops", i), r->total[STUNE_FIO_WRITE].iops, 1, 1);
		num_td(f, key_of(key, sizeof(key), "runs.%zu.bw_mib_s", i), r->bw_kib_s / 1024, 1, 1);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void render_jobs(FILE *f, const struct stune_report_set *s)
{
	char key[96];
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct stune_fio_run *r = s->runs[i];
		fprintf(f, "<details><summary>run %zu: %zu job%s, options</summary>\n", i + 1, r->n_jobs,
			r->n_jobs == 1 ? "" : "s");
		fputs(
		    "<table class=\"jobs\"><tr><th>job</th><th>name</th><th>group</th><th>error</th><th>read IOPS</th>"
		    "<th>write IOPS</th><th>options</th></tr>\n",
		    f);
		for (size_t j = 0; j < r->n_jobs; j++) {
			const struct stune_fio_job *jb = &r->jobs[j];
			fprintf(f, "<tr><td>%zu</td>", j);
			fputs("<td class=\"jobname\">", f);
			html_str(f, jb->name);
			fputs("</td>", f);
			num_td(f, key_of(key, sizeof(key), "runs.%zu.jobs.%zu.groupid", i, j), (double)jb->groupid, 1,
			       0);
			num_td(f, key_of(key, sizeof(key), "runs.%zu.jobs.%zu.error", i, j), jb->error, 1, 0);
			num_td(f, key_of(key, sizeof(key), "runs.%zu.jobs.%zu.read_iops", i, j),
			       jb->io[STUNE_FIO_READ].iops, 1, 1);
			num_td(f, key_of(key, sizeof(key), "runs.%zu.jobs.%zu.write_iops", i, j),
			       jb->io[STUNE_FIO_WRITE].iops, 1, 1);
			fputs("<td class=\"path\">", f);
			for (size_t k = 0; k < jb->n_options; k++) {
				if (k)
					fputs(" ", f);
				html_str(f, jb->options[k].key);
				fputc('=', f);
				html_str(f, jb->options[k].value);
			}
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
		if (r->n_global_options) {
			fputs("<p class=\"note\">global options: <span class=\"path\">", f);
			for (size_t k = 0; k < r->n_global_options; k++) {
				if (k)
					fputs(" ", f);
				html_str(f, r->global_options[k].key);
				fputc('=', f);
				html_str(f, r->global_options[k].value);
			}
			fputs("</span></p>\n", f);
		}
		fputs("</details>\n", f);
	}
}

/* The page's head, its title and the line under it (host, runs, schema). */
static void report_head(FILE *f, const struct stune_report_set *s)
{
	fputs(
	    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<meta name=\"generator\" content=\"scsitune " SCSITUNE_VERSION "\">\n<title>scsitune report",
	    f);
	if (s->phase) {
		fputs(": ", f);
		html_str(f, s->phase);
	}
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", css);
	fputs("<h1>scsitune report", f);
	if (s->phase) {
		fputs(": phase ", f);
		html_str(f, s->phase);
	}
	fputs("</h1>\n<p class=\"sub\">", f);
	if (s->prov && s->prov->host) {
		fputs("host ", f);
		html_str(f, s->prov->host);
		fputs(", ", f);
	}
	fprintf(f,
		"%zu run%s (one fio output file per run); the numbers are those of <code>scsitune report -o "
		"json</code> (schema <span data-k=\"schema_version\" data-v=\"%d\">%d</span>)</p>\n",
		s->n_runs, s->n_runs == 1 ? "" : "s", STUNE_REPORT_SCHEMA_VERSION, STUNE_REPORT_SCHEMA_VERSION);
}

/* The comparison's headline and what makes either set not comparable. */
static void report_warnings(FILE *f, const struct stune_report_set *s, const struct stune_report_compare *c)
{
	if (c) {
		fputs("<p class=\"headline\">", f);
		render_change(f, c);
		fputs("</p>\n", f);
		if (c->n_mismatch) {
			fputs("<div class=\"warnbox\" id=\"compare-not-comparable\"><strong>WARNING: NOT COMPARABLE "
			      "with ",
			      f);
			html_str(f, c->ref_label);
			fputs(", the change means nothing:</strong>\n<ul>", f);
			for (size_t i = 0; i < c->n_mismatch; i++) {
				fputs("<li>", f);
				html_str(f, c->mismatch[i]);
				fputs("</li>", f);
			}
			fputs("</ul></div>\n", f);
		}
	}
	if (s->n_mismatch) {
		fputs(
		    "<div class=\"warnbox\" id=\"runs-not-comparable\"><strong>WARNING: the runs are not all the same "
		    "fio job: the statistics across them compare different things:</strong>\n<ul>",
		    f);
		for (size_t i = 0; i < s->n_mismatch; i++) {
			fputs("<li>", f);
			html_str(f, s->mismatch[i]);
			fputs("</li>", f);
		}
		fputs("</ul></div>\n", f);
	}
}

/* KIOPS per run: the chart (the reference's runs beside these when comparing) and its note. */
static void report_kiops(FILE *f, const struct stune_report_set *s, const struct stune_report_compare *c,
			 const struct stune_saved_set *ref)
{
	fputs("<h2 id=\"kiops\">KIOPS per run</h2>\n", f);
	struct kiops_set sets[2];
	size_t n_sets = 0;
	if (c && ref && ref->n > 0)
		sets[n_sets++] = (struct kiops_set){.label = c->ref_label,
						    .kiops = ref->kiops,
						    .n = ref->n,
						    .st = &c->ref,
						    .stats_key = "compare.reference",
						    .ref = true};
	sets[n_sets++] = (struct kiops_set){.label = c		? c->cur_label
						     : s->phase ? s->phase
								: "this report",
					    .kiops = s->kiops,
					    .n = s->n_runs,
					    .st = &s->stats,
					    .stats_key = c ? "compare.current" : "summary"};
	kiops_chart(f, sets, n_sets);
	fputs("<p class=\"note\">Bars: each run's KIOPS (read + write, all jobs summed); dashed line: the average; "
	      "shaded band: min – max of the runs.</p>\n",
	      f);
}

int render_report_html(FILE *f, const struct stune_report_set *s, const struct stune_report_compare *c,
		       const struct stune_saved_set *ref)
{
	report_head(f, s);
	report_warnings(f, s, c);
	report_kiops(f, s, c, ref);
	if (c) {
		fputs("<h2 id=\"compare\">Comparison</h2>\n", f);
		render_compare(f, c, &s->stats);
	}
	fputs("<h2 id=\"summary\">Across the runs", f);
	if (s->phase) {
		fputs(" of ", f);
		html_str(f, s->phase);
	}
	fputs("</h2>\n", f);
	render_summary(f, &s->stats);
	render_outliers(f, s);

	fputs("<h2 id=\"latency\">Completion latency</h2>\n", f);
	bool any = false;
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		if (!dir_has_samples(s, d))
			continue;
		any = true;
		fprintf(f, "<h3>%s</h3>\n", stune_fio_dir_name(d));
		lat_chart(f, s, d);
		lat_table(f, s, d);
	}
	if (!any)
		fputs("<p class=\"note\">No completion latency in these fio outputs.</p>\n", f);

	render_provenance(f, s);
	fputs("<h2 id=\"runs\">Runs</h2>\n", f);
	render_runs(f, s);
	render_jobs(f, s);
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- The fleet view (report --query --html) ---- */

static void fleet_stats_row(FILE *f, const char *key, const char *label, const struct stune_stats *st)
{
	char k[96];
	fputs("<tr>", f);
	str_td(f, label);
	num_td(f, key_of(k, sizeof(k), "%s.runs", key), (double)st->n, 1, 0);
	num_td(f, key_of(k, sizeof(k), "%s.avg_kiops", key), st->avg, 1, 1);
	num_td(f, key_of(k, sizeof(k), "%s.min_kiops", key), st->min, 1, 1);
	num_td(f, key_of(k, sizeof(k), "%s.max_kiops", key), st->max, 1, 1);
	num_td(f, key_of(k, sizeof(k), "%s.spread_pct", key), st->spread * 100, 1, 1);
	fputs("</tr>\n", f);
}

/* The reference and current rows of a pooled set (selection, cohort) and its change. */
static void fleet_stats_table(FILE *f, const char *key, const struct fleet_meta *m, bool has_ref,
			      const struct stune_stats *ref, bool has_cur, const struct stune_stats *cur, bool has_cmp,
			      const struct stune_stats_cmp *cmp)
{
	char k[96];
	fputs("<table class=\"summary\"><tr><th>phase</th><th>runs</th><th>avg KIOPS</th><th>min KIOPS</th>"
	      "<th>max KIOPS</th><th>spread %</th></tr>\n",
	      f);
	if (m->compare && has_ref)
		fleet_stats_row(f, key_of(k, sizeof(k), "%s.reference", key), m->compare, ref);
	if (has_cur)
		fleet_stats_row(f, key_of(k, sizeof(k), "%s.current", key), m->phase, cur);
	fputs("</table>\n", f);
	if (has_cmp) {
		fputs("<p class=\"change\">", f);
		html_str(f, m->compare);
		fputs(" → ", f);
		html_str(f, m->phase);
		fputs(": avg KIOPS ", f);
		change_span(f, key_of(k, sizeof(k), "%s.compare.avg_change_pct", key), cmp->avg_change * 100, true,
			    true, " %");
		fputs(", spread ", f);
		change_span(f, key_of(k, sizeof(k), "%s.compare.spread_change_points", key), cmp->spread_change * 100,
			    false, true, " points");
		fputs("</p>\n", f);
	}
}

struct strip_item {
	size_t host;
	double v; /* the JSON's avg_change_pct */
};

static int strip_cmp(const void *a, const void *b)
{
	const struct strip_item *x = a, *y = b;
	return x->v < y->v ? -1 : x->v > y->v ? 1 : x->host < y->host ? -1 : x->host > y->host;
}

/* The quartile q (0.25, 0.75) of sorted values, linear between ranks. */
static double quartile(const struct strip_item *s, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	return i + 1 < n ? s[i].v + (s[i + 1].v - s[i].v) * (pos - (double)i) : s[i].v;
}

/* The compared hosts (c, nc of them, sorted) outside the fences lo_f, hi_f, named; or why none is. */
static void strip_outliers_note(FILE *f, const struct stune_fleet *fl, const struct strip_item *c, size_t nc,
				double lo_f, double hi_f)
{
	bool any = false;
	for (size_t r = 0; r < nc; r++) {
		if (!(c[r].v < lo_f || c[r].v > hi_f))
			continue;
		fputs(any ? ", "
			  : "<p class=\"note warn\">Outliers (outside the quartiles ± 1.5 × IQR of the compared "
			    "hosts' changes): ",
		      f);
		html_str(f, fl->hosts[c[r].host].name);
		char shown[80];
		jnum_shown(shown, sizeof(shown), jnum_of(c[r].v), 1, 1);
		fprintf(f, " (%s%s %%)", c[r].v > 0 ? "+" : "", shown);
		any = true;
	}
	if (any)
		fputs(".</p>\n", f);
	else if (nc >= 4)
		fputs(
		    "<p class=\"note\">No outlier among the compared hosts (outside the quartiles ± 1.5 × IQR of their "
		    "changes).</p>\n",
		    f);
	else
		fprintf(f, "<p class=\"note\">%zu compared host%s: too few to name outliers (4 or more).</p>\n", nc,
			nc == 1 ? "" : "s");
}

/*
 * Per-host avg KIOPS change, sorted, one bar per host from 0. Hosts shown
 * apart (drifted, not applied, not comparable) are drawn grey and say so;
 * outliers among the compared hosts (Tukey's fences, 4 or more) are named.
 */
static void fleet_strip(FILE *f, const struct stune_fleet *fl)
{
	_cleanup_free_ struct strip_item *s = calloc(fl->n_hosts ? fl->n_hosts : 1, sizeof(*s));
	size_t n = 0;
	if (!s)
		return;
	for (size_t i = 0; i < fl->n_hosts; i++)
		if (fl->hosts[i].has_cmp)
			s[n++] = (struct strip_item){i, jnum_of(fl->hosts[i].cmp.avg_change * 100).v};
	if (!n) {
		fputs("<p class=\"note\">No host has both phases to compare.</p>\n", f);
		return;
	}
	qsort(s, n, sizeof(*s), strip_cmp);
	double lo_f = -INFINITY, hi_f = INFINITY, amax = 0;
	_cleanup_free_ struct strip_item *c = calloc(n, sizeof(*c));
	size_t nc = 0;
	if (!c)
		return;
	for (size_t i = 0; i < n; i++)
		if (fl->hosts[s[i].host].status == STUNE_QHOST_COMPARED)
			c[nc++] = s[i];
	if (nc >= 4) {
		double q1 = quartile(c, nc, 0.25), q3 = quartile(c, nc, 0.75);
		lo_f = q1 - 1.5 * (q3 - q1);
		hi_f = q3 + 1.5 * (q3 - q1);
	}
	/* The scale fits the hosts compared (within the outlier fences when there are 4 or more): a host apart
	 * or an outlier far out would squeeze the others to slivers (+180 % once made an axis of +-200 % for
	 * hosts within +-37 %). A bar beyond the scale is clipped at its edge, marked, its value written. */
	for (size_t i = 0; i < nc; i++)
		if (c[i].v >= lo_f && c[i].v <= hi_f)
			amax = fmax(amax, fabs(c[i].v));
	if (!(amax > 0))
		for (size_t i = 0; i < n; i++)
			amax = fmax(amax, fabs(s[i].v));
	double top = nice_ceil(amax * 1.1);
	const int W = KW, row = 22, L = 220, R = 80, T = 24;
	int H = T + row * (int)n + 24;
	double mid = L + (W - L - R) / 2.0, half = (W - L - R) / 2.0;
	fprintf(
	    f,
	    "<svg class=\"chart\" data-scale=\"signed\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
	    "aria-label=\"avg KIOPS change per host, sorted\" xmlns=\"http://www.w3.org/2000/svg\">\n",
	    W, H, W, H);
	for (int t = -2; t <= 2; t++) {
		double x = mid + half * t / 2;
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>", x, x, T - 4, H - 20);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%+g %%</text>\n", x, T - 8, top * t / 2);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n", mid, mid, T - 4, H - 20);
	for (size_t r = 0; r < n; r++) {
		const struct stune_qhost *h = &fl->hosts[s[r].host];
		char key[96], shown[80];
		struct jnum v = jnum_of(h->cmp.avg_change * 100);
		bool apart = h->status != STUNE_QHOST_COMPARED, outlier = !apart && (v.v < lo_f || v.v > hi_f);
		bool clipped = fabs(v.v) > top;
		double y = T + row * (double)r, w = half * fmin(fabs(v.v), top) / top, x = v.v < 0 ? mid - w : mid;
		key_of(key, sizeof(key), "hosts.%zu.compare.avg_change_pct", s[r].host);
		jnum_shown(shown, sizeof(shown), v, 1, 1);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"%s>", L - 8, y + 14,
			outlier ? " font-weight=\"700\"" : "");
		html_str(f, h->name);
		if (apart) {
			fputs(" (apart: ", f);
			html_str(f, h->apart == STUNE_QAPART_DRIFTED	   ? "drifted"
				    : h->apart == STUNE_QAPART_NOT_APPLIED ? "not applied"
									   : "not comparable");
			fputc(')', f);
		}
		fputs(outlier ? " (outlier)</text>" : "</text>", f);
		fprintf(f, "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"",
			apart	  ? " ref"
			: outlier ? " outlier"
			: v.v < 0 ? " neg"
				  : "",
			x, y + 3, w, row - 6);
		num_attrs(f, key, v, 1, false);
		if (clipped)
			fputs(" data-clipped=\"1\"", f);
		fputs("><title>", f);
		html_str(f, h->name);
		fprintf(f, ": %s%s %%</title></rect>", v.v > 0 ? "+" : "", shown);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s>%s%s<tspan", v.v < 0 ? mid + 6 : mid + w + 6, y + 14,
			clipped ? " class=\"clipped\"" : "",
			clipped ? (v.v < 0 ? "&#171; beyond the scale: " : "&#187; beyond the scale: ") : "",
			v.v > 0 ? "+" : "");
		num_attrs(f, key, v, 1, false);
		fprintf(f, ">%s</tspan> %%</text>\n", shown);
	}
	fputs("</svg>\n", f);
	strip_outliers_note(f, fl, c, nc, lo_f, hi_f);
	fputs("<p class=\"note\">Grey: hosts shown apart, not averaged into the selection or a cohort.</p>\n", f);
}

/* Per cohort: each host's avg KIOPS, reference beside current. */
static void fleet_cohort_chart(FILE *f, const struct stune_fleet *fl, size_t k, const struct fleet_meta *m)
{
	size_t n = 0;
	double max = 0;
	for (size_t i = 0; i < fl->n_hosts; i++) {
		const struct stune_qhost *h = &fl->hosts[i];
		if (h->cohort != k + 1)
			continue;
		n++;
		if (h->has_ref)
			max = fmax(max, jnum_of(h->ref.stats.avg).v);
		if (h->has_cur)
			max = fmax(max, jnum_of(h->cur.stats.avg).v);
	}
	if (!n)
		return;
	double top = nice_ceil(max * 1.08);
	fprintf(
	    f,
	    "<svg class=\"chart\" data-scale=\"linear\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
	    "aria-label=\"cohort %zu: avg KIOPS per host\" xmlns=\"http://www.w3.org/2000/svg\">\n",
	    KW, KH, KW, KH, k + 1);
	for (int t = 0; t <= 5; t++) {
		char lbl[80];
		double v = top * t / 5, y = ky(v, top);
		out_fmt_dbl(lbl, sizeof(lbl), v, top >= 50 ? 0 : 1);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", KL, KW - KR, y, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", KL - 6, y + 4, lbl);
	}
	double gw = (double)(KW - KL - KR) / (double)n, bw = fmin((gw - 16) / 2, 44);
	size_t j = 0;
	for (size_t i = 0; i < fl->n_hosts; i++) {
		const struct stune_qhost *h = &fl->hosts[i];
		if (h->cohort != k + 1)
			continue;
		double x0 = KL + gw * (double)j++, xs = x0 + (gw - 2 * bw) / 2;
		for (int side = 0; side < 2; side++) {
			bool has = side ? h->has_cur : h->has_ref && m->compare;
			if (!has)
				continue;
			char key[96], shown[80];
			struct jnum v = jnum_of(side ? h->cur.stats.avg : h->ref.stats.avg);
			double y = ky(v.v, top);
			key_of(key, sizeof(key), "hosts.%zu.%s.summary.avg_kiops", i, side ? "current" : "reference");
			jnum_shown(shown, sizeof(shown), v, 1, 1);
			fprintf(f, "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"",
				side ? "" : " ref", xs + bw * side, y, bw - 2, ky(0, top) - y);
			num_attrs(f, key, v, 1, false);
			fputs("><title>", f);
			html_str(f, side ? m->phase : m->compare);
			fprintf(f, ": avg %s KIOPS</title></rect>\n", shown);
			fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\"", xs + bw * side + bw / 2 + 3,
				y - 4);
			num_attrs(f, key, v, 1, false);
			fprintf(f, ">%s</text>\n", shown);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x0 + gw / 2, KH - KB + 18);
		html_str(f, h->name);
		fputs("</text>\n", f);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n</svg>\n", KL, KW - KR,
		ky(0, top), ky(0, top));
}

/* What differs between a host's two sides (report --query's treatment), or "-" without both. */
static void treatment_td(FILE *f, const struct stune_qhost *h, const struct fleet_meta *m)
{
	if (!m->compare || !h->has_cur || !h->has_ref) {
		fputs("<td>-</td>", f);
		return;
	}
	fputs("<td class=\"treatment\">", f);
	if (!h->n_treatment)
		fputs("none (A/A)", f);
	for (size_t i = 0; i < h->n_treatment; i++) {
		char a[160], b[160];
		fputs(i ? "; " : "", f);
		html_str(f, stune_qlabel_name(h->treatment[i]));
		fputc(' ', f);
		html_str(f, query_treat_value(a, sizeof(a), &h->ref, h->treatment[i]));
		fputs(" → ", f);
		html_str(f, query_treat_value(b, sizeof(b), &h->cur, h->treatment[i]));
	}
	fputs("</td>", f);
}

/* One row of the gate's table: a condition's cells, a verdict, the host it is about. */
static void gate_row_head(FILE *f, const char *cond, bool passed, const char *verdict, const char *host)
{
	fputs("<tr>", f);
	str_td(f, cond);
	fprintf(f, "<td><span class=\"%s\">", passed ? "up" : "down");
	html_str(f, verdict);
	fputs("</span></td><td class=\"host\">", f);
	html_str(f, host ? host : "");
	fputs("</td>", f);
}

/* The gate: each condition's verdict; a change, each test with its estimate, bound, confidence reached and why. */
static void fleet_gate_table(FILE *f, const struct stune_fleet *fl, const struct stune_gate *g,
			     const struct stune_gate_result *gr)
{
	char key[96], reason[160];
	fprintf(
	    f,
	    "<h2 id=\"gate\">Gate</h2>\n<p class=\"note\">A change (kiops&gt;=+5%%) is a one-sided rank test at %g "
	    "%%: per host the Mann-Whitney U test of its runs, for selection.kiops the Wilcoxon signed-rank test of "
	    "the hosts&#39; changes (one host: its runs). The estimate is the Hodges-Lehmann change, the bound its "
	    "one-sided confidence bound at %g %%; it passes only when the test reaches %g %%. Too few runs or hosts "
	    "to reach it is never a pass.</p>\n<table>\n<tr><th>condition</th><th>verdict</th><th>host</th>"
	    "<th>estimate %%</th><th>bound %%</th><th>reached %%</th><th>why</th></tr>\n",
	    g->confidence * 100, g->confidence * 100, g->confidence * 100);
	for (size_t k = 0; k < g->n; k++) {
		const struct stune_gate_cond *c = &g->conds[k];
		const struct stune_gate_outcome *oc = &gr->o[k];
		size_t j = 0; /* index into the JSON's tests[] */
		for (size_t i = 0; c->change && (oc->has_sel ? i < 1 : oc->per_host && i < fl->n_hosts); i++) {
			const struct stune_gate_test *t = oc->has_sel ? &oc->sel : oc->tested[i] ? &oc->tests[i] : NULL;
			if (!t)
				continue;
			gate_row_head(f, c->text, t->verdict == STUNE_GATE_SHOWN, gate_verdict_name(t->verdict),
				      oc->has_sel ? "selection" : fl->hosts[i].name);
			num_td(f, key_of(key, sizeof(key), "gate.conditions.%zu.tests.%zu.estimate_pct", k, j),
			       t->estimate * 100, 1, 1);
			num_td(f, key_of(key, sizeof(key), "gate.conditions.%zu.tests.%zu.bound_pct", k, j),
			       t->bound * 100, 1, 1);
			num_td(f, key_of(key, sizeof(key), "gate.conditions.%zu.tests.%zu.reached_pct", k, j),
			       t->reached * 100, 1, 1);
			gate_test_reason(reason, sizeof(reason), t, g->confidence);
			str_td(f, reason);
			fputs("</tr>\n", f);
			j++;
		}
		if (c->change && (oc->has_sel || oc->per_host))
			continue;
		/* A threshold or a count: its value (the selection's, a count), the hosts that miss it or are counted.
		 */
		gate_row_head(f, c->text, oc->passed, oc->passed ? "ok" : "FAIL", NULL);
		if (oc->per_host)
			fputs("<td class=\"n\">-</td>", f);
		else
			num_td(f, key_of(key, sizeof(key), "gate.conditions.%zu.value", k), oc->value, 1,
			       c->metric >= STUNE_GATE_HOSTS ? 0 : 1);
		fputs("<td></td><td></td><td>", f);
		size_t n = oc->per_host ? oc->n_misses : c->metric == STUNE_GATE_HOSTS ? 0 : oc->n_names;
		for (size_t m = 0; m < n; m++) {
			const struct stune_qhost *h = &fl->hosts[oc->per_host ? oc->misses[m].host : oc->names[m]];
			fputs(m ? ", " : "", f);
			html_str(f, h->name);
			if (!oc->per_host && h->reason) {
				fputs(" (", f);
				html_str(f, h->reason);
				fputs(")", f);
			}
		}
		fputs(c->implicit ? (n ? " (added)" : "added") : "", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* Hosts: one row each, compared, apart or missing, and why. */
static void fleet_hosts_table(FILE *f, const struct stune_fleet *fl, const struct fleet_meta *m)
{
	char key[96];
	fputs("<h2 id=\"hosts\">Hosts</h2>\n<table class=\"hosts\"><tr><th>host</th><th>status</th><th>cohort</th>"
	      "<th>avg KIOPS before</th><th>avg KIOPS after</th><th>change %</th><th>spread % after</th>"
	      "<th>treatment</th><th>why apart or missing</th></tr>\n",
	      f);
	for (size_t i = 0; i < fl->n_hosts; i++) {
		const struct stune_qhost *h = &fl->hosts[i];
		fputs("<tr><td class=\"host\">", f);
		html_str(f, h->name);
		fputs("</td>", f);
		str_td(f, h->status == STUNE_QHOST_COMPARED ? "compared"
			  : h->status == STUNE_QHOST_APART  ? "apart"
							    : "missing");
		if (h->cohort)
			num_td(f, key_of(key, sizeof(key), "hosts.%zu.cohort", i), (double)h->cohort, 1, 0);
		else
			fputs("<td>-</td>", f);
		if (h->has_ref && m->compare)
			num_td(f, key_of(key, sizeof(key), "hosts.%zu.reference.summary.avg_kiops", i),
			       h->ref.stats.avg, 1, 1);
		else
			fputs("<td>-</td>", f);
		if (h->has_cur)
			num_td(f, key_of(key, sizeof(key), "hosts.%zu.current.summary.avg_kiops", i), h->cur.stats.avg,
			       1, 1);
		else
			fputs("<td>-</td>", f);
		if (h->has_cmp)
			num_td(f, key_of(key, sizeof(key), "hosts.%zu.compare.avg_change_pct", i),
			       h->cmp.avg_change * 100, 1, 1);
		else
			fputs("<td>-</td>", f);
		if (h->has_cur)
			num_td(f, key_of(key, sizeof(key), "hosts.%zu.current.summary.spread_pct", i),
			       h->cur.stats.spread * 100, 1, 1);
		else
			fputs("<td>-</td>", f);
		treatment_td(f, h, m);
		str_td(f, h->reason ? h->reason : "");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

int render_fleet_html(FILE *f, const struct stune_fleet *fl, const struct fleet_meta *m, const struct stune_gate *g,
		      const struct stune_gate_result *gr)
{
	char key[96], a[64], b[64];
	fputs(
	    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<meta name=\"generator\" content=\"scsitune " SCSITUNE_VERSION "\">\n<title>scsitune fleet view: ",
	    f);
	html_str(f, m->phase);
	fprintf(f,
		"</title>\n<style>%s svg .bar.neg{fill:#b42318} svg .bar.outlier{fill:#9a5b00}</style>\n</head>\n"
		"<body>\n<h1>scsitune fleet view: phase ",
		css);
	html_str(f, m->phase);
	if (m->compare) {
		fputs(" against ", f);
		html_str(f, m->compare);
	}
	fmt_time_utc(a, sizeof(a), m->start_ms);
	fmt_time_utc(b, sizeof(b), m->end_ms);
	fprintf(f, "</h1>\n<p class=\"sub\">%s – %s, from ", a, b);
	html_str(f, fl->url);
	fputs(" (", f);
	html_str(f, stune_query_api_name(fl->api));
	fprintf(f,
		"); compared hosts <span data-k=\"counts.compared\" data-v=\"%zu\">%zu</span>, apart "
		"<span data-k=\"counts.apart\" data-v=\"%zu\">%zu</span> (drifted <span data-k=\"counts.drifted\" "
		"data-v=\"%zu\">%zu</span>), missing <span data-k=\"counts.missing\" data-v=\"%zu\">%zu</span></p>\n",
		fl->n_compared, fl->n_compared, fl->n_apart, fl->n_apart, fl->n_drifted, fl->n_drifted, fl->n_missing,
		fl->n_missing);
	if (gr) {
		fputs("<p class=\"headline\">gate ", f);
		html_str(f, m->gate_expr);
		fprintf(f, ": <span class=\"%s\">%s</span></p>\n", gr->passed ? "up" : "down",
			gr->passed ? "passed" : "FAILED (exit 4)");
		fleet_gate_table(f, fl, g, gr);
	}
	fputs("<h2 id=\"selection\">Selection: the compared hosts' runs pooled</h2>\n", f);
	fleet_stats_table(f, "selection", m, fl->has_ref, &fl->ref, fl->has_cur, &fl->cur, fl->has_cmp, &fl->cmp);
	if (m->compare) {
		fputs("<h2 id=\"change\">avg KIOPS change per host</h2>\n", f);
		fleet_strip(f, fl);
	}
	for (size_t k = 0; k < fl->n_cohorts; k++) {
		const struct stune_qcohort *c = &fl->cohorts[k];
		fprintf(f, "<h2 id=\"cohort-%zu\">Cohort %zu: %zu host%s</h2>\n<p class=\"note\">kernel ", k + 1, k + 1,
			c->n_hosts, c->n_hosts == 1 ? "" : "s");
		html_str(f, c->kernel);
		fputs(", payload ", f);
		html_str(f, c->payload);
		fputs(", firmware ", f);
		html_str(f, c->firmware);
		fputs(", profile ", f);
		html_str(f, c->profile);
		fputs("</p>\n", f);
		fleet_cohort_chart(f, fl, k, m);
		fleet_stats_table(f, key_of(key, sizeof(key), "cohorts.%zu", k), m, c->has_ref, &c->ref, c->has_cur,
				  &c->cur, c->has_cmp, &c->cmp);
	}
	fleet_hosts_table(f, fl, m);
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -EIO : 0;
}
