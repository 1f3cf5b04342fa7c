package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestMCPStdioTermWhileExiting: a SIGTERM that arrives while 'minimal mcp
// --stdio' exits on its own (its agent closed stdin) does not kill it: it
// stops the way it was stopping, with its own exit status. A supervisor
// that sends SIGTERM as the process ends must not see it die of the
// signal. Each round starts the process with nothing on stdin and, once
// it serves, sends SIGTERM every 20 µs or so until it has exited; in the
// gateway's mode (--token-file) and in drop-in mode.
func TestMCPStdioTermWhileExiting(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	s.stop(t) // the data dir is ready; the command opens it itself
	modes := map[string][]string{
		"gateway": {"mcp", "--stdio", "--token-file", filepath.Join(dir, "agent.token"), "--data-dir", dir},
		"drop-in": {"mcp", "--stdio"},
	}
	for name, args := range modes {
		for round := range 25 {
			cmd := exec.Command(binary, args...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "MINI_APP_USER_DIR="+t.TempDir(), "MINI_APP_PROJECT_DIR="+filepath.Join(cmd.Dir, "none"))
			cmd.Stdin = strings.NewReader("")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var exited atomic.Bool
			var logs strings.Builder
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				logs.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "serving MCP") {
					go func() {
						for !exited.Load() {
							_ = cmd.Process.Signal(syscall.SIGTERM)
							time.Sleep(20 * time.Microsecond)
						}
					}()
				}
			}
			err = cmd.Wait()
			exited.Store(true)
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("%s, round %d: killed by %v while exiting on its own:\n%s", name, round, ws.Signal(), logs.String())
			}
			if err != nil {
				t.Fatalf("%s, round %d: %v\n%s", name, round, err, logs.String())
			}
		}
	}
}
