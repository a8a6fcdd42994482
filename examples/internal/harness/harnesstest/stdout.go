package harnesstest

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// Stdout calls f with os.Stdout redirected to a pipe and returns what f
// wrote there. It is for programs whose main prints with fmt.Print*: the
// README's snippets under examples/snippets. It skips under -short.
func Stdout(t *testing.T, f func()) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the program")
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	defer func() { os.Stdout = saved }()
	f()
	require.NoError(t, w.Close())
	out := <-done
	require.NoError(t, r.Close())
	return string(out)
}
