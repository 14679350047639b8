// Tests of exercise 1.7, cudalab::scan::exclusive_scan_reduce_then_scan
// (suites ScanExclusiveScanReduceThenScan*).
// Run: tools/grade 1.7   or   build/default/bin/exclusive_scan_reduce_then_scan_test_starter
#include "scan_test_battery.cuh"

CUDALAB_SCAN_TEST_SUITES(ScanExclusiveScanReduceThenScan,
                         ::cudalab::test::scan::whole_array(
                             "1.7 exclusive_scan_reduce_then_scan",
                             &::cudalab::scan::exclusive_scan_reduce_then_scan, false))
CUDALAB_SCAN_REPEATED_TESTS(ScanExclusiveScanReduceThenScan)
