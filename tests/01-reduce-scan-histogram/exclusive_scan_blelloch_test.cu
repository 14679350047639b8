// Tests of exercise 1.6, cudalab::scan::exclusive_scan_blelloch (suites
// ScanExclusiveScanBlelloch*): by size at tile 2048, then every tile 2 to 2048.
// Run: tools/grade 1.6   or   build/default/bin/exclusive_scan_blelloch_test_starter
#include "scan_test_battery.cuh"

CUDALAB_SCAN_TEST_SUITES(ScanExclusiveScanBlelloch,
                         ::cudalab::test::scan::tiled("1.6 exclusive_scan_blelloch",
                                                      &::cudalab::scan::exclusive_scan_blelloch,
                                                      false, 2048, 2, 2048))
CUDALAB_SCAN_TILE_TESTS(ScanExclusiveScanBlelloch)
