// Package cputime reads the CPU time used so far by the process and by the
// calling OS thread, for benchmarks and timed examples: on a shared
// machine it says more than the wall time. Where the system does not say
// (Process outside Unix, Thread outside Linux) the functions return 0, so
// that differences of two readings are 0.
package cputime
