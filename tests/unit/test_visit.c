/*
** test_visit.c: the generic TIR visitor and mutator (lower/tir_visit.c).
*/
#include "lower/tir_visit.h"
#include "tests/testutil.h"

static void register_tests(void) {
  static const CU_TestInfo tests[] = {{NULL, NULL}};
  mlc_test_add_suite("visit", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_tests, NULL};
  return mlc_test_main("test_visit", fns);
}
