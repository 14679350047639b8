// Tests of exercise 1.5, cudalab::scan::inclusive_scan_hillis_steele (suites
// ScanInclusiveScanHillisSteele*): by size at tile 1024, then every tile 1 to 1024.
// Run: tools/grade 1.5   or   build/default/bin/inclusive_scan_hillis_steele_test_starter
#include "scan_test_battery.cuh"

CUDALAB_SCAN_TEST_SUITES(ScanInclusiveScanHillisSteele,
                         ::cudalab::test::scan::tiled("1.5 inclusive_scan_hillis_steele",
                                                      &::cudalab::scan::inclusive_scan_hillis_steele,
                                                      true, 1024, 1, 1024))
CUDALAB_SCAN_TILE_TESTS(ScanInclusiveScanHillisSteele)
