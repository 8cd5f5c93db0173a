// SPDX-License-Identifier: MIT
/*
 * cpus.c - how many CPUs this process may run on (cpus.h)
 */
#include <errno.h>
#include <sched.h>

#include "common/cpus.h"

/**
 * cpus_allowed() - the CPUs in this process's affinity mask
 * @most:	the largest count to return (1 or more)
 *
 * Return: 1..@most, or -errno when the mask cannot be read.
 */
int cpus_allowed(unsigned int most)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	n = CPU_COUNT(&set);
	if (n < 1)
		return 1;
	return (unsigned int)n > most ? (int)most : n;
}
