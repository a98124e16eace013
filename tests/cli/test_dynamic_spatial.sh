#!/bin/sh
# test_dynamic_spatial.sh: models whose spatial or time extents are
# symbolic (tests/dynamic_spatial: a torchvision SqueezeNet with dynamic N,
# H, W; a 1-d conv audio net with reflect padding and a dynamic length; a
# transformer encoder layer with a dynamic batch and sequence length, whose
# reshape targets are computed from shapes; slices and resizes by constant
# scales of a dynamic T, H and W),
# each compiled once and run at three sizes against ONNX Runtime's outputs;
# inputs too small for a kernel or a reflect pad refused with the node
# named; compile --input-shape (specialized or renamed) and --shape-bound
# (the arena planned for the bounds, larger inputs refused).
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
dir=$src/tests/dynamic_spatial
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
have_numpy() { "$py" -c 'import numpy' 2>/dev/null; }
close() { # close OUT.npy REF.npy: rtol 1e-3, atol 1e-4
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-3,atol=1e-4) else 1)' "$1" "$2"
}

for m in squeezenet audio encoder slice1d resize2d; do
  check "compile $m" "$cli" compile "$dir/$m.onnx" -o "$tmp/$m.so" --no-header
  [ "$m" = slice1d ] || { grep -q 'arena depends on input' "$tmp/err" && ok ||
    fail "compile $m: the arena should depend on the input dims"; }
  for in0 in "$dir/$m".*.input_0.npy; do
    base=${in0%.input_0.npy}
    size=${base##*.}
    rm -rf "$tmp/o"
    check "run $m at $size" "$cli" run "$tmp/$m.so" --input "$in0" --output-dir "$tmp/o"
    if have_numpy; then
      for ref in "$base".output_*.npy; do
        out=$tmp/o/${ref##*.output_}
        out=$tmp/o/output_${out##*/}
        close "$out" "$ref" && ok || fail "$m at $size: ${ref##*/} differs from ONNX Runtime's"
      done
    fi
  done
done

# the encoder's reshapes resolve to symbolic dims: no dims computed at run time
check "inspect encoder" "$cli" inspect "$tmp/encoder.so"
grep -q 'symbolic dims: N T ' "$tmp/out" && ! grep -q 'define_dims' "$tmp/out" && ok ||
  fail "encoder: reshapes not resolved when compiling: $(grep -E 'symbolic dims|define_dims' "$tmp/out" | head -3)"

# the symbolic output dims are named in inspect
check "inspect audio" "$cli" inspect "$tmp/audio.so"
grep -q 'symbolic dims: N T' "$tmp/out" && ok || fail "inspect audio: no symbolic dims"

# slices and resizes of symbolic extents: derived symbols, no run-time shape steps
for m in slice1d resize2d; do
  check "inspect $m" "$cli" inspect "$tmp/$m.so"
  grep -q 'run-time shape steps' "$tmp/out" && fail "$m: run-time shape steps" || ok
done
"$cli" inspect "$tmp/slice1d.so" >"$tmp/out" 2>&1
for want in 'y0: float32 (N, 2, max(T-2, 0))' 'y1: float32 (N, 2, (T+1)//2)' 'y2: float32 (N, 2, min(T, 3))' \
            'y3: float32 (N, 2, T)' 'u_nearest: float32 (N, 2, T\*2)'; do
  grep -q "$want" "$tmp/out" && ok || fail "inspect slice1d: no \"$want\""
done
"$cli" inspect "$tmp/resize2d.so" >"$tmp/out" 2>&1
for want in 'r1: float32 (1, 4, H\*2, W\*2)' 'r2: float32 (1, 4, H//2, W//2)' 'r3: float32 (1, 4, H\*3//2, W\*3//2)' \
            'r_sizes: float32 (1, 4, 12, 10)' 's: float32 (1, 4, max(H-2, 0), (W+1)//2)'; do
  grep -q "$want" "$tmp/out" && ok || fail "inspect resize2d: no \"$want\""
done

# inputs too small: a clear error naming the node, never a crash
if have_numpy; then
  "$py" -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((1, 3, 8, 8), np.float32)); np.save(sys.argv[2], np.zeros((1, 1, 3), np.float32))' \
    "$tmp/small.npy" "$tmp/short.npy"
  "$cli" run "$tmp/squeezenet.so" --input "$tmp/small.npy" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q 'MaxPool.*smaller than the kernel' "$tmp/err" && ok ||
    fail "squeezenet 8x8: exit $rc, $(cat "$tmp/err")"
  "$cli" run "$tmp/audio.so" --input "$tmp/short.npy" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q 'node "/c1/Pad" (Pad, opset 13): axis 2: reflect pads 4, 4 need an extent of at least 5' "$tmp/err" && ok ||
    fail "audio T=3: exit $rc, $(cat "$tmp/err")"
fi

# --input-shape: specialized to one shape (a static arena), or some dims renamed
sq=$dir/squeezenet
check "compile --input-shape static" "$cli" compile "$sq.onnx" -o "$tmp/pin.so" --no-header --input-shape x=1x3x97x131
grep -q 'arena [0-9]* bytes' "$tmp/err" && ok || fail "pinned: the arena should be static"
rm -rf "$tmp/o"
check "run pinned" "$cli" run "$tmp/pin.so" --input "$sq.1x3x97x131.input_0.npy" --output-dir "$tmp/o"
have_numpy && { close "$tmp/o/output_0.npy" "$sq.1x3x97x131.output_0.npy" && ok || fail "pinned: output differs"; }
"$cli" run "$tmp/pin.so" --input "$sq.1x3x224x224.input_0.npy" >"$tmp/out" 2>"$tmp/err" && fail "pinned: another shape ran" || ok
check "compile --input-shape named" "$cli" compile "$sq.onnx" -o "$tmp/named.so" --no-header --input-shape x=1x3xheightxwidth
check "inspect named" "$cli" inspect "$tmp/named.so"
grep -q 'x: float32 (1, 3, height, width)' "$tmp/out" && ok || fail "named: $(grep 'x:' "$tmp/out")"
for bad in "x=1x4x224x224:is 3 in the model, not 4" "y=1x3x2x2:no input \"y\"" "x=1x3x224:has rank 4" \
           "x=1x3x2q:neither an extent nor a symbol name" "x:expected NAME=DIMS"; do
  "$cli" compile "$sq.onnx" -o "$tmp/bad.so" --input-shape "${bad%%:*}" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -ne 0 ] && grep -q -- "${bad#*:}" "$tmp/err" && ok || fail "--input-shape ${bad%%:*}: exit $rc, $(cat "$tmp/err")"
done

# --shape-bound: the arena planned for the bounds, larger inputs refused
check "compile --shape-bound" "$cli" compile "$sq.onnx" -o "$tmp/bound.so" --no-header --shape-bound N=2,H=240,W=240
grep -q 'arena [0-9]* bytes at the shape bounds' "$tmp/err" && ok || fail "bounded: $(tail -1 "$tmp/err")"
for size in 1x3x224x224 2x3x64x96; do
  rm -rf "$tmp/o"
  check "run bounded $size" "$cli" run "$tmp/bound.so" --input "$sq.$size.input_0.npy" --output-dir "$tmp/o"
  have_numpy && { close "$tmp/o/output_0.npy" "$sq.$size.output_0.npy" && ok || fail "bounded $size: output differs"; }
done
if have_numpy; then
  "$py" -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((1, 3, 250, 64), np.float32))' "$tmp/tall.npy"
  "$cli" run "$tmp/bound.so" --input "$tmp/tall.npy" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q 'dim 2 ("H") is 250, above its bound 240' "$tmp/err" && ok || fail "bound: exit $rc, $(cat "$tmp/err")"
fi
"$cli" compile "$sq.onnx" -o "$tmp/bad.so" --shape-bound Q=3 >"$tmp/out" 2>"$tmp/err"
grep -q 'no symbolic dim "Q" (its symbolic dims: "N", "H", "W")' "$tmp/err" && ok || fail "--shape-bound Q: $(cat "$tmp/err")"

echo "test_dynamic_spatial: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
