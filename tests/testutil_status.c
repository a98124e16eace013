/*
** testutil_status.c: the status checks of testutil.h (kept apart from
** testutil.c so that programs without base/ do not need it).
*/
#include <stdio.h>
#include <string.h>

#include "tests/testutil.h"

int mlc_test_check_ok(mlc_status s, const char *what, const char *file, int line) {
  if (!s) return 1;
  printf("\n  line %d: %s: %s\n", line, what, mlc_status_message(s));
  mlc_status_free(s);
  CU_assertImplementation(CU_FALSE, (unsigned)line, "status is an error", file, "", CU_FALSE);
  return 0;
}

void mlc_test_check_err(mlc_status s, const char *file, int line, mlc_code code,
                        const char *const *subs) {
  if (!s) {
    printf("\n  line %d: expected an error, got success\n", line);
    CU_assertImplementation(CU_FALSE, (unsigned)line, "expected an error", file, "", CU_FALSE);
    return;
  }
  if (code != MLC_OK && mlc_status_code(s) != code) {
    printf("\n  line %d: code %s, expected %s: %s\n", line, mlc_code_name(mlc_status_code(s)),
           mlc_code_name(code), mlc_status_message(s));
    CU_assertImplementation(CU_FALSE, (unsigned)line, "error code", file, "", CU_FALSE);
  }
  for (; *subs; subs++)
    if (!strstr(mlc_status_message(s), *subs)) {
      printf("\n  line %d: error lacks \"%s\": %s\n", line, *subs, mlc_status_message(s));
      CU_assertImplementation(CU_FALSE, (unsigned)line, "error message", file, "", CU_FALSE);
    }
  mlc_status_free(s);
}
