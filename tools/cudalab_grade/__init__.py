"""The pieces of tools/grade, tools/grade-class and tools/gpu-check: manifests, source checks,
build, runs, scoring, reports, and the tools' command lines (cli*, gpucheck/)."""
