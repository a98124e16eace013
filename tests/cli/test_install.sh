#!/bin/sh
# test_install.sh: `make install` into a staging directory (DESTDIR) puts the
# programs, the headers, the loader libmlcload (shared and static), the
# compiler library and the pkg-config files mlc.pc and mlc-runtime.pc where
# configure said; libmlcload.so exports the MLC_API functions of
# mlc/mlc_runtime.h and nothing else; the installed mlc-run (and mlc-serve
# when it is built) is one executable that needs no library of mlc-onnx.
# A program built against the staged tree with `pkg-config --cflags --libs
# mlc-runtime` alone (tests/cli/install_app.c: as C, linked to libmlcload.so
# and, with --static, to libmlcload.a; as C++ when g++ is there) runs a model
# compiled from models/mlp.onnx by the built mlc-onnx and gives ONNX
# Runtime's output; one built with mlc.pc calls the installed libmlc.
# Env (set by make check): MLC_CLI (the built mlc-onnx), MLC_SRCDIR,
# MLC_BUILDDIR, MLC_MAKE, MLC_BINDIR, MLC_LIBDIR, MLC_INCLUDEDIR,
# MLC_PKGCONFIGDIR (the configured directories), MLC_TEST_CC and
# MLC_TEST_SAN_CFLAGS (the compiler and sanitizer flags of the build);
# CXX (default g++), PKG_CONFIG (default pkg-config).
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
build=${MLC_BUILDDIR:?}
make=${MLC_MAKE:-make}
bindir=${MLC_BINDIR:?}
libdir=${MLC_LIBDIR:?}
includedir=${MLC_INCLUDEDIR:?}
pcdir=${MLC_PKGCONFIGDIR:-$libdir/pkgconfig}
cc=${MLC_TEST_CC:-cc}
san=${MLC_TEST_SAN_CFLAGS:-}
cxx=${CXX:-g++}
pkgconf=${PKG_CONFIG:-pkg-config}
models=$src/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -20 "$tmp/err"; fi; }
finish() { echo "test_install: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
# needed FILE: the libraries FILE names as NEEDED, one a line
needed() { objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'; }
is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

command -v "$pkgconf" >/dev/null 2>&1 || { echo "test_install: SKIP: no $pkgconf"; exit 77; }

# ---- make install DESTDIR=... -------------------------------------------------------
# A make of its own, whatever make runs this test (-j and its job server).
if (unset MAKEFLAGS MFLAGS; "$make" -C "$build" install DESTDIR="$dest") >"$tmp/install.log" 2>&1; then
  ok
else
  fail "make install DESTDIR=$dest"; tail -20 "$tmp/install.log"; finish
fi
progs="mlc-onnx mlc-run"
[ -x "$build/mlc-serve" ] && progs="$progs mlc-serve"
for f in $(for p in $progs; do echo "$bindir/$p"; done) \
    "$includedir/mlc/mlc_runtime.h" "$includedir/mlc/mlc_extern.h" "$includedir/mlc/mlc.h" \
    "$libdir/libmlcload.so" "$libdir/libmlcload.a" "$libdir/libmlc.so" "$libdir/libmlc.a" \
    "$pcdir/mlc.pc" "$pcdir/mlc-runtime.pc"; do
  [ -f "$dest$f" ] && ok || fail "not installed: $f"
done

# ---- the runners are one executable each; only mlc-onnx needs libmlc --------------------
for p in $progs; do
  [ -f "$dest$bindir/$p" ] || continue
  is_elf "$dest$bindir/$p" && ok || fail "installed $p is not an ELF executable"
  libs=$(needed "$dest$bindir/$p" | tr '\n' ' ')
  case $p in
    mlc-onnx) bad=$(needed "$dest$bindir/$p" | grep '^libmlc' | grep -v '^libmlc\.so\.') ;;
    *) bad=$(needed "$dest$bindir/$p" | grep '^libmlc') ;;
  esac
  [ -z "$bad" ] && [ -n "$libs" ] && ok || fail "installed $p needs $libs"
done
if [ -f "$dest$libdir/libmlcload.so" ]; then
  needed "$dest$libdir/libmlcload.so" | grep -q '^libmlc' && fail "libmlcload.so needs $(needed "$dest$libdir/libmlcload.so" | tr '\n' ' ')" || ok
  # exports: the MLC_API functions of the header, less the models' entry
  sed -n 's/^MLC_API[^(]*[ *]\([A-Za-z_0-9]*\)(.*/\1/p' "$src/include/mlc/mlc_runtime.h" |
    grep -v '^mlc_model_entry_v1$' | sort -u >"$tmp/api"
  nm -D --defined-only "$dest$libdir/libmlcload.so" | awk 'NF >= 3 && $2 ~ /^[A-Z]$/ { print $3 }' | sort -u >"$tmp/exports"
  if [ -s "$tmp/api" ] && cmp -s "$tmp/api" "$tmp/exports"; then ok; else
    fail "libmlcload.so exports other than the MLC_API functions of mlc_runtime.h:"; diff "$tmp/api" "$tmp/exports" | grep '^[<>]'
  fi
