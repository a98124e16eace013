#!/bin/sh
# test_no_chdir.sh: the library never changes the working directory.  It is
# shared by every thread of the process that embeds the compiler or the
# runtime, so chdir()/fchdir() in library code would move another thread's
# relative paths under it; a child that must run elsewhere gets its
# directory through posix_spawn's file actions (driver/archive.c).
# Env: MLC_SRCDIR.
set -u
src=${MLC_SRCDIR:?}
hits=$(cd "$src" && grep -nE '(^|[^A-Za-z0-9_])f?chdir[[:space:]]*\(' \
  $(find base onnx frontend graph lower codegen driver runtime include -name '*.[chS]' 2>/dev/null | sort))
if [ -n "$hits" ]; then
  echo "FAIL: library code calls chdir:"
  echo "$hits"
  echo "test_no_chdir: 0 passed, 1 failed"
  exit 1
fi
echo "test_no_chdir: 1 passed, 0 failed"
