"""Bundled workloads (ASTRA-sim's samples), reachable by short name: `--workload Resnet50_DataParallel`."""
