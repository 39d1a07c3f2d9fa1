#!/usr/bin/env bash
# Runs shelldon's benchmarks and writes docs/PERFORMANCE.md (method, machine,
# figures). Figures are measured, never asserted in tests.
#
#   scripts/bench.sh        every benchmark but the soak (a few minutes); the
#                           soak's section of PERFORMANCE.md is kept as it is
#   scripts/bench.sh hostile  only the daemon's peak memory under providers
#                           sending replies at the caps (a few minutes);
#                           rewrites that section only
#   scripts/bench.sh soak   only the memory soak: SOAK_TURNS turns (default
#                           8000, about 5 minutes on a desktop core) through
#                           one daemon; rewrites the soak's section only
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/PERFORMANCE.md
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

# metric NAME UNIT: the value reported with that unit on the benchmark's line.
metric() {
  awk -v n="$1" -v u="$2" '$1 ~ "^"n"(-[0-9]+)?$" { for (i = 3; i < NF; i++) if ($(i+1) == u) print $i }' "$raw"
}

# splice NAME FILE: replace the NAME section of $out with FILE's (or append it).
splice() {
  if grep -q "<!-- $1:begin -->" "$out"; then
    awk -v f="$2" -v b="<!-- $1:begin -->" -v e="<!-- $1:end -->" '
      $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip' "$out" >"$out.tmp"
  else
    { cat "$out"; echo; cat "$2"; } >"$out.tmp"
  fi
  mv "$out.tmp" "$out"
}

