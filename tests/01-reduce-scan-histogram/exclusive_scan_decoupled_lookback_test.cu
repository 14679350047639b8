// Tests of exercise 1.8, cudalab::scan::exclusive_scan_decoupled_lookback
// (suites ScanExclusiveScanDecoupledLookback*), including many runs on the
// same large input: a race between tiles shows as a rare wrong answer.
// Run: tools/grade 1.8   or   build/default/bin/exclusive_scan_decoupled_lookback_test_starter
#include "scan_test_battery.cuh"

CUDALAB_SCAN_TEST_SUITES(ScanExclusiveScanDecoupledLookback,
                         ::cudalab::test::scan::whole_array(
                             "1.8 exclusive_scan_decoupled_lookback",
                             &::cudalab::scan::exclusive_scan_decoupled_lookback, false))
CUDALAB_SCAN_REPEATED_TESTS(ScanExclusiveScanDecoupledLookback)
