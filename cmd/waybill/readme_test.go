package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// walkthroughHeading is the README section TestReadmeWalkthrough runs.
const walkthroughHeading = "## A walk through the API"

// fence is one fenced block of the README.
type fence struct {
	info string // the info string: sh, text, console, …
	body string
	line int // the line of its opening fence
}

// readmeFences returns the fenced blocks of the README section under heading, in order.
func readmeFences(t *testing.T, readme, heading string) []fence {
	t.Helper()
	var out []fence
	in, inSection := (*fence)(nil), false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case in != nil && strings.HasPrefix(line, "```"):
			out, in = append(out, *in), nil
		case in != nil:
			in.body += line + "\n"
		case strings.HasPrefix(line, "## "):
			inSection = line == heading
		case inSection && strings.HasPrefix(line, "```"):
			in = &fence{info: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: n}
		}
	}
	if in != nil {
		t.Fatalf("README.md: the block at line %d is not closed", in.line)
	}
	return out
}

// step is a shell block of the walk-through and the output documented after it, if any.
type step struct {
	script, want string
	line         int
}

// walkthroughSteps pairs each sh block with the text block right after it (its documented
// output). Blocks are adjacent when only blank lines separate them.
func walkthroughSteps(t *testing.T, readme string) (start fence, steps []step) {
	t.Helper()
	lines := strings.Split(readme, "\n")
	fences := readmeFences(t, readme, walkthroughHeading)
	for i, f := range fences {
		switch f.info {
		case "console":
			if strings.Contains(f.body, "| tee ") {
				start = f
			}
		case "sh":
			s := step{script: f.body, line: f.line}
			if i+1 < len(fences) && fences[i+1].info == "text" {
				// Adjacent: only blank lines between this block's end and the next one's start.
				end := f.line + strings.Count(f.body, "\n") + 1
				if strings.TrimSpace(strings.Join(lines[end:fences[i+1].line-1], "")) == "" {
					s.want = fences[i+1].body
				}
			}
			steps = append(steps, s)
		}
	}
	if start.body == "" || len(steps) == 0 {
		t.Fatalf("README.md: no start command (a console block with `| tee`) or no sh blocks under %q", walkthroughHeading)
	}
	return start, steps
}

// matchOutput compares output with a documented answer line by line; "…" in the documented
// answer stands for any text within its line.
func matchOutput(want, got string) bool {
	wl := strings.Split(strings.TrimRight(want, "\n"), "\n")
	gl := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(wl) != len(gl) {
		return false
	}
	for i := range wl {
		parts := strings.Split(wl[i], "…")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile(`^` + strings.Join(parts, `.*`) + `$`).MatchString(gl[i]) {
			return false
		}
	}
	return true
}

func TestMatchOutput(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
	}{
		{"OPEN\n", "OPEN\n", true},
		{"OPEN\n", "OPEN", true},
		{"OPEN\n", "CANCELLED\n", false},
		{"OPEN\n1\n", "OPEN\n", false},
		{`{"id":"…","status":"QUEUED"}`, `{"id":"0196","status":"QUEUED"}`, true},
		{`{"id":"…","status":"QUEUED"}`, `{"id":"0196","status":"FAILED"}`, false},
		{"a.c", "abc", false},
	}
	for _, tt := range tests {
		if got := matchOutput(tt.want, tt.got); got != tt.ok {
			t.Errorf("matchOutput(%q, %q) = %v; want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}

// needTools skips the test when a tool is missing, except under CI, where it fails.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// TestReadmeWalkthrough runs README.md's walk-through as a reader would: it builds the binary,
// starts it as the walk-through's start command says (with a free port in WAYBILL_ADDR, a
// fast tracking simulator and a short retry schedule), then runs every sh block of the section
// with bash, in order, in one directory, each block seeing the variables the earlier ones set,
// and compares each documented answer (the text block right after a sh block).
func TestReadmeWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README")
	}
	needTools(t, "bash", "curl", "jq", "openssl", "go", "pdfinfo", "pdftotext")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start, steps := walkthroughSteps(t, string(readme))

	work := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(work, "waybill"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The start command: `$ ./waybill FLAGS | tee FILE`.
	m := regexp.MustCompile(`(?m)^\$ \./waybill ([^|\n]*)\| tee (\S+)$`).FindStringSubmatch(start.body)
	if m == nil {
		t.Fatalf("README.md line %d: the start command is not `$ ./waybill FLAGS | tee FILE`:\n%s", start.line, start.body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "WAYBILL_ADDR="+addr)
	stdout, err := os.Create(filepath.Join(work, m[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	args := append(strings.Fields(m[1]), "-simulate-tracking=2s", "-webhook-retry-schedule=100ms,100ms")
	srv := exec.Command(filepath.Join(work, "waybill"), args...)
	srv.Dir, srv.Env, srv.Stdout = work, env, stdout
	stderr := &syncBuffer{}
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Process.Kill()
			srv.Wait()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), `"msg":"listening"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waybill did not start:\n%s", stderr)
		}
	}

	// Each block runs in its own bash, as a reader's one shell would run it: nothing is
	// exported for it. The next block starts from the shell variables the last one left (its
	// upper-case ones, which are the walk-through's), so a block that needs a variable
	// exported (jq's env.X) fails here as it would for the reader.
	state := filepath.Join(work, ".walkthrough-env")
	os.WriteFile(state, nil, 0o600)
	const keep = `declare -p $(compgen -v | grep -E '^[A-Z][A-Z0-9_]*$' |
		grep -vE '^(BASH.*|SHELLOPTS|SHLVL|PWD|OLDPWD|PPID|UID|EUID|GROUPS|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|OPTERR|OPTIND|IFS|PS4|RANDOM|SRANDOM|SECONDS|LINENO|EPOCHSECONDS|EPOCHREALTIME|DIRSTACK|PIPESTATUS|FUNCNAME|COMP_.*|HISTCMD)$')`
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		script := "set -e\n. " + state + "\n" + s.script + "\n" + keep + " > " + state + "\n"
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Dir, cmd.Env = work, env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("README.md line %d: the block failed: %v\n%s\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s", s.line, err, s.script, &out, &errOut, tail(stderr.String(), 20))
		}
		t.Logf("README.md line %d: ran (%d bytes out)", s.line, out.Len())
		if s.want != "" && !matchOutput(s.want, out.String()) {
			t.Errorf("README.md line %d: the block printed\n%s\nwant (as documented)\n%s\nblock:\n%s", s.line, &out, s.want, s.script)
		}
	}

	// Stopping the server is quick and clean.
	srv.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("waybill exited with %v after SIGTERM; want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("waybill did not stop within 30 s of SIGTERM")
	}
	if got, _ := os.ReadFile(filepath.Join(work, m[2])); !regexp.MustCompile(`^token: wb_\S+\n$`).Match(got) {
		t.Errorf("stdout of the first start = %q; want the one token line", got)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprint(strings.Join(lines, "\n"))
}