fi

# ---- programs built against the installed tree, with pkg-config alone -------------------
PKG_CONFIG_PATH=$dest$pcdir PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
check "compile mlp" "$cli" compile "$models/mlp.onnx" -o "$tmp/mlp.so" -q --no-header
check "pkg-config mlc-runtime" "$pkgconf" --cflags --libs mlc-runtime
flags=$(cat "$tmp/out")
case " $flags " in *" -I$dest$includedir "*"-L$dest$libdir "*"-lmlcload "*) ok ;; *) fail "pkg-config --cflags --libs mlc-runtime: $flags" ;; esac
sflags=$("$pkgconf" --static --libs mlc-runtime 2>/dev/null)
case " $sflags " in *" -lmlcload "*"-ldl "*) ok ;; *) fail "pkg-config --static --libs mlc-runtime: $sflags" ;; esac
app=$src/tests/cli/install_app.c
run_app() { # DESC EXE [VAR=VALUE]: EXE runs the model and agrees with ONNX Runtime
  desc=$1 exe=$2; shift 2
  if env "$@" "$exe" "$tmp/mlp.so" "$models/mlp.input_0.npy" "$models/mlp.output_0.npy" >"$tmp/out" 2>"$tmp/err" &&
     grep -q '^mlp: output "y" (10 values) matches' "$tmp/out"; then ok; else
    fail "$desc: $(cat "$tmp/out" "$tmp/err" | head -5)"
  fi
}
# linked to libmlcload.so
# shellcheck disable=SC2086
check "cc against libmlcload.so" $cc $san -Wall -o "$tmp/app" "$app" $flags
needed "$tmp/app" | grep -q '^libmlcload\.so\.' && ok || fail "app: needs $(needed "$tmp/app" | tr '\n' ' ')"
run_app "app (libmlcload.so)" "$tmp/app" LD_LIBRARY_PATH="$dest$libdir"
# linked to libmlcload.a: runs with the model alone
# shellcheck disable=SC2086
check "cc against libmlcload.a" $cc $san -Wall -o "$tmp/app_static" "$app" $("$pkgconf" --static --cflags mlc-runtime) \
  -Wl,-Bstatic $sflags -Wl,-Bdynamic
needed "$tmp/app_static" | grep -q '^libmlc' && fail "app_static: needs $(needed "$tmp/app_static" | tr '\n' ' ')" || ok
run_app "app (libmlcload.a)" "$tmp/app_static"
# the same source as C++: the header's declarations are extern "C"
if command -v "$cxx" >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  check "$cxx against libmlcload.so" "$cxx" $san -Wall -x c++ -o "$tmp/app_cxx" "$app" -x none $flags
  run_app "app (C++)" "$tmp/app_cxx" LD_LIBRARY_PATH="$dest$libdir"
else
  echo "SKIP: the C++ program (no $cxx)"
fi
# the compiler library through mlc.pc
cat >"$tmp/inspect.c" <<'EOF'
#include <stdio.h>
#include <mlc/mlc.h>
int main(int argc, char **argv) {
  char *text = NULL;
  mlc_status st = argc == 2 ? mlc_inspect_file(argv[1], MLC_INSPECT_JSON, &text) : NULL;
  if (argc != 2 || st) {
    fprintf(stderr, "%s\n", mlc_status_message(st));
    mlc_status_free(st);
    return 1;
  }
  printf("%s %s\n", mlc_version(), text);
  mlc_string_free(text);
  return 0;
}
EOF
# shellcheck disable=SC2046,SC2086
check "cc against libmlc.so" $cc $san -Wall -o "$tmp/inspect" "$tmp/inspect.c" $("$pkgconf" --cflags --libs mlc)
check "inspect through libmlc.so" env LD_LIBRARY_PATH="$dest$libdir" "$tmp/inspect" "$models/mlp.onnx"
grep -q '"ir_version": *8' "$tmp/out" && ok || fail "inspect through libmlc.so: $(head -c 300 "$tmp/out")"

# ---- the installed programs run from where they are --------------------------------------
check "installed mlc-onnx --version" env LD_LIBRARY_PATH="$dest$libdir" "$dest$bindir/mlc-onnx" --version
check "installed mlc-run" "$dest$bindir/mlc-run" "$tmp/mlp.so" --input "$models/mlp.input_0.npy" --output-dir "$tmp/run"
[ -s "$tmp/run/output_0.npy" ] && ok || fail "installed mlc-run wrote no output_0.npy"

finish
