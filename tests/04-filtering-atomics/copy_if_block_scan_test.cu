// Tests of exercise 4.3, cudalab::filter::copy_if_block_scan (suites
// FilterCopyIfBlockScan*), including the input order within each tile of 2048.
// Run: tools/grade 4.3   or   build/default/bin/copy_if_block_scan_test_starter
#include "filter_test_battery.cuh"

CUDALAB_FILTER_TEST_SUITES(
    FilterCopyIfBlockScan, "4.3 copy_if_block_scan", copy_if_block_scan, ::cudalab::test::filter::Order::kWithinTiles, cudalab::filter::copy_if_block_scan_tile)
