"""Running evaluator programs: processes with deadlines, runtimes, executors, environments."""
