"""The pieces of tools/grade: manifests, source checks, build, runs, scoring, reports."""
