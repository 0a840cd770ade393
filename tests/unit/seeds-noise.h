/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fixed-seed simulations' noise, shared by test-rank.c and
 * test-gate.c (tests/README.md): a xorshift64* generator seeded with
 * SEEDS_NOISE_SEED (defined before this is included), normal variates by
 * Box-Muller, and a baseline run as the seeds saw them: 80 % near 6,660
 * KIOPS (1 %), 20 % dipping to 4,200-6,600.
 */
#pragma once

#include <math.h>
#include <stdint.h>

static uint64_t rng = SEEDS_NOISE_SEED;

/* Uniform on (0, 1). */
static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((double)((rng * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}

/* mean x (1 + N(0, rel_sd)). */
static double normal(double mean, double rel_sd)
{
	return mean * (1 + rel_sd * sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform()));
}

/* A baseline run of a host whose level is `level` x the seeds'. */
static double seed_run(double level)
{
	return level * (uniform() < 0.8 ? normal(6660, 0.01) : 4200 + 2400 * uniform());
}
