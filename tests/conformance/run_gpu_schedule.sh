#!/bin/sh
# run_gpu_schedule.sh: the conformance suite compiled with the GPU default
# schedule (MLC_GPU_SCHEDULE_ON_CPU=1: the CUDA target's schedules, whose
# thread-bound loops CPU code runs serially), so that what the GPU
# schedules do to every op is checked against the expected outputs where
# there is no GPU.  The same PASSING list must hold.
here=$(cd "$(dirname "$0")" && pwd)
MLC_GPU_SCHEDULE_ON_CPU=1
MLC_CONFORMANCE_RESULTS=${MLC_BUILDDIR:-$(pwd)}/tests/conformance/results_gpu_schedule.txt
export MLC_GPU_SCHEDULE_ON_CPU MLC_CONFORMANCE_RESULTS
exec sh "$here/run.sh"
