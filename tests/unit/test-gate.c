/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The gate's change tests (fleet/gate.c) as a rollout meets them: the
 * verdicts on counts worked by hand, and fixed-seed simulations with the
 * seeds' noise of the rates issue 28 asks (tests/README.md): canaries of one
 * host x 6 runs, waves of 8 hosts, and rollouts of 4 such waves.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define SEEDS_NOISE_SEED 0x5eed0000ca4a4155ULL
#include "fleet/gate.h"
#include "seeds-noise.h"
#include "tap.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) < (eps))

CASE(verdicts, "a change test per host: shown, not shown, too few runs; <= tests the other direction")
{
	struct stune_gate_test t;
	double ref[] = {4200, 6700, 6500}, cur[] = {7000, 7700, 7350};
	CHECK(stune_gate_host_test(STUNE_GATE_GE, 4, 0.95, ref, 3, cur, 3, &t) == 0 && t.verdict == STUNE_GATE_SHOWN);
	CHECK_MSG(NEAR(t.bound, 7000.0 / 6700 - 1, 1e-12) && t.bound < t.estimate && !t.upper, "bound %g", t.bound);
	CHECK(NEAR(t.reached, 0.95, 1e-12) && NEAR(t.best, 0.95, 1e-12) && t.n_ref == 3 && t.n_cur == 3);
	CHECK(stune_gate_host_test(STUNE_GATE_GE, 5, 0.95, ref, 3, cur, 3, &t) == 0 &&
	      t.verdict == STUNE_GATE_NOT_SHOWN && NEAR(t.reached, 0.90, 1e-12));
	CHECK(stune_gate_host_test(STUNE_GATE_GE, 4, 0.95, ref, 2, cur, 2, &t) == 0 &&
	      t.verdict == STUNE_GATE_TOO_FEW && isnan(t.bound) && t.best < 0.95);
	/* <=: every tuned run below the baseline's x 1.9 (the largest ratio 7700 / 4200 = 1.83): an upper bound. */
	CHECK(stune_gate_host_test(STUNE_GATE_LE, 90, 0.95, ref, 3, cur, 3, &t) == 0 && t.verdict == STUNE_GATE_SHOWN &&
	      t.upper);
	CHECK_MSG(NEAR(t.bound, 7700.0 / 4200 - 1, 1e-12) && t.bound > t.estimate, "upper bound %g", t.bound);
	CHECK(stune_gate_host_test(STUNE_GATE_LE, 10, 0.95, ref, 3, cur, 3, &t) == 0 &&
	      t.verdict == STUNE_GATE_NOT_SHOWN);
	CHECK(stune_gate_host_test(STUNE_GATE_EQ, 5, 0.95, ref, 3, cur, 3, &t) == -EINVAL);
	CHECK(stune_gate_host_test(STUNE_GATE_GE, -100, 0.95, ref, 3, cur, 3, &t) == -EINVAL);
	/* The selection: 5 hosts all +8 % or more shown above +5 %; 4 hosts are too few at 95 %. */
	double x[] = {log1p(0.08), log1p(0.09), log1p(0.10), log1p(0.11), log1p(0.12)};
	CHECK(stune_gate_selection_test(STUNE_GATE_GE, 5, 0.95, x, 5, &t) == 0 && t.verdict == STUNE_GATE_SHOWN &&
	      t.n_cur == 5 && t.n_ref == 0 && NEAR(t.estimate, 0.10, 1e-3));
	CHECK(stune_gate_selection_test(STUNE_GATE_GE, 5, 0.95, x, 4, &t) == 0 && t.verdict == STUNE_GATE_TOO_FEW);
	CHECK(stune_gate_selection_test(STUNE_GATE_LT, 15, 0.95, x, 5, &t) == 0 && t.verdict == STUNE_GATE_SHOWN &&
	      t.upper && NEAR(t.bound, 0.12, 1e-9));
}

