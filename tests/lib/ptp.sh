# Sourced by tests that need a container network as Debian's CNI ptp plugin
# makes it (after common.sh and netsetup.sh):
#
#   ptp_up TAG SECOND_OCTET   namespaces "host" and "ct", ptp ADD with a
#                             host-local subnet 10.SECOND_OCTET.X.0/24 of
#                             the test's own (DEL on exit); sets HOSTNS, CT,
#                             NSP (/run/netns path of ct), CID, CT_IP, GW
#                             and waits until eth0's addresses settled
#   ptp CMD                   one ptp call (ADD, DEL, CHECK) as a runtime makes it
CNI_DIR=/usr/lib/cni
[ -x "$CNI_DIR/ptp" ] && [ -x "$CNI_DIR/host-local" ] || sn_skip "no CNI ptp/host-local in $CNI_DIR"

ptp() {
	ip netns exec "$HOSTNS" env CNI_COMMAND="$1" CNI_CONTAINERID="$CID" CNI_NETNS="$NSP" \
		CNI_IFNAME=eth0 CNI_PATH="$CNI_DIR" "$CNI_DIR/ptp" <"$SN_TMP/ptp.json"
}

ptp_up() {
	local tag=$1 octet=$2
	sn_netns_add host
	sn_netns_add ct
	HOSTNS=$(sn_ns host)
	CT=$(sn_ns ct)
	NSP=$(ns_path ct)
	CID=sn$$$tag
	mkdir -p "$SN_TMP/ipam"
	cat >"$SN_TMP/ptp.json" <<JSON
{ "cniVersion": "1.0.0", "name": "sandnet-$tag-$$", "type": "ptp", "ipMasq": false, "mtu": 1500,
  "ipam": { "type": "host-local", "subnet": "10.$octet.$(($$ % 250)).0/24", "dataDir": "$SN_TMP/ipam",
            "routes": [ { "dst": "0.0.0.0/0" } ] } }
JSON
	sn_on_exit "ptp DEL"
	ptp ADD >"$SN_TMP/ptp-result.json" || sn_fail "ptp ADD: $(cat "$SN_TMP/ptp-result.json")"
	read -r CT_IP GW < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["ips"][0]["address"].split("/")[0], r["ips"][0]["gateway"])' "$SN_TMP/ptp-result.json")
	sn_wait_for 10 sh -c "ip -n '$CT' -6 addr show dev eth0 scope link | grep -q inet6" ||
		sn_fail "no IPv6 link-local on eth0"
	ns_settle "$CT"
}
