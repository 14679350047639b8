"""tools/gpu-check's steps and report (the script parses the options and runs them).

context: the steps, their defaults, Context (one invocation's options, its commands' runner);
state: the records kept between invocations; results: what the tools run print or write;
steps (build, test, profiles, grade, and run_step), portability, sanitize, bench,
classsteps (redteam, partial, mutation, class): the steps; report: report.md, report.json, logs."""
