#!/usr/bin/env python3
"""`datapath stats --json` as the tests read it, whatever the shard count.

With shards, the top level of the stats is shard 0's and each entry of
"shards" has the same sections for another shard (docs/datapath.md). A test
that counts what the container did must count every shard, so this sums them:
every counter of the top level gets the same counter of each other shard
added, lists of services entry by entry, lists of pairs and sockets one
after another. What describes rather than counts
(a link's mtu, a cap's size per flow table) is left as shard 0 has it, and
a high-water mark (the largest frame sent) is the highest of them.

  dpstats.py sum          the summed stats, as JSON
  dpstats.py eval EXPR    EXPR in Python, with d the summed stats and raw
                          the stats as the datapath printed them
"""
import json
import sys

# numbers that describe, not count: the same on every shard
KEEP = {"ifindex", "mtu", "gso_max_size", "gso_ipv4_max_size", "channels",
        "flows_max", "flows_per_source_max", "pid", "n_shards", "shard",
        "age_ms", "uptime_ms", "uptime_s", "port", "remote_port", "budget_us"}
# high-water marks: the highest of any shard
PEAK = {"tx_max_frame", "tx_queue_max", "most_held"}
# sections of the top level that are already totals, or the process's own
SKIP = {"shards", "totals", "policy", "supervisor", "neighbours"}
# lists of things each shard has its own of: every shard's, one after another
CONCAT = {"pairs", "udp_sockets", "tcp_connections"}


def add(into, other, top=False):
    for key, value in other.items():
        if (top and key in SKIP) or key in KEEP or key not in into:
            continue
        mine = into[key]
        if key in CONCAT and isinstance(mine, list) and isinstance(value, list):
            mine.extend(value)
            continue
        if isinstance(mine, bool) or isinstance(value, bool):
            continue
        if isinstance(mine, int) and isinstance(value, int):
            into[key] = max(mine, value) if key in PEAK else mine + value
        elif isinstance(mine, dict) and isinstance(value, dict):
            add(mine, value)
        elif (isinstance(mine, list) and isinstance(value, list)
              and len(mine) == len(value)
              and all(isinstance(x, dict) for x in mine + value)):
            for a, b in zip(mine, value):
                add(a, b)


def summed(raw):
    d = json.loads(json.dumps(raw))
    for shard in raw.get("shards", []):
        add(d, shard, top=True)
    return d


def main():
    raw = json.load(sys.stdin)
    if len(sys.argv) == 2 and sys.argv[1] == "sum":
        json.dump(summed(raw), sys.stdout)
        print()
    elif len(sys.argv) == 3 and sys.argv[1] == "eval":
        print(eval(sys.argv[2], {"d": summed(raw), "raw": raw}))
    else:
        sys.exit("usage: dpstats.py sum | eval EXPR")


if __name__ == "__main__":
    main()
