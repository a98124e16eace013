#!/bin/sh
# test_exports.sh: a model .so exports only its entry (STYLE R5), needs no
# library beyond libc, libm, pthreads and libdl, and the runtime's sources
# include nothing from the compiler.
# Ends with "test_exports: N passed, N failed".
builddir=${MLC_BUILDDIR:-.}
srcdir=${MLC_SRCDIR:-.}
so="$builddir/tests/runtime/.libs/libtoy_model.so"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }

if [ ! -f "$so" ]; then
  bad "model .so exists ($so)"
  echo "test_exports: $pass passed, $fail failed"
  exit 1
fi
ok "model .so exists"

# Defined global dynamic symbols (types in upper case; weak 'W'/'V' count too).
syms=$(nm -D --defined-only "$so" | awk 'NF >= 3 && $2 ~ /^[A-Z]$/ { print $3 }' | sort -u)
if [ "$syms" = "mlc_model_entry_v1" ]; then
  ok "exports only mlc_model_entry_v1"
else
  bad "exports only mlc_model_entry_v1; found:"
  echo "$syms" | sed 's/^/    /'
fi

# No runtime-internal or generated name leaks as a dynamic symbol.
if nm -D "$so" | grep -E ' [A-Za-z] (mlc_rt_|mlc_model_desc|fused_|toy_)' >/dev/null; then
  bad "no internal symbol in the dynamic table"
else
  ok "no internal symbol in the dynamic table"
fi

# Needed libraries: libc, libm, pthreads, libdl (and sanitizer runtimes).
needed=$(objdump -p "$so" | awk '$1 == "NEEDED" { print $2 }')
extra=$(echo "$needed" | grep -vE '^(libc|libm|libpthread|libdl|libasan|libubsan|libgcc_s|ld-linux[-a-z0-9_]*)\.so' || true)
if [ -z "$extra" ]; then
  ok "needs only libc/libm/pthreads/libdl"
else
  bad "needs only libc/libm/pthreads/libdl; also: $extra"
fi

# runtime/ includes nothing from the compiler.
leaks=$(grep -n '^#include "' "$srcdir"/runtime/*.c "$srcdir"/runtime/*.h |
  grep -vE '#include "(config\.h|runtime/rt_[a-z]+\.(h|def)|mlc/mlc_runtime\.h|mlc/mlc_extern\.h)"' || true)
if [ -z "$leaks" ]; then
  ok "runtime/ includes only runtime/, mlc/mlc_runtime.h and mlc/mlc_extern.h"
else
  bad "runtime/ includes only runtime/, mlc/mlc_runtime.h and mlc/mlc_extern.h:"
  echo "$leaks" | sed 's/^/    /'
fi

echo "test_exports: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
