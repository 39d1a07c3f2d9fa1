#!/usr/bin/env bash
# Builds the release binaries: stripped, static (CGO_ENABLED=0), with the
# version and the git revision embedded, for the Linux machines shelldon
# runs on, and writes their SHA256SUMS. See usage below.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/release.sh [--allow-dirty] [--dry-run] [-o DIR] [VERSION]

Cross-builds stripped static shelldon binaries for linux/amd64, linux/arm64
(a 64-bit OS on a Raspberry Pi 3, 4, 5 or Zero 2 W), linux/armv7 (GOARM=7:
a 32-bit OS on a Pi 2 or later, the Zero 2 W included) and linux/armv6
(GOARM=6: Pi 1 and the first Zero), named
DIR/shelldon-VERSION-linux-ARCH, writes DIR/SHA256SUMS for them
(check with: cd DIR && sha256sum -c SHA256SUMS) and prints each file's size.

VERSION is the argument, else $VERSION, else `git describe --tags --always
--dirty`. Each binary holds it (`shelldon version` prints it) and the git
revision it was built from, which go build records from the checkout.

Options:
  --allow-dirty  build from a checkout with uncommitted changes or untracked
                 files; the version then ends in -dirty (unless given) and
                 `shelldon version` says "with uncommitted changes"
  -n, --dry-run  print the files it would build, and build nothing
  -o DIR         where to write (default: dist in the repository)
  -h, --help     show this help

Examples:
  scripts/release.sh                    # version from the latest tag
  scripts/release.sh v0.4.0
  VERSION=v0.4.0-rc1 scripts/release.sh -o /tmp/rel
EOF
}

die() { echo "release.sh: $*" >&2; exit 1; }
bad_usage() { echo "release.sh: $*" >&2; echo "Run 'scripts/release.sh -h' for usage." >&2; exit 2; }

allow_dirty=0
dry_run=0
out=
version=${VERSION:-}
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --allow-dirty) allow_dirty=1 ;;
    -n|--dry-run) dry_run=1 ;;
    -o) [ $# -ge 2 ] || bad_usage "-o needs a directory"; out=$2; shift ;;
    -o*) out=${1#-o} ;;
    --) shift; break ;;
    -*) bad_usage "unknown option $1" ;;
    *) break ;;
  esac
  shift
done
[ $# -le 1 ] || bad_usage "one VERSION at most, got: $*"
[ $# -eq 1 ] && version=$1

# Resolve -o before leaving the caller's directory.
case $out in
  "") ;;
  /*) ;;
  *) out=$PWD/$out ;;
esac
cd "$(dirname "$0")/.."
out=${out:-$PWD/dist}

command -v go >/dev/null || die "go is not on PATH"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  die "$PWD is not a git checkout: a release records the revision it was built from"

# Go marks a build modified (vcs.modified) when `git status --porcelain`
# lists anything, untracked files included; refuse on the same test.
changes=$(git status --porcelain)
if [ -n "$changes" ] && [ "$allow_dirty" = 0 ]; then
  echo "release.sh: the checkout has uncommitted changes or untracked files:" >&2
  head -n 20 <<<"$changes" >&2
  die "commit or remove them, or pass --allow-dirty (the release is then marked dirty)"
fi
if [ -z "$version" ]; then
  version=$(git describe --tags --always --dirty)
  if [ -n "$changes" ] && [[ $version != *-dirty ]]; then
    version+=-dirty # untracked files, which git describe does not count
  fi
fi
# The version goes into file names and -ldflags: one word, no path.
if ! [[ $version =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$ ]]; then
  bad_usage "version $(printf %q "$version") is not a version: letters, digits, . _ + - (64 at most), starting with a letter or digit"
fi

# name GOARCH GOARM
targets=(
  "amd64 amd64 "
  "arm64 arm64 "
  "armv7 arm 7"
  "armv6 arm 6"
)

if [ "$dry_run" = 1 ]; then
  for t in "${targets[@]}"; do
    read -r name goarch goarm <<<"$t"
    echo "$out/shelldon-$version-linux-$name"
  done
  echo "$out/SHA256SUMS"
  exit 0
fi

mkdir -p -- "$out"
stage=$(mktemp -d "$out/.release.XXXXXX")
trap 'rm -rf -- "$stage"' EXIT

ldflags="-s -w -X github.com/shelldon/shelldon/internal/app.Version=$version"
files=()
for t in "${targets[@]}"; do
  read -r name goarch goarm <<<"$t"
  file=shelldon-$version-linux-$name
  echo "building $file" >&2
  # -buildvcs=true: fail rather than ship a binary without its revision.
  env CGO_ENABLED=0 GOOS=linux GOARCH="$goarch" GOARM="$goarm" \
    go build -trimpath -buildvcs=true -ldflags="$ldflags" -o "$stage/$file" ./cmd/shelldon
  files+=("$file")
done

(cd "$stage" && sha256sum -- "${files[@]}" >SHA256SUMS)
# Move into place only once everything is built: an interrupted run
# leaves the previous release whole.
for f in "${files[@]}" SHA256SUMS; do
  mv -f -- "$stage/$f" "$out/$f"
done

echo "shelldon $version ($(git rev-parse HEAD)$([ -n "$changes" ] && echo ", with uncommitted changes")) in $out:"
for f in "${files[@]}" SHA256SUMS; do
  size=$(stat -c %s -- "$out/$f")
  awk -v f="$f" -v s="$size" 'BEGIN { printf "  %-44s %10d bytes  %5.1f MiB\n", f, s, s / 1048576 }'
done
