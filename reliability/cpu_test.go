package reliability

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user and system) the test process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPUPerOp adds a cpu-ns/op metric to b: the process's CPU time
// since start over b.N, which counts the work of background goroutines
// (the writer's commits) that ns/op, a wall-clock figure, hides.
func reportCPUPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