# stat3 NAME UNIT: "median (min – max)" of the values over the runs.
stat3() {
  metric "$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { printf "%s (%s – %s)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

if [ "${1:-}" = hostile ]; then
  runs=${HOSTILE_RUNS:-3}
  go test -run '^$' -bench '^BenchmarkHostileRSS$' -benchtime 1x -count "$runs" -timeout 0 ./cmd/shelldon | grep '^Benchmark' >>"$raw"
  section=$(mktemp)
  trap 'rm -f "$raw" "$section"' EXIT
  cat >"$section" <<HOSTILE
<!-- hostile:begin -->
## Memory under hostile providers

Written by \`scripts/bench.sh hostile\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(go version | cut -d' ' -f3)).
Nothing here is asserted by the test suite. Target: the daemon under 100 MiB whatever a
provider sends.

Method: \`BenchmarkHostileRSS\` (\`cmd/shelldon/bench_hostile_test.go\`) starts one \`shelldon
serve\` per case (the real binary, \`agent.workers: 16\`, the maximum) against a provider on
127.0.0.1 whose every reply sits just under the caps, and runs 2 rounds of 16 turns at once
through \`POST /api/chat\`; it reports the daemon's \`VmHWM\` (peak resident memory, from
\`/proc/<pid>/status\`). ${runs} runs per case; median (min – max).

| every reply is | idle RSS | peak RSS |
|---|---|---|
| 1 MiB of text | $(stat3 BenchmarkHostileRSS/text idle-rss-MiB) MiB | $(stat3 BenchmarkHostileRSS/text peak-rss-MiB) MiB |
| control characters, 1 MiB once JSON-escaped | $(stat3 BenchmarkHostileRSS/control-text idle-rss-MiB) MiB | $(stat3 BenchmarkHostileRSS/control-text peak-rss-MiB) MiB |
| 1 MiB of tool-call arguments | $(stat3 BenchmarkHostileRSS/tool-args idle-rss-MiB) MiB | $(stat3 BenchmarkHostileRSS/tool-args peak-rss-MiB) MiB |

Before the text cap counted JSON-escaped bytes (\`provider.WireSize\`), a reply of 1 MiB of
control characters became a 6 MiB frame per turn and the same run peaked at 209 MiB.

\`\`\`
$(cat "$raw")
\`\`\`
<!-- hostile:end -->
HOSTILE
  splice hostile "$section"
  echo "wrote the hostile-provider section of $out"
  exit 0
fi

if [ "${1:-}" = soak ]; then
  turns=${SOAK_TURNS:-8000}
  started=$(date +%s)
  SHELLDON_SOAK_TURNS=$turns go test -run '^$' -bench '^BenchmarkSoakRSS$' -benchtime 1x -count 1 -timeout 0 ./cmd/shelldon | grep '^Benchmark' >>"$raw"
  took=$(( $(date +%s) - started ))
  section=$(mktemp)
  trap 'rm -f "$raw" "$section"' EXIT
  cat >"$section" <<SOAK
<!-- soak:begin -->
## Memory over many turns

Written by \`scripts/bench.sh soak\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(go version | cut -d' ' -f3)),
in $(( took / 60 )) min $(( took % 60 )) s. Nothing here is asserted by the test suite.

Method: \`BenchmarkSoakRSS\` (\`cmd/shelldon/bench_soak_test.go\`) starts one \`shelldon serve\`
(the real binary, its own memory limit, CGO off) against a scripted provider on 127.0.0.1
that answers every call at once, and sends it ${turns} turns through \`POST /api/chat\`, one
after another, over four chats (each turn a worker in the sandbox, one model call, history and
usage committed to SQLite). After each of the 21 turns ending at turn 200, and
after each of the 21 turns ending at turn ${turns}, it reads \`VmRSS\` and \`RssAnon\` of the
daemon from \`/proc/<pid>/status\`; the table gives the median of each set of 21 readings and
their range (min – max). The target is growth within 5 MiB.

| measure | at turn 200: median (min – max) | at turn ${turns}: median (min – max) | growth of the median |
|---|---|---|---|
| daemon VmRSS | $(metric BenchmarkSoakRSS VmRSS-early-p50-MB) ($(metric BenchmarkSoakRSS VmRSS-early-min-MB) – $(metric BenchmarkSoakRSS VmRSS-early-max-MB)) MB | $(metric BenchmarkSoakRSS VmRSS-late-p50-MB) ($(metric BenchmarkSoakRSS VmRSS-late-min-MB) – $(metric BenchmarkSoakRSS VmRSS-late-max-MB)) MB | $(metric BenchmarkSoakRSS VmRSS-growth-MB) MB |
| daemon RssAnon | $(metric BenchmarkSoakRSS RssAnon-early-p50-MB) ($(metric BenchmarkSoakRSS RssAnon-early-min-MB) – $(metric BenchmarkSoakRSS RssAnon-early-max-MB)) MB | $(metric BenchmarkSoakRSS RssAnon-late-p50-MB) ($(metric BenchmarkSoakRSS RssAnon-late-min-MB) – $(metric BenchmarkSoakRSS RssAnon-late-max-MB)) MB | $(metric BenchmarkSoakRSS RssAnon-growth-MB) MB |
| turn, request to reply, p50 / p99 over all turns | | $(metric BenchmarkSoakRSS p50-ms) / $(metric BenchmarkSoakRSS p99-ms) ms | |

\`\`\`
$(cat "$raw")
\`\`\`
<!-- soak:end -->
SOAK
  if grep -q '<!-- soak:begin -->' "$out"; then
    awk -v f="$section" '
      /<!-- soak:begin -->/ { while ((getline l < f) > 0) print l; skip = 1; next }
      /<!-- soak:end -->/ { skip = 0; next }
      !skip' "$out" >"$out.tmp"
  else
    { cat "$out"; echo; cat "$section"; } >"$out.tmp"
  fi
  mv "$out.tmp" "$out"
  echo "wrote the soak's section of $out (${turns} turns, ${took} s)"
  exit 0
fi

bench() { # name benchtime [package]
  go test -run '^$' -bench "^$1\$" -benchtime "$2" -count 1 "${3:-./cmd/shelldon}" | grep '^Benchmark' >>"$raw"
}
bench BenchmarkExecTrue 300x ./internal/sandbox
bench BenchmarkSandboxTrue 300x ./internal/sandbox
bench 'BenchmarkServeTurn/.*' 500x
bench 'BenchmarkDaemonIdleRSS/.*' 1x
bench BenchmarkVersionColdStart 100x
bench BenchmarkChatOneShot 50x
bench BenchmarkBinarySize 1x
bench 'BenchmarkGate/.*' 30x
bench 'BenchmarkTurnWithLiveTools/.*' 50x
bench BenchmarkSelfToolCall 50x

# ms NAME: the ns/op of the benchmark, in milliseconds.
ms() {
  awk -v n="$1" '$1 ~ "^"n"(-[0-9]+)?$" { printf "%.2f", $3 / 1e6 }' "$raw"
}

# The test command's section (scripts/testtime.sh), the soak's and the
# hostile providers' (scripts/bench.sh soak, hostile) are kept as they are.
kept=$(sed -n '/<!-- testtime:begin -->/,/<!-- testtime:end -->/p' "$out" 2>/dev/null || true)
soak=$(sed -n '/<!-- soak:begin -->/,/<!-- soak:end -->/p' "$out" 2>/dev/null || true)
hostile=$(sed -n '/<!-- hostile:begin -->/,/<!-- hostile:end -->/p' "$out" 2>/dev/null || true)

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
{
cat <<HDR
# shelldon performance

Written by \`scripts/bench.sh\` on $(date -u +%Y-%m-%d); rerun it to refresh. Nothing here is
asserted by the test suite.

## Machine

- CPU: ${cpu} ($(nproc) cores), RAM ${mem}
- Kernel: $(uname -r); $(go version | cut -d' ' -f3-)

## Method

All figures come from \`go test -bench\` in \`cmd/shelldon/bench_test.go\`, against the real
binary (built with CGO off) and a fake provider (\`internal/broker/brokertest\`, an HTTP server
on 127.0.0.1 that answers at once):

- **Per-turn overhead**: \`POST /api/chat\` to a running \`shelldon serve\`, from request to
  reply, 500 turns after one warm-up. Each turn spawns a worker process, makes one model call
  through the daemon over the frame pipe, and commits history and usage to SQLite. p50/p99 of
  the samples. The worker runs inside the sandbox (namespaces, mount view, rlimits, seccomp),
  in the sandbox helper's own process. Measured with \`agent.warm_worker\` on (the default: the
  turn is handed a worker started ahead, after the previous turn's, and the next one starts
  while the turn runs) and off (the turn starts its own), each with turns back to back and at
  a person's pace (20 ms, not timed, between a reply and the next message).
- **Sandbox cost**: \`/bin/true\` through the whole sandbox (helper start, user/mount/PID/net/IPC/UTS
  namespaces, the read-only mount view, rlimits, capabilities dropped, Landlock, seccomp, and
  teardown of the PID namespace) against a plain fork and exec of \`/bin/true\`, 300 runs each.
- **Daemon idle RSS**: \`VmRSS\` and \`RssAnon\` from \`/proc/<pid>/status\` of \`shelldon serve\`
  one second after start, and again one second after one turn, with \`agent.warm_worker\` on and
  off; with it on, also the same figures summed over the daemon's children (the worker started
  ahead, which starts after the first turn).
- **Cold start**: wall time of \`shelldon version\` as a new process, 100 runs.
- **One-shot chat**: wall time of \`shelldon chat -m hi\` (load config, open the store, one
  turn with a worker, exit), 50 runs; peak RSS is the process's \`ru_maxrss\`.
- **Binary size**: \`go build -trimpath -ldflags="-s -w"\` with \`CGO_ENABLED=0\`.
- **Memory over many turns**: \`scripts/bench.sh soak\`, in its own section below.

## Figures

| measure | figure | target |
|---|---|---|
| sandboxed \`/bin/true\` | $(ms BenchmarkSandboxTrue) ms | |
| plain exec of \`/bin/true\` | $(ms BenchmarkExecTrue) ms | |
| per-turn overhead p50 / p99, warm worker, person's pace | $(metric BenchmarkServeTurn/warm/paced p50-ms) / $(metric BenchmarkServeTurn/warm/paced p99-ms) ms | ≤ 6 ms p50 |
| per-turn overhead p50 / p99, warm worker, back to back | $(metric BenchmarkServeTurn/warm/back-to-back p50-ms) / $(metric BenchmarkServeTurn/warm/back-to-back p99-ms) ms | |
| per-turn overhead p50 / p99, no warm worker, person's pace | $(metric BenchmarkServeTurn/cold/paced p50-ms) / $(metric BenchmarkServeTurn/cold/paced p99-ms) ms | |
| per-turn overhead p50 / p99, no warm worker, back to back | $(metric BenchmarkServeTurn/cold/back-to-back p50-ms) / $(metric BenchmarkServeTurn/cold/back-to-back p99-ms) ms | |
| daemon idle VmRSS, warm worker on / off | $(metric BenchmarkDaemonIdleRSS/warm VmRSS-MB) / $(metric BenchmarkDaemonIdleRSS/cold VmRSS-MB) MB | ≤ 20 MB |
| daemon idle RssAnon, warm worker on / off | $(metric BenchmarkDaemonIdleRSS/warm RssAnon-MB) / $(metric BenchmarkDaemonIdleRSS/cold RssAnon-MB) MB | |
| daemon VmRSS after one turn, warm worker on / off | $(metric BenchmarkDaemonIdleRSS/warm VmRSS-after-turn-MB) / $(metric BenchmarkDaemonIdleRSS/cold VmRSS-after-turn-MB) MB | |
| daemon RssAnon after one turn, warm worker on / off | $(metric BenchmarkDaemonIdleRSS/warm RssAnon-after-turn-MB) / $(metric BenchmarkDaemonIdleRSS/cold RssAnon-after-turn-MB) MB | |
| the worker waiting after one turn (the daemon's children), VmRSS / RssAnon | $(metric BenchmarkDaemonIdleRSS/warm children-VmRSS-after-turn-MB) / $(metric BenchmarkDaemonIdleRSS/warm children-RssAnon-after-turn-MB) MB | |
| \`shelldon version\` cold start p50 / p99 | $(metric BenchmarkVersionColdStart p50-ms) / $(metric BenchmarkVersionColdStart p99-ms) ms | |
| \`shelldon chat -m\` wall p50 / p99 | $(metric BenchmarkChatOneShot p50-ms) / $(metric BenchmarkChatOneShot p99-ms) ms | |
| \`shelldon chat -m\` peak RSS | $(metric BenchmarkChatOneShot peak-RSS-MB) MB | |
| gate, Starlark p50 / p99 | $(metric BenchmarkGate/starlark p50-ms) / $(metric BenchmarkGate/starlark p99-ms) ms | |
| gate, Python p50 / p99 | $(metric BenchmarkGate/python p50-ms) / $(metric BenchmarkGate/python p99-ms) ms | |
| turn with 10 live tools p50 | $(metric BenchmarkTurnWithLiveTools/10 p50-ms) ms | |
| turn with 100 live tools p50 | $(metric BenchmarkTurnWithLiveTools/100 p50-ms) ms | |
| turn with 1,000 live tools p50 | $(metric BenchmarkTurnWithLiveTools/1000 p50-ms) ms | |
| one self-coded tool call p50 / p99 | $(metric BenchmarkSelfToolCall p50-ms) / $(metric BenchmarkSelfToolCall p99-ms) ms | |
| stripped binary, linux/amd64 | $(metric BenchmarkBinarySize linux-amd64-MB) MB | ≤ 20 MB |
| stripped binary, linux/arm64 | $(metric BenchmarkBinarySize linux-arm64-MB) MB | ≤ 20 MB |
| stripped binary, linux/armv7 | $(metric BenchmarkBinarySize linux-armv7-MB) MB | ≤ 20 MB |

Where the sandbox's time goes (the helper instrumented once, on this machine): starting the
helper process in new namespaces ≈ 4 ms (a Go binary's start, and the network namespace),
building the mount view ≈ 1.1 ms, rlimits, capabilities, Landlock and seccomp ≈ 0.7 ms, the
target itself and the PID namespace's teardown ≈ 1.5 ms. A turn's worker runs inside the
helper's own process (\`Policy.Mode\`), so a turn pays for one process start, not two.

These were measured on the machine above, not on a Raspberry Pi Zero 2W; expect the times to
be several times longer there (memory figures carry over closely).

## Raw output

\`\`\`
$(cat "$raw")
\`\`\`
HDR
if [ -n "$soak" ]; then
  echo
  echo "$soak"
fi
if [ -n "$hostile" ]; then
  echo
  echo "$hostile"
fi
if [ -n "$kept" ]; then
  echo
  echo "$kept"
fi
} >"$out"
echo "wrote $out"
