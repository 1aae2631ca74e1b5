# Shared setup for the network-fault tests (source after the integration
# library): a network namespace $NS joined to this one by a veth pair,
# this end $SUB.1 (the servers), the namespace's $SUB.2 (the tool under
# test, run with `in_ns CMD...`), and the faults on the pair:
#   blackhole       every packet dropped, both ways (nftables)
#   loss PCT        that share of packets dropped, both ways (nftables)
#   netem ARGS...   tc netem both ways, where the kernel has sch_netem
#   heal            a clean path again
# Needs root; a test sourcing this as another user says SKIP and exits 0.
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: network faults need root (ip netns, nft)"
  exit 0
fi
NS=cdcnf$$
VH=nfh$$
VN=nfn$$
SUB=10.$((RANDOM % 200 + 20)).$((RANDOM % 250))
ip netns add "$NS"
at_exit "ip netns del $NS"
ip link add "$VH" type veth peer name "$VN"
at_exit "ip link del $VH"
ip link set "$VN" netns "$NS"
ip addr add "$SUB.1/30" dev "$VH"
ip link set "$VH" up
ip netns exec "$NS" ip addr add "$SUB.2/30" dev "$VN"
ip netns exec "$NS" ip link set "$VN" up
ip netns exec "$NS" ip link set lo up
nft add table inet "$NS"
at_exit "nft delete table inet $NS"
nft add chain inet "$NS" in "{ type filter hook input priority 0; }"
nft add chain inet "$NS" out "{ type filter hook output priority 0; }"

# (Start a background tool with `ip netns exec "$NS" TOOL &`, not through a
# function: $! must be the tool, for signals and its exit status.)
in_ns() { ip netns exec "$NS" "$@"; }
blackhole() {
  nft add rule inet "$NS" in iifname "$VH" drop
  nft add rule inet "$NS" out oifname "$VH" drop
}
loss() {
  nft add rule inet "$NS" in iifname "$VH" numgen random mod 100 "<" "$1" drop
  nft add rule inet "$NS" out oifname "$VH" numgen random mod 100 "<" "$1" drop
}
netem() {
  tc qdisc replace dev "$VH" root netem "$@" &&
    ip netns exec "$NS" tc qdisc replace dev "$VN" root netem "$@"
}
heal() {
  nft flush chain inet "$NS" in 2>/dev/null || true
  nft flush chain inet "$NS" out 2>/dev/null || true
  tc qdisc del dev "$VH" root 2>/dev/null || true
  ip netns exec "$NS" tc qdisc del dev "$VN" root 2>/dev/null || true
}
at_exit heal
# count PATTERN FILE: lines of FILE matching (0 when none).
count() { grep -c -- "$1" "$2" 2>/dev/null || true; }
# wait_more PATTERN FILE SECS BEFORE: until FILE has more than BEFORE
# matching lines; 1 after SECS.
wait_more() {
  local i
  for i in $(seq $(($3 * 10))); do
    [ "$(count "$1" "$2")" -gt "$4" ] && return 0
    sleep 0.1
  done
  return 1
}
