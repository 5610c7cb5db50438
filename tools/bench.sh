#!/usr/bin/env bash
# Side-by-side token-generation speed: llama.cpp (built natively, the way its
# users build it) against the SSNAIL core emulator (`ssnail bench`), on
# SmolLM2-135M with every tensor at Q4_0, 1 and 2 threads, interleaved rounds.
# Not a test: the figures depend on the machine and on its load.
#
#   tools/bench.sh [ROUNDS]        (make bench [ROUNDS=n]; default 3 rounds)
#   tools/bench.sh --build-only    only build llama.cpp's tools into the cache
#
# BENCH_IDLE=S: before each measurement wait (at most S seconds) until every
# core has been at least 85% idle for a second, as the figures in
# docs/FINDINGS.md were taken; the table says how many measurements gave up.
#
# Once, into the git-ignored cache (default ./cache, or $SSNAIL_CACHE):
#   cache/llama.cpp-build/   llama-bench and llama-quantize from the llama.cpp
#                            sources in the llama-cpp-python==0.3.36 sdist that
#                            tools/fetch-testdata.sh downloads (cmake
#                            -DGGML_NATIVE=ON, Release, CPU only; ~10 min on 2 cores)
#   cache/bench/smol-q4_0-pure.gguf     llama-quantize --allow-requantize --pure ... Q4_0
#   cache/bench/smol-q4_0-pure.ssnail   ssnail convert ... --wtype keep --mem-mb 128 --ctx 64
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SSNAIL_CACHE:-$here/cache}
src=$cache/llama.cpp-src
build=$cache/llama.cpp-build
work=$cache/bench
version=0.3.36
sdist=$cache/pypi/llama_cpp_python-$version.tar.gz
jobs=$(nproc)

build_llama() {
  if [ -x "$build/bin/llama-bench" ] && [ -x "$build/bin/llama-quantize" ] &&
    [ "$(cat "$build/.sdist" 2>/dev/null)" = "$version" ]; then
    return
  fi
  command -v cmake >/dev/null && command -v g++ >/dev/null || "$here/tools/install-deps.sh"
  [ -f "$sdist" ] || "$here/tools/fetch-testdata.sh"
  echo "bench: building llama.cpp (llama-cpp-python==$version) natively into $build" >&2
  rm -rf "$src.tmp" && mkdir -p "$src.tmp"
  tar xzf "$sdist" -C "$src.tmp" --strip-components=3 "llama_cpp_python-$version/vendor/llama.cpp"
  rm -rf "$src" && mv "$src.tmp" "$src"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=ON \
    -DGGML_METAL=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_OPENMP=ON >"$build.log" 2>&1 ||
    { tail -20 "$build.log" >&2; exit 1; }
  cmake --build "$build" -j "$jobs" --target llama-bench llama-quantize >>"$build.log" 2>&1 ||
    { tail -20 "$build.log" >&2; exit 1; }
  echo "$version" >"$build/.sdist"
}

if [ "${1:-}" = "--build-only" ]; then
  build_llama
  exit 0
fi

rounds=${1:-3}
case $rounds in '' | *[!0-9]* | 0)
  echo "usage: tools/bench.sh [ROUNDS] | --build-only" >&2
  exit 2
  ;;
esac
build_llama
q41=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$q41" ] || "$here/tools/fetch-testdata.sh"
ssnail=${SSNAIL:-$here/target/release/ssnail}
(cd "$here" && cargo build --release -q -p ssnail)
mkdir -p "$work"
gguf=$work/smol-q4_0-pure.gguf
image=$work/smol-q4_0-pure.ssnail
if [ ! -f "$gguf" ]; then
  "$build/bin/llama-quantize" --allow-requantize --pure "$q41" "$gguf.tmp" Q4_0 >"$work/quantize.log" 2>&1 ||
    { tail -5 "$work/quantize.log" >&2; exit 1; }
  mv "$gguf.tmp" "$gguf"
fi
if [ ! -f "$image" ] || [ "$image" -ot "$ssnail" ]; then
  "$ssnail" convert "$gguf" -o "$image" --wtype keep --mem-mb 128 --ctx 64 >"$work/convert.log"
fi

