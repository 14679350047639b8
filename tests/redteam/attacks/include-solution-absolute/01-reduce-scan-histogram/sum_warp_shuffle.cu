// RED TEAM: Includes the reference solution by its absolute path on the
// RED TEAM: grading machine (the course's root, learnt from the paths an earlier
// RED TEAM: report showed), so that the solution is compiled as this file.
#include "@REDTEAM_ROOT@/solutions/01-reduce-scan-histogram/sum_warp_shuffle.cu"
