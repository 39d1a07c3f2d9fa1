#!/usr/bin/env bash
# Times the README's everyday test command (go test -race ./...), uncached
# (-count=1) with a warm build cache, RUNS times (default 3), and writes the
# figures into the "The test command" section of docs/PERFORMANCE.md (kept
# across scripts/bench.sh runs). With a revision as $1, it times that
# revision too, in a temporary worktree, alternating with this tree, so both
# see the same machine. Run it on an idle machine: it measures wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
base=${1:-}
out=docs/PERFORMANCE.md
begin='<!-- testtime:begin -->'
end='<!-- testtime:end -->'

trees=(".")
if [ -n "$base" ]; then
  wt=$(mktemp -d)
  git worktree add -q --detach "$wt" "$base"
  trap 'git worktree remove --force "$wt"' EXIT
  trees=("$wt" ".")
fi

declare -A times
for tree in "${trees[@]}"; do # warm the build cache of each tree
  (cd "$tree" && go test -race -count=1 -run '^$' ./... >/dev/null)
done
for i in $(seq "$runs"); do
  for tree in "${trees[@]}"; do
    s=$(date +%s.%N)
    (cd "$tree" && go test -race -count=1 ./... >/dev/null)
    e=$(date +%s.%N)
    times[$tree]+="$(echo "$e - $s" | bc) "
  done
done

# stats "t1 t2 ...": median and range, in seconds.
stats() {
  tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.0f s (range %.0f-%.0f s, %d runs)", m, v[1], v[NR], NR }'
}

section=$(mktemp)
{
  echo "$begin"
  echo "## The test command"
  echo
  echo "Written by \`scripts/testtime.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores: wall time of the"
  echo "README's \`go test -race ./...\`, uncached (\`-count=1\`) with a warm build cache, alternating"
  echo "trees run by run on an otherwise idle machine; median and range."
  echo
  echo "| tree | time |"
  echo "|---|---|"
  if [ -n "$base" ]; then
    echo "| $(git rev-parse --short "$base") (before) | $(stats "${times[$wt]}") |"
  fi
  echo "| $(git rev-parse --short HEAD)$( [ -n "$(git status --porcelain)" ] && echo ' + uncommitted changes') | $(stats "${times[.]}") |"
  echo "$end"
} >"$section"

if grep -q "$begin" "$out"; then
  awk -v b="$begin" -v e="$end" -v f="$section" '
    $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
    $0 == e { skip = 0; next }
    !skip' "$out" >"$out.new"
else
  { cat "$out"; echo; cat "$section"; } >"$out.new"
fi
mv "$out.new" "$out"
rm -f "$section"
cat "$out" | sed -n "/$begin/,/$end/p"