threads=(1 2)
[ "$(nproc)" -ge 2 ] || threads=(1)
results=$work/results.txt
# One run at a time: two would load each other and share the results file.
exec 9>"$work/.lock"
flock -n 9 || { echo "bench: another tools/bench.sh is running" >&2; exit 1; }
: >"$results"
# llama.cpp's tg32: the mean of 3 repetitions per round (llama-bench -r 3).
llama() { # threads
  "$build/bin/llama-bench" -m "$gguf" -p 0 -n 32 -t "$1" -r 3 -o csv 2>/dev/null |
    python3 -c 'import csv, sys; print(*[r["avg_ts"] for r in csv.DictReader(sys.stdin)])'
}
ours() { # numerics threads
  "$ssnail" bench "$image" --positions 32 --numerics "$1" --threads "$2" |
    awk -v m="$1" '$1 == m { print $3 }'
}
load() { cut -d' ' -f1 /proc/loadavg; }
busy=0
idle_wait() { # BENCH_IDLE seconds at most
  local deadline=$((SECONDS + ${BENCH_IDLE:-0}))
  [ "${BENCH_IDLE:-0}" -gt 0 ] || return 0
  while [ $SECONDS -lt $deadline ]; do
    # Per-core idle share over one second, from /proc/stat (idle + iowait).
    if python3 -c '
import time
def snap():
    return [list(map(int, l.split()[1:])) for l in open("/proc/stat") if l.startswith("cpu") and l[3] != " "]
a = snap(); time.sleep(1); b = snap()
ok = all((y[3] + y[4] - x[3] - x[4]) >= 0.85 * (sum(y) - sum(x)) for x, y in zip(a, b))
raise SystemExit(0 if ok else 1)'; then
      return 0
    fi
  done
  busy=$((busy + 1))
}
echo "bench: $rounds interleaved rounds (load average before: $(load))" >&2
for r in $(seq "$rounds"); do
  for t in "${threads[@]}"; do
    idle_wait
    echo "llama.cpp $t $(llama "$t")" >>"$results"
    idle_wait
    echo "hardware $t $(ours hardware "$t")" >>"$results"
    idle_wait
    echo "float $t $(ours float "$t")" >>"$results"
  done
  echo "bench: round $r/$rounds done (load average $(load))" >&2
done
# Read bandwidth on 1 and all cores ("read-bandwidth THREADS GB/s" lines).
bw=$("$ssnail" bench --read-bandwidth | awk '$1 == "read-bandwidth" { printf "%s %s ", $2, $3 }')
mbtok=$("$ssnail" bench "$image" --positions 32 --numerics hardware --threads 1 |
  awk '$1 == "hardware" { print $4 }')

echo
echo "SmolLM2-135M-Instruct, every tensor Q4_0 ($(basename "$gguf")), token generation, 32 positions"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; flags: $(
  grep -m1 -o -w -E 'avx512_vnni|avx_vnni' /proc/cpuinfo || true) $(
  grep -m1 -o -w -E 'avx512bw' /proc/cpuinfo || true) $(grep -m1 -o -w avx2 /proc/cpuinfo || true)"
echo "load average after: $(load)$([ "${BENCH_IDLE:-0}" -gt 0 ] && echo "; $busy measurements started without an idle second")"
awk -v bw="$bw" -v mbtok="$mbtok" '
  { v[$1 " " $2] = v[$1 " " $2] " " $3 }
  function stats(key, out,   a, n, i, j, t) {
    n = split(v[key], a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    out["min"] = a[1]; out["max"] = a[n]
    out["med"] = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    return n
  }
  END {
    printf "%-34s %7s %8s %8s %8s %12s\n", "tok/s (rounds)", "threads", "min", "median", "max", "vs llama.cpp"
    nt = split("1 2", ts, " ")
    nm = split("llama.cpp hardware float", ms, " ")
    for (mi = 1; mi <= nm; mi++) for (ti = 1; ti <= nt; ti++) {
      k = ms[mi] " " ts[ti]
      if (!(k in v)) continue
      stats(k, s); stats("llama.cpp " ts[ti], l)
      name = ms[mi] == "llama.cpp" ? "llama.cpp llama-bench tg32" : "ssnail bench, " ms[mi] " numerics"
      ratio = ms[mi] == "llama.cpp" ? "" : sprintf("%.2fx", s["med"] / l["med"])
      printf "%-34s %7s %8.1f %8.1f %8.1f %12s\n", name, ts[ti], s["min"], s["med"], s["max"], ratio
    }
    nb = split(bw, b, " ")
    for (i = 1; i + 1 <= nb; i += 2)
      printf "ceiling, %d thread(s): %.1f GB/s read / %.1f MB per token = %.0f tok/s\n", b[i], b[i + 1], mbtok, b[i + 1] * 1000 / mbtok
  }' "$results"
echo "(ratio: median over median; raw figures in $results)"
