package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/waybill/waybill/store"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/cmd/internal/clitest"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test.
type syncBuffer = clitest.SyncBuffer

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// startServe runs `waybill serve` and returns its base URL, its stdout and a stop function
// that returns serve's error.
func startServe(t *testing.T, dbPath string) (string, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, env(map[string]string{"WAYBILL_DB": dbPath}), strings.NewReader(""), stdout, stderr)
	}()
	re := regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], stdout, func() error { cancel(); return <-done }
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended early: %v\n%s", err, stderr)
		default:
		}
	}
	cancel()
	t.Fatalf("serve did not start:\n%s", stderr)
	return "", nil, nil
}

func get(t *testing.T, url, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func TestServeFirstStartAndTokens(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	base, stdout, stop := startServe(t, dbPath)
	m := regexp.MustCompile(`^token: (wb_\S+)\n$`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("first start printed %q; want one token line", stdout)
	}
	admin := m[1]
	if code, _ := get(t, base+"/healthz", ""); code != 200 {
		t.Errorf("GET /healthz = %d; want 200", code)
	}
	if code, body := get(t, base+"/shipments", admin); code != 200 && code != 501 {
		t.Errorf("GET /shipments with the first token = %d %v", code, body)
	}

	// A READ_BILLING token made by the CLI is refused elsewhere with required_scope.
	_, tok := createAccount(t, dbPath, "Globex", "READ_BILLING")
	code, body := get(t, base+"/webhooks", tok)
	errs, _ := body["errors"].(map[string]any)
	if code != 403 || errs["required_scope"] != "READ_WEBHOOKS" {
		t.Errorf("GET /webhooks with READ_BILLING = %d %v; want 403 with required_scope READ_WEBHOOKS", code, body)
	}

	// Revoked: the next request is 401, though the server had the token cached:
	// the command line revokes through its own connection, as another process would, and the
	// server checks for revocations every millisecond (the command takes longer than that).
	if code, _ := get(t, base+"/billing/invoices", tok); code != 200 {
		t.Fatalf("GET /billing/invoices with READ_BILLING = %d; want 200", code)
	}
	if err := run(context.Background(), []string{"token", "revoke", tok, "-db", dbPath}, env(nil), nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, base+"/billing/invoices", tok); code != 401 {
		t.Errorf("GET right after token revoke = %d; want 401", code)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after the signal; want nil", err)
	}

	// A second start prints no token.
	_, stdout2, stop2 := startServe(t, dbPath)
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if stdout2.String() != "" {
		t.Errorf("second start printed %q; want nothing", stdout2)
	}
}

// createAccount runs `waybill account create NAME` and `waybill token create` on dbPath and
// returns the printed account (id, organization_id, ingest_secret) and the token.
func createAccount(t *testing.T, dbPath, name, scopes string) (map[string]string, string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"account", "create", name, "--brand", name, "-db", dbPath}, env(nil), nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var acct map[string]string
	if err := json.Unmarshal(out.Bytes(), &acct); err != nil || acct["id"] == "" || acct["organization_id"] == "" || acct["ingest_secret"] == "" {
		t.Fatalf("account create printed %q (%v)", out.String(), err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"token", "create", "--account", acct["id"], "--scopes", scopes, "-db", dbPath}, env(nil), nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	return acct, strings.TrimSpace(out.String())
}

func TestRunErrors(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"account", "create"}, "usage"},
		{[]string{"token", "create", "--account", "x", "--scopes", "NOPE"}, "unknown scope"},
		{[]string{"token", "create", "--scopes", "ADMIN"}, "usage"},
		{[]string{"token", "create", "--account", "missing", "--scopes", "ADMIN"}, "no account"},
		{[]string{"token", "revoke", "wb_nope"}, "no such active token"},
		{[]string{"serve", "-webhook-retry-schedule", "5s,soon"}, "not a positive Go duration"},
	}
	for _, tt := range tests {
		err := run(context.Background(), append(tt.args, "-db", dbPath), env(nil), nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) = %v; want an error containing %q", tt.args, err, tt.want)
		}
	}
}

// TestReadCommandsNeedTheDatabase: a command that only reads or changes what a database holds
// refuses a -db that names no file, rather than create an empty database and report nothing in
// it (a reviewer's `export shipments -db` with a typo printed nothing and exited 0).
func TestReadCommandsNeedTheDatabase(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"inspect", "shipment", "x"}, {"export", "shipments"}, {"account", "list"}, {"account", "show", "x"},
		{"carrier", "list"}, {"token", "revoke", "wb_x"}, {"verify"},
	} {
		err := run(context.Background(), append(args, "-db", dbPath), env(nil), nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "no database at "+dbPath) {
			t.Errorf("run(%q) on no database = %v; want no database", args, err)
		}
		if _, err := os.Stat(dbPath); err == nil {
			t.Fatalf("run(%q) created %s", args, dbPath)
		}
	}
}

// TestMain lets a crash test run this test binary as the waybill process: with
// WAYBILL_TEST_CHILD=1 it runs the arguments after "--" as waybill's own and exits, so the test
// can kill it with SIGKILL and start it again on the same database.
func TestMain(m *testing.M) {
	clitest.HostMain(store.OpenSQLite)
	if os.Getenv("WAYBILL_TEST_CHILD") == "1" {
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		if err := run(context.Background(), args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "waybill:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startChild starts this binary as a waybill server on dbPath with extra serve flags, waits
// until it listens, and returns its base URL and the process (kill it with cmd.Process.Kill).
func startChild(t *testing.T, dbPath string, flags ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--", "serve", "-addr", "127.0.0.1:0", "-db", dbPath}, flags...)...)
	cmd.Env = append(os.Environ(), "WAYBILL_TEST_CHILD=1")
	return clitest.Listening(t, cmd), cmd
}