CASE(confidence, "--confidence: 95, 95%, 99.5 taken; 50 to 99.9 only")
{
	double c = 0;
	CHECK(stune_gate_parse_confidence("95", &c) == 0 && NEAR(c, 0.95, 1e-12));
	CHECK(stune_gate_parse_confidence("99.5%", &c) == 0 && NEAR(c, 0.995, 1e-12));
	const char *bad[] = {"", "100", "49", "0.95", "-95", "95x", "nan", "1e2", "99.95"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(stune_gate_parse_confidence(bad[i], &c) == -EINVAL, "'%s' taken", bad[i]);
}

/* --- fixed-seed simulations: the seeds' noise (tests/README.md) --- */

/* AT5: exactly +5 % (the null's edge: the test's own error rate). */
enum change { SAME, EFFECT, LOSS5, AT5 };
#define RUNS 6
/* One host's runs: RUNS baseline, RUNS tuned; EFFECT: the seeds' tuned runs (7,350, 3 %). */
static void host_runs(enum change k, double level, double *b, double *t)
{
	for (size_t i = 0; i < RUNS; i++) {
		b[i] = seed_run(level);
		t[i] = k == SAME     ? seed_run(level)
		       : k == EFFECT ? level * normal(7350, 0.03)
				     : (k == AT5 ? 1.05 : 0.95) * seed_run(level);
	}
}

/* A wave of n hosts (levels varying 10 % host to host) against `gate` (d in %): per host, every host's test
 * must show it; the selection, the hosts' test. */
static bool wave(enum change k, size_t n, bool selection, enum stune_gate_op op, double d)
{
	double x[16];
	bool all = true;
	for (size_t h = 0; h < n; h++) {
		double b[RUNS], t[RUNS], level = normal(1, 0.10);
		struct stune_gate_test ht;
		host_runs(k, level, b, t);
		if (stune_gate_host_test(op, selection ? 0 : d, 0.95, b, RUNS, t, RUNS, &ht) < 0)
			return false;
		x[h] = log1p(ht.estimate);
		all = all && ht.verdict == STUNE_GATE_SHOWN;
	}
	if (!selection)
		return all;
	struct stune_gate_test st;
	return stune_gate_selection_test(op, d, 0.95, x, n, &st) == 0 && st.verdict == STUNE_GATE_SHOWN;
}

static double rate(enum change k, size_t n, bool selection, enum stune_gate_op op, double d, size_t waves, int trials)
{
	int pass = 0;
	for (int i = 0; i < trials; i++) {
		bool ok = true;
		/* A rollout: wave after wave, each judged on its own hosts, stopping at the first gate that fails. */
		for (size_t w = 0; w < waves && ok; w++)
			ok = wave(k, n, selection, op, d);
		pass += ok;
	}
	return (double)pass / trials;
}

CASE(canaries, "1 host x 6 runs, 400 canaries: kiops>=+5% passes <= 5 % with no change and >= 90 % with the "
	       "seeds' effect; kiops>=-2% passes <= 5 % with a real 5 % loss")
{
	double none = rate(SAME, 1, false, STUNE_GATE_GE, 5, 1, 400);
	double effect = rate(EFFECT, 1, false, STUNE_GATE_GE, 5, 1, 400);
	double loss = rate(LOSS5, 1, false, STUNE_GATE_GE, -2, 1, 400);
	double edge = rate(AT5, 1, false, STUNE_GATE_GE, 5, 1, 2000);
	printf("# canaries: no change %.1f %%, the seeds' effect %.1f %%, a 5 %% loss at -2 %%: %.1f %%; exactly "
	       "+5 %%: %.1f %% of 2000\n",
	       none * 100, effect * 100, loss * 100, edge * 100);
	CHECK_MSG(none <= 0.05, "no change: %.1f %% passed", none * 100);
	/* At the null's edge the error rate is the test's own: at most 5 %, and not nothing (the test is not vacuous).
	 */
	CHECK_MSG(edge <= 0.05 && edge >= 0.01, "exactly +5 %%: %.1f %% passed", edge * 100);
	CHECK_MSG(effect >= 0.90, "effect: %.1f %% passed", effect * 100);
	CHECK_MSG(loss <= 0.05, "5 %% loss: %.1f %% passed -2 %%", loss * 100);
}

CASE(waves_of_8, "waves of 8 hosts x 6 runs, 400 each: selection.kiops>=+5% (the hosts as units) passes <= 5 % "
		 "with no change, >= 90 % with the effect; selection.kiops>=-2% and per-host kiops>=-2% pass <= 5 % "
		 "with a 5 % loss")
{
	double none = rate(SAME, 8, true, STUNE_GATE_GE, 5, 1, 400);
	double effect = rate(EFFECT, 8, true, STUNE_GATE_GE, 5, 1, 400);
	double loss = rate(LOSS5, 8, true, STUNE_GATE_GE, -2, 1, 400);
	double loss_host = rate(LOSS5, 8, false, STUNE_GATE_GE, -2, 1, 400);
	double edge = rate(AT5, 8, true, STUNE_GATE_GE, 5, 1, 2000);
	printf("# waves of 8: no change %.1f %%, effect %.1f %%, 5 %% loss at -2 %%: selection %.1f %%, per host "
	       "%.1f %%; exactly +5 %%: %.1f %% of 2000\n",
	       none * 100, effect * 100, loss * 100, loss_host * 100, edge * 100);
	CHECK_MSG(edge <= 0.05 && edge >= 0.01, "exactly +5 %%: %.1f %% passed", edge * 100);
	CHECK_MSG(none <= 0.05, "no change: %.1f %% passed", none * 100);
	CHECK_MSG(effect >= 0.90, "effect: %.1f %% passed", effect * 100);
	CHECK_MSG(loss <= 0.05 && loss_host <= 0.05, "5 %% loss: %.1f %% / %.1f %% passed", loss * 100,
		  loss_host * 100);
}

CASE(four_waves, "rollouts of 4 waves of 8 hosts, each wave gated on its own hosts, stopping at the first failure: "
		 "with no change <= 5 % go past a gate at all, with a 5 % loss <= 5 %; with the effect >= 90 % "
		 "complete")
{
	/* Past the first gate: the error a rollout can make (a stopped rollout is never judged again). */
	double none = rate(SAME, 8, true, STUNE_GATE_GE, 5, 1, 400);
	double loss = rate(LOSS5, 8, true, STUNE_GATE_GE, -2, 1, 400);
	double complete = rate(EFFECT, 8, true, STUNE_GATE_GE, 5, 4, 200);
	double none4 = rate(SAME, 8, true, STUNE_GATE_GE, 5, 4, 200);
	printf("# 4 waves: no change past wave 1 %.1f %% (all 4: %.1f %%), 5 %% loss past wave 1 %.1f %%, the effect "
	       "through all 4: %.1f %%\n",
	       none * 100, none4 * 100, loss * 100, complete * 100);
	CHECK_MSG(none <= 0.05 && none4 <= none && loss <= 0.05, "no change %.1f %%, loss %.1f %%", none * 100,
		  loss * 100);
	CHECK_MSG(complete >= 0.90, "effect: %.1f %% completed", complete * 100);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
