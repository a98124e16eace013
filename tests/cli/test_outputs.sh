#!/bin/sh
# test_outputs.sh: the files mlc-onnx writes.  compile's -o library and its
# header, --dump-ir files, run --output-dir files and inspect -o are written
# to a temporary file that replaces the target atomically; a symbolic link,
# device, FIFO or directory at an output path is refused and left alone (so
# is the file a link points to); an output that is the input model is
# refused, however it is spelled; modes follow the umask; a failure leaves
# the old file and no temporary file.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
models=$src/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
exit_is() { want=$1 desc=$2; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want"; head -3 "$tmp/err"; fi; }
says() { grep -qF -- "$2" "$tmp/err" && ok || fail "$1: message lacks '$2': $(cat "$tmp/err")"; }
# victim FILE: a file that must survive (content and mode checked by intact)
victim() { printf 'precious\n' >"$1"; chmod 600 "$1"; }
intact() { [ -f "$2" ] && [ ! -L "$2" ] && [ "$(cat "$2")" = precious ] && [ "$(stat -c %a "$2")" = 600 ] && ok || fail "$1: $2 was changed"; }
# only_files DIR NAME...: DIR holds exactly these names (no temporary file left)
only_files() {
  d=$1; shift
  have=$(ls -A "$d" | sort | tr '\n' ' ')
  want=$(for n in "$@"; do echo "$n"; done | sort | tr '\n' ' ')
  [ "$have" = "$want" ] && ok || fail "$d holds '$have', expected '$want'"
}
mlp=$tmp/mlp.onnx
cp "$models/mlp.onnx" "$mlp"

# ---- special files at the output path --------------------------------------------------
# The link is made to fail, so even a compiler that did not check /dev/null up front
# could never replace it; the refusal must come first and name the path.
ls -l /dev/null >"$tmp/devnull.before"
exit_is 1 "compile -o /dev/null" env MLC_CC=false "$cli" compile "$mlp" -o /dev/null -q
says "-o /dev/null" "/dev/null exists and is a character device, not a regular file"
ls -l /dev/null | cmp -s - "$tmp/devnull.before" && [ -c /dev/null ] && ok || fail "/dev/null was changed"
exit_is 1 "compile --header /dev/null" env MLC_CC=false "$cli" compile "$mlp" -o "$tmp/h.so" -q --header /dev/null
says "--header /dev/null" "/dev/null exists and is a character device"
[ -c /dev/null ] && [ ! -e "$tmp/h.so" ] && ok || fail "--header /dev/null: something was written"
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
  exit_is 1 "compile -o a device node" "$cli" compile "$mlp" -o "$tmp/null" -q
  [ -c "$tmp/null" ] && ok || fail "-o a device node: the node was replaced"
fi
mkfifo "$tmp/fifo"
exit_is 1 "compile -o a FIFO" "$cli" compile "$mlp" -o "$tmp/fifo" -q
says "-o a FIFO" "is a FIFO, not a regular file"
[ -p "$tmp/fifo" ] && ok || fail "-o a FIFO: the FIFO was replaced"
mkdir "$tmp/adir"
exit_is 1 "compile -o a directory" "$cli" compile "$mlp" -o "$tmp/adir" -q
says "-o a directory" "is a directory"
exit_is 1 "compile -o DIR/" "$cli" compile "$mlp" -o "$tmp/adir/" -q
says "-o DIR/" "names a directory"
exit_is 1 "inspect -o a FIFO" "$cli" inspect "$mlp" -o "$tmp/fifo"
[ -p "$tmp/fifo" ] && ok || fail "inspect -o a FIFO: the FIFO was replaced"

# ---- symbolic links at output paths are refused, their targets untouched ---------------
mkdir "$tmp/ln" && victim "$tmp/victim"
ln -s "$tmp/victim" "$tmp/ln/m.so"
exit_is 1 "compile -o a symlink" "$cli" compile "$mlp" -o "$tmp/ln/m.so" -q
says "-o a symlink" "$tmp/ln/m.so is a symbolic link"
intact "-o a symlink" "$tmp/victim"
[ -L "$tmp/ln/m.so" ] && ok || fail "-o a symlink: the link was replaced"
only_files "$tmp/ln" m.so
rm "$tmp/ln/m.so"
ln -s "$tmp/victim" "$tmp/ln/m.h"
exit_is 1 "header path a symlink" "$cli" compile "$mlp" -o "$tmp/ln/m.so" -q
says "header a symlink" "$tmp/ln/m.h is a symbolic link"
intact "header a symlink" "$tmp/victim"
only_files "$tmp/ln" m.h
exit_is 1 "--header a symlink" "$cli" compile "$mlp" -o "$tmp/ln/x.so" -q --header "$tmp/ln/m.h"
intact "--header a symlink" "$tmp/victim"
only_files "$tmp/ln" m.h
ln -s "$tmp/nowhere" "$tmp/ln/dangling.so"
exit_is 1 "compile -o a dangling symlink" "$cli" compile "$mlp" -o "$tmp/ln/dangling.so" -q
[ ! -e "$tmp/nowhere" ] && ok || fail "-o a dangling symlink: its target was created"
ln -s "$tmp/victim" "$tmp/ln/report.txt"
exit_is 1 "inspect -o a symlink" "$cli" inspect "$mlp" -o "$tmp/ln/report.txt"
says "inspect -o a symlink" "is a symbolic link"
intact "inspect -o a symlink" "$tmp/victim"

# A link planted at a temporary name the compiler might pick (OUT.tmp<pid>: the shell
# execs the compiler, so $$ is its pid) is never opened.
mkdir "$tmp/tp"
check "compile with a planted temporary link" \
  sh -c 'ln -s "$1" "$2.tmp$$" && ln -s "$1" "$2.h.tmp$$" && exec "$3" compile "$4" -o "$2" -q' \
  sh "$tmp/victim" "$tmp/tp/m.so" "$cli" "$mlp"
intact "planted temporary link" "$tmp/victim"
[ -f "$tmp/tp/m.so" ] && [ ! -L "$tmp/tp/m.so" ] && ok || fail "planted temporary link: no library written"

# ---- the input model is never an output -----------------------------------------------
cp "$mlp" "$tmp/keep.onnx"
mkdir "$tmp/d"
exit_is 1 "-o the model" "$cli" compile "$mlp" -o "$mlp" -q
says "-o the model" "is the input model"
exit_is 1 "-o the model as d/../" "$cli" compile "$mlp" -o "$tmp/d/../mlp.onnx" -q
says "-o d/../model" "is the input model"
ln "$mlp" "$tmp/hard.so"
exit_is 1 "-o a hard link of the model" "$cli" compile "$mlp" -o "$tmp/hard.so" -q
says "-o a hard link" "is the input model"
exit_is 1 "--header the model" "$cli" compile "$mlp" -o "$tmp/h1.so" -q --header "$tmp/d/../mlp.onnx"
says "--header the model" "header $tmp/d/../mlp.onnx is the input model"
cp "$mlp" "$tmp/d/net.h"
exit_is 1 "default header is the model" "$cli" compile "$tmp/d/net.h" -o "$tmp/d/net.so" -q
says "default header the model" "is the input model"
exit_is 1 "--header the library" "$cli" compile "$mlp" -o "$tmp/h2.so" -q --header "$tmp/d/../h2.so"
says "--header the library" "is the same file as the output"
exit_is 1 "inspect -o the model" "$cli" inspect "$mlp" -o "$tmp/d/../mlp.onnx"
says "inspect -o the model" "is the same file as the input"
cmp -s "$mlp" "$tmp/keep.onnx" && cmp -s "$tmp/d/net.h" "$tmp/keep.onnx" && ok || fail "the model was overwritten"
cp "$tmp/keep.onnx" "$mlp"   # so that the checks below stand on their own
only_files "$tmp/d" net.h
[ ! -e "$tmp/h1.so" ] && [ ! -e "$tmp/h2.so" ] && ok || fail "a refused compile wrote its library"

# ---- an existing regular file is replaced atomically ------------------------------------
mkdir "$tmp/re"
check "compile a reference" "$cli" compile "$mlp" -o "$tmp/ref.so" -q
head -c 3000000 /dev/zero | tr '\0' 'x' >"$tmp/re/m.so"   # larger than the library
echo old >"$tmp/re/m.h"
ln "$tmp/re/m.so" "$tmp/re/old.so"                          # a reader's view of the old file
ino=$(stat -c %i "$tmp/re/m.so")
check "compile over a regular file" "$cli" compile "$mlp" -o "$tmp/re/m.so" -q
cmp -s "$tmp/re/m.so" "$tmp/ref.so" && cmp -s "$tmp/re/m.h" "$tmp/ref.h" && ok || fail "old content not fully replaced"
[ "$(stat -c %i "$tmp/re/m.so")" != "$ino" ] && [ "$(stat -c %s "$tmp/re/old.so")" = 3000000 ] && ok ||
  fail "the library was rewritten in place, not replaced"
only_files "$tmp/re" m.so m.h old.so
# A failing link leaves the old files and no temporary file.
cp "$tmp/re/m.so" "$tmp/before.so"
exit_is 1 "compile with a failing linker" env MLC_CC=false "$cli" compile "$mlp" -o "$tmp/re/m.so" -q
cmp -s "$tmp/re/m.so" "$tmp/before.so" && cmp -s "$tmp/re/m.h" "$tmp/ref.h" && ok || fail "failed compile changed the old files"
only_files "$tmp/re" m.so m.h old.so
# A refused header leaves the library alone too.
ln -s "$tmp/victim" "$tmp/re/bad.h"
exit_is 1 "compile with a refused --header" "$cli" compile "$mlp" -o "$tmp/re/m.so" -q --header "$tmp/re/bad.h"
cmp -s "$tmp/re/m.so" "$tmp/before.so" && ok || fail "refused header: the library was written"
only_files "$tmp/re" m.so m.h old.so bad.h
# inspect -o replaces a regular file.
head -c 100000 /dev/zero >"$tmp/re/report.txt"
check "inspect -o a regular file" "$cli" inspect "$mlp" -o "$tmp/re/report.txt"
"$cli" inspect "$mlp" | cmp -s - "$tmp/re/report.txt" && ok || fail "inspect -o: old content not replaced"

# ---- modes: 0755 / 0644 less the umask ---------------------------------------------------
mkdir "$tmp/mode"
check "compile under umask 027" sh -c 'umask 027 && exec "$@"' sh "$cli" compile "$mlp" -o "$tmp/mode/m.so" -q
[ "$(stat -c %a "$tmp/mode/m.so")" = 750 ] && [ "$(stat -c %a "$tmp/mode/m.h")" = 640 ] && ok ||
  fail "modes under umask 027: $(stat -c '%n %a' "$tmp/mode/m.so" "$tmp/mode/m.h" | tr '\n' ' ')"
check "compile under umask 022" sh -c 'umask 022 && exec "$@"' sh "$cli" compile "$mlp" -o "$tmp/mode/m.so" -q
[ "$(stat -c %a "$tmp/mode/m.so")" = 755 ] && [ "$(stat -c %a "$tmp/mode/m.h")" = 644 ] && ok ||
  fail "modes under umask 022: $(stat -c '%n %a' "$tmp/mode/m.so" "$tmp/mode/m.h" | tr '\n' ' ')"

# ---- run --output-dir ----------------------------------------------------------------------
so=$tmp/ref.so
mkdir "$tmp/out1"
ln -s "$tmp/victim" "$tmp/out1/output_0.npy"
exit_is 1 "run --output-dir with a planted output_0.npy link" "$cli" run "$so" --output-dir "$tmp/out1"
says "run planted link" "$tmp/out1/output_0.npy is a symbolic link"
intact "run planted link" "$tmp/victim"
only_files "$tmp/out1" output_0.npy
ln -s "$tmp/out1" "$tmp/out2"
exit_is 1 "run --output-dir a symlink" "$cli" run "$so" --output-dir "$tmp/out2"
says "run --output-dir a symlink" "output directory $tmp/out2 is a symbolic link"
exit_is 1 "run --output-dir a file" "$cli" run "$so" --output-dir "$tmp/victim"
says "run --output-dir a file" "exists and is"
intact "run --output-dir a file" "$tmp/victim"
check "run --output-dir new/nested" "$cli" run "$so" --output-dir "$tmp/out3/a/b"
[ -f "$tmp/out3/a/b/output_0.npy" ] && [ "$(stat -c %a "$tmp/out3/a/b")" = 755 ] && ok || fail "run: nested output dir"
only_files "$tmp/out3/a/b" output_0.npy
echo old >"$tmp/out3/a/b/output_0.npy"
check "run over an old output" "$cli" run "$so" --output-dir "$tmp/out3/a/b"
[ "$(head -c 6 "$tmp/out3/a/b/output_0.npy" | tail -c 5)" = NUMPY ] && ok || fail "run: old output not replaced"
only_files "$tmp/out3/a/b" output_0.npy

# ---- compile --dump-ir -----------------------------------------------------------------------
mkdir "$tmp/dump1"
ln -s "$tmp/victim" "$tmp/dump1/00_import.txt"
exit_is 1 "--dump-ir with a planted link" "$cli" compile "$mlp" -o "$tmp/dump.so" -q --dump-ir "$tmp/dump1"
says "--dump-ir planted link" "$tmp/dump1/00_import.txt is a symbolic link"
intact "--dump-ir planted link" "$tmp/victim"
mkdir "$tmp/dump2"
ln -s "$tmp/victim" "$tmp/dump2/02_fold_constant.before.txt"
exit_is 1 "--dump-ir with a planted pass-dump link" "$cli" compile "$mlp" -o "$tmp/dump.so" -q --dump-ir "$tmp/dump2"
says "--dump-ir planted pass link" "02_fold_constant.before.txt is a symbolic link"
intact "--dump-ir planted pass link" "$tmp/victim"
ln -s "$tmp/dump1" "$tmp/dump3"
exit_is 1 "--dump-ir a symlinked directory" "$cli" compile "$mlp" -o "$tmp/dump.so" -q --dump-ir "$tmp/dump3"
says "--dump-ir a symlink" "output directory $tmp/dump3 is a symbolic link"
[ ! -e "$tmp/dump.so" ] && ok || fail "--dump-ir refused, but the library was written"
check "--dump-ir new/nested" "$cli" compile "$mlp" -o "$tmp/dump.so" -q --dump-ir "$tmp/dump4/a"
[ -s "$tmp/dump4/a/00_import.txt" ] && [ -s "$tmp/dump4/a/20_codegen.ll" ] && ok || fail "--dump-ir: files missing"
ls -A "$tmp/dump4/a" | grep -q '\.tmp$' && fail "--dump-ir left temporary files" || ok

echo "test_outputs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
