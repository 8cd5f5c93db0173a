#!/usr/bin/env bash
# sandnet-test: alone (it measures throughput, rates or memory: nothing beside it)
# datapath_tcp_loss.sh at 5 % loss: 64 MiB each way, sha256 compared, no
# checksum error at the peer, SACK recoveries in the stats.
LOSS_PCT=5 exec bash "$(dirname "${BASH_SOURCE[0]}")/datapath_tcp_loss.sh"
