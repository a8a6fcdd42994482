//go:build amd64 && !purego

package sgemm

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestGODEBUGSelectsKernel checks what the documentation of long runs relies
// on (docs/guide.md, "Resumable training"): GODEBUG=cpu.avx512f=off
// makes an AVX-512 CPU take the AVX2 kernels, and cpu.avx2=off the Go ones,
// because golang.org/x/sys/cpu reads GODEBUG before HasAsm and Has512 are set.
// It runs the test binary again under each setting and reads the flags the
// child process chose.
func TestGODEBUGSelectsKernel(t *testing.T) {
	if os.Getenv("SGEMM_PRINT_KERNEL") == "1" {
		os.Stdout.WriteString("kernel=" + kernelName() + "\n")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	native, noAVX512 := "Go", "Go"
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		native, noAVX512 = "AVX2", "AVX2"
		if cpu.X86.HasAVX512F {
			native = "AVX512"
		}
	}
	for _, c := range []struct{ godebug, want string }{
		{"", native},
		{"cpu.avx512f=off", noAVX512},
		{"cpu.avx2=off", "Go"},
	} {
		cmd := exec.Command(exe, "-test.run=^TestGODEBUGSelectsKernel$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SGEMM_PRINT_KERNEL=1", "GODEBUG="+c.godebug)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GODEBUG=%q: %v\n%s", c.godebug, err, out)
		}
		if !strings.Contains(string(out), "kernel="+c.want+"\n") {
			t.Errorf("GODEBUG=%q: child chose %q, want kernel=%s", c.godebug, out, c.want)
		}
	}
}
