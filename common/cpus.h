/* SPDX-License-Identifier: MIT */
/*
 * cpus.h - how many CPUs this process may run on
 *
 * `--shards auto` means one shard per CPU, in netsetup and in the datapath
 * alike: the CPUs of the process's affinity (sched_getaffinity()), not the
 * host's, so that a datapath its runtime pinned (taskset, a cpuset) asks for
 * what it was given. One function, so that both programs count the same.
 */
#ifndef SANDNET_COMMON_CPUS_H
#define SANDNET_COMMON_CPUS_H

int cpus_allowed(unsigned int most);

#endif /* SANDNET_COMMON_CPUS_H */
