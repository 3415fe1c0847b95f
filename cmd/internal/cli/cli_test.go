package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/cmd/internal/clitest"
	"github.com/waybill/waybill/store"
)

var sqlite = Database{Default: "waybill.db", Help: "SQLite database path", Open: store.OpenSQLite}

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test.
type syncBuffer = clitest.SyncBuffer

func noEnv(string) string { return "" }

// runCLI runs one command with the default limits and returns its stdout.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), sqlite, args, noEnv, strings.NewReader(""), &out, io.Discard)
	return out.String(), err
}

func TestDefaultBaseURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"[::1]:8080":     "http://[::1]:8080",
		"[::]:28089":     "http://localhost:28089",
		"0.0.0.0:80":     "http://localhost:80",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := defaultBaseURL(tcp); got != want {
			t.Errorf("defaultBaseURL(%s) = %s; want %s", addr, got, want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		args     []string
		wantName string
		wantRest []string
	}{
		{nil, "", nil},
		{[]string{"-addr", "x:1"}, "", []string{"-addr", "x:1"}},
		{[]string{"serve", "-addr", "x:1"}, "serve", []string{"-addr", "x:1"}},
		{[]string{"-db", "x", "account", "create", "N"}, "account create", []string{"-db", "x", "N"}},
		{[]string{"-db=x", "account", "create", "N"}, "account create", []string{"-db=x", "N"}},
		{[]string{"account", "create", "N", "-db", "x"}, "account create", []string{"N", "-db", "x"}},
		{[]string{"-webhook-allow-private", "serve"}, "serve", []string{"-webhook-allow-private"}},
		{[]string{"-simulate-tracking", "serve"}, "serve", []string{"-simulate-tracking"}},
		{[]string{"-db", "account", "account", "list"}, "account list", []string{"-db", "account"}},
		{[]string{"account", "-h"}, "account", []string{"-h"}},
		{[]string{"account", "-db", "x", "create", "N"}, "account create", []string{"-db", "x", "N"}},
		{[]string{"token", "-db=x", "revoke", "T"}, "token revoke", []string{"-db=x", "T"}},
		{[]string{"account", "-db", "x"}, "account", []string{"-db", "x"}},
		{[]string{"help", "token", "create"}, "help", []string{"token", "create"}},
		{[]string{"frobnicate", "-db", "x"}, "frobnicate", []string{"-db", "x"}},
	}
	for _, tt := range tests {
		name, rest := splitCommand(tt.args)
		if name != tt.wantName || !slices.Equal(rest, tt.wantRest) {
			t.Errorf("splitCommand(%q) = %q, %q; want %q, %q", tt.args, name, rest, tt.wantName, tt.wantRest)
		}
	}
}

func TestHelp(t *testing.T) {
	out, err := runCLI(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		if !strings.Contains(out, "waybill "+c.name) {
			t.Errorf("waybill help does not show %q", c.name)
		}
	}
	for _, flag := range []string{"-addr", "-base-url", "-webhook-allow-private", "-webhook-retry-schedule", "-simulate-tracking", "-tracking-poll-interval", "-brand", "-account", "-scopes", "-db"} {
		if !strings.Contains(out, "  "+flag+" ") && !strings.Contains(out, "  "+flag+"\n") {
			t.Errorf("waybill help does not list %s", flag)
		}
	}

	// -h on every command: its flags on stdout, and no error (exit 0).
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, []string{"waybill account show"}},
		{[]string{"--help"}, []string{"waybill token revoke"}},
		{[]string{"serve", "-h"}, []string{"-addr", "-simulate-tracking", "-db"}},
		{[]string{"account", "create", "-h"}, []string{"-brand", "-db"}},
		{[]string{"account", "list", "--help"}, []string{"waybill account list", "-db"}},
		{[]string{"account", "show", "-h"}, []string{"ID|NAME", "-db"}},
		{[]string{"token", "create", "-h"}, []string{"-account", "-scopes", "ADMIN"}},
		{[]string{"token", "revoke", "-help"}, []string{"TOKEN", "-db"}},
		{[]string{"account", "-h"}, []string{"waybill account create", "waybill account list", "waybill account show"}},
		{[]string{"verify", "-h"}, []string{"waybill verify [-since D]", "-since", "-db"}},
		{[]string{"help", "token", "create"}, []string{"-scopes"}},
		{[]string{"help", "token"}, []string{"waybill token create", "waybill token revoke", "-scopes"}},
		{[]string{"help", "account"}, []string{"waybill account create", "waybill account show"}},
	}
	for _, tt := range tests {
		out, err := runCLI(t, tt.args...)
		if err != nil {
			t.Errorf("waybill %q = %v; want no error", tt.args, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("waybill %q printed %q; want it to contain %q", tt.args, out, w)
			}
		}
	}
}

// TestAccountCommands: -db before or after the command's name, account list (JSON lines,
// no secrets) and account show by id or name (JSON with organization_id and ingest_secret).
func TestAccountCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	var created []map[string]string
	for _, args := range [][]string{
		{"-db", db, "account", "create", "Globex"},
		{"account", "create", "Initech", "-db", db, "-brand", "Initech"},
		{"account", "create", "-db=" + db, "Initech"},
	} {
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("waybill %q = %v", args, err)
		}
		var a map[string]string
		if err := json.Unmarshal([]byte(out), &a); err != nil || a["id"] == "" || a["organization_id"] == "" || a["ingest_secret"] == "" {
			t.Fatalf("waybill %q printed %q", args, out)
		}
		created = append(created, a)
	}

	out, err := runCLI(t, "-db", db, "account", "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("account list printed %d lines; want 3:\n%s", len(lines), out)
	}
	for i, line := range lines {
		var a map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("account list line %d %q: %v", i, line, err)
		}
		if a["id"] != created[i]["id"] || a["organization_id"] != created[i]["organization_id"] || a["created_at"] == nil {
			t.Errorf("account list line %d = %s; want account %s", i, line, created[i]["id"])
		}
		if a["ingest_secret"] != created[i]["ingest_secret"] {
			t.Errorf("account list line %d: ingest_secret %v; want %s", i, a["ingest_secret"], created[i]["ingest_secret"])
		}
	}

	for _, args := range [][]string{
		{"account", "show", created[0]["id"], "-db", db},
		{"-db", db, "account", "show", "Globex"},
	} {
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("waybill %q = %v", args, err)
		}
		var a map[string]string
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatal(err)
		}
		if a["id"] != created[0]["id"] || a["name"] != "Globex" || a["organization_id"] != created[0]["organization_id"] || a["ingest_secret"] != created[0]["ingest_secret"] {
			t.Errorf("waybill %q = %s; want Globex with its organization_id and ingest_secret", args, out)
		}
	}

	errs := []struct {
		args []string
		want string
	}{
		{[]string{"account", "show", "Initech"}, "2 accounts are named"},
		{[]string{"account", "show", "nobody"}, "no account"},
		{[]string{"account", "show"}, "usage: waybill account show ID|NAME"},
		{[]string{"account", "list", "extra"}, "usage"},
		{[]string{"token", "create", "-account", "Initech"}, "usage: waybill token create"},
		{[]string{"account", "frobnicate"}, "unknown command"},
		{[]string{"serve", "-simulate-tracking=soon"}, "neither true, false nor a positive Go duration"},
	}
	for _, tt := range errs {
		_, err := runCLI(t, append(tt.args, "-db", db)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("waybill %q = %v; want an error containing %q", tt.args, err, tt.want)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"waybill.db", "waybill.db"},
		{"/var/lib/waybill/w.db", "/var/lib/waybill/w.db"},
		{"postgres://waybill:s3cret@db:5432/waybill?sslmode=disable", "postgres://waybill:xxxxx@db:5432/waybill?sslmode=disable"},
		{"postgres://db/waybill", "postgres://db/waybill"},
		{"host=db user=waybill password=s3cret dbname=w", "host=db user=waybill password=xxxxx dbname=w"},
		{"host=db password='a b' dbname=w", "host=db password=xxxxx dbname=w"},
	}
	for _, tt := range tests {
		if got := redactDSN(tt.in); got != tt.want {
			t.Errorf("redactDSN(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// testLimits are short timeouts for the tests.
var testLimits = limits{readHeader: 300 * time.Millisecond, read: 500 * time.Millisecond, write: 2 * time.Second,
	idle: 500 * time.Millisecond, shutdown: 300 * time.Millisecond, workerStop: time.Second, simulateStep: time.Second}

// server is a running `waybill serve`.
type server struct {
	addr           string
	stdout, stderr *syncBuffer
	stop           func() error // cancels serve's context and returns its error
}

func startServer(t *testing.T, l limits, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	done := make(chan error, 1)
	e := &env{d: sqlite, limits: l, getenv: noEnv, stdin: strings.NewReader(""), stdout: s.stdout, stderr: s.stderr}
	args = append([]string{"serve", "-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "w.db")}, args...)
	go func() { done <- run(ctx, e, args) }()
	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	t.Cleanup(func() { s.stop() })
	re := regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(s.stderr.String()); m != nil {
			s.addr = m[1]
			return s
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended early: %v\n%s", err, s.stderr)
		default:
		}
	}
	t.Fatalf("serve did not start:\n%s", s.stderr)
	return nil
}

// slowBody opens a connection that sends a request's headers and then its body one byte at a
// time, every interval, until the connection breaks.
func slowBody(t *testing.T, addr string, interval time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "POST /webhook/custom-orders HTTP/1.1\r\nHost: waybill\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			time.Sleep(interval)
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	return c
}

// closedWithin reports whether the server closes c within d (reading and discarding any answer).
func closedWithin(c net.Conn, d time.Duration) (bool, time.Duration) {
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, time.Since(start)
	}
	return true, time.Since(start)
}

// TestSlowBodyDropped: a client that trickles a request body is cut off after the read
// timeout instead of holding its connection forever.
func TestSlowBodyDropped(t *testing.T) {
	s := startServer(t, testLimits)
	c := slowBody(t, s.addr, 50*time.Millisecond)
	if closed, after := closedWithin(c, 5*time.Second); !closed {
		t.Fatalf("a slow-body connection is still open after %v; want it closed after the %v read timeout", after, testLimits.read)
	}
}

// TestCutOffBodyAnswered: a request whose body stops arriving (it declares more than it sends)
// or trickles past the read timeout still gets a whole JSON answer before the connection
// closes: 400 from the order import, which reads the body first, and 401 from an API route
// without a token, which answers before the body and then reads it.
func TestCutOffBodyAnswered(t *testing.T) {
	s := startServer(t, testLimits)
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{{"/webhook/custom-orders", 400, "malformed_json"}, {"/shipments", 401, "unauthorized"}} {
		for _, trickle := range []bool{false, true} {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: waybill\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a\":", tc.path)
			if trickle {
				go func() {
					for {
						time.Sleep(50 * time.Millisecond)
						if _, err := c.Write([]byte(" ")); err != nil {
							return
						}
					}
				}()
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var got struct {
				Errors struct{ Code string } `json:"errors"`
			}
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				var b []byte
				if b, err = io.ReadAll(res.Body); err == nil {
					err = json.Unmarshal(b, &got)
				}
			}
			if err != nil || res.StatusCode != tc.status || got.Errors.Code != tc.code {
				t.Errorf("POST %s, body cut off (trickling %v): %v %+v; want a whole %d %s", tc.path, trickle, err, got, tc.status, tc.code)
			}
		}
	}
}

// TestIdleKeepAliveClosed: a keep-alive connection that sends nothing more is closed after the
// idle timeout.
func TestIdleKeepAliveClosed(t *testing.T) {
	s := startServer(t, testLimits)
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: waybill\r\n\r\n")
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		t.Fatalf("GET /healthz: %q, %v", status, err)
	}
	if closed, after := closedWithin(c, 5*time.Second); !closed {
		t.Fatalf("an idle keep-alive connection is still open after %v; want it closed after the %v idle timeout", after, testLimits.idle)
	}
}

// TestShutdownWithSlowClients: SIGTERM (here: the context ending) with 5 slow clients still
// sending returns nil (exit 0) within the shutdown bound.
func TestShutdownWithSlowClients(t *testing.T) {
	l := testLimits
	l.read = time.Minute // the clients are still being read when the signal comes
	s := startServer(t, l)
	conns := make([]net.Conn, 5)
	for i := range conns {
		conns[i] = slowBody(t, s.addr, 50*time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the handlers are reading the bodies
	start := time.Now()
	err := s.stop()
	took := time.Since(start)
	if err != nil {
		t.Errorf("serve returned %v after the signal with slow clients; want nil (exit 0)", err)
	}
	if bound := l.shutdown + l.workerStop + time.Second; took > bound {
		t.Errorf("serve took %v to stop; want at most %v", took, bound)
	}
	for i, c := range conns {
		if closed, _ := closedWithin(c, time.Second); !closed {
			t.Errorf("slow client %d is still connected after shutdown", i)
		}
	}
	if !strings.Contains(s.stderr.String(), "closing connections still busy") {
		t.Errorf("the log does not say busy connections were closed:\n%s", s.stderr)
	}
}

// TestStartLog: the start is logged with address, database, base URL and workers; stdout
// holds only the first start's token line.
func TestStartLog(t *testing.T) {
	s := startServer(t, testLimits, "-simulate-tracking")
	if !regexp.MustCompile(`^token: wb_\S+\n$`).MatchString(s.stdout.String()) {
		t.Errorf("stdout on first start = %q; want one token line", s.stdout)
	}
	var entry struct {
		Msg, Addr, DB, BaseURL, Simulate string
		Workers                          []string
	}
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(line, `"msg":"listening"`) {
			var raw map[string]any
			json.Unmarshal([]byte(line), &raw)
			b, _ := json.Marshal(raw)
			json.Unmarshal(b, &entry)
			entry.BaseURL, _ = raw["base_url"].(string)
			entry.Simulate, _ = raw["simulate_tracking"].(string)
		}
	}
	if entry.Addr != s.addr || !strings.HasSuffix(entry.DB, "w.db") || entry.BaseURL != "http://"+s.addr {
		t.Errorf("start log: addr %q db %q base_url %q; want %s, the database, http://%s", entry.Addr, entry.DB, entry.BaseURL, s.addr, s.addr)
	}
	for _, w := range []string{"webhook_delivery", "order_import", "billing_closer", "tracking_simulator"} {
		if !slices.Contains(entry.Workers, w) {
			t.Errorf("start log workers %q; want %q among them", entry.Workers, w)
		}
	}
	if entry.Simulate != "one step every 1s" {
		t.Errorf("start log simulate_tracking = %q; want one step every 1s", entry.Simulate)
	}
}

// TestSimulateTrackingFlag: -simulate-tracking is off by default, on with its default step when
// bare, takes a duration, and WAYBILL_SIMULATE_TRACKING applies unless the flag is given.
func TestSimulateTrackingFlag(t *testing.T) {
	tests := []struct {
		args    []string
		env     string
		want    time.Duration
		wantErr bool
	}{
		{nil, "", 0, false},
		{[]string{"-simulate-tracking"}, "", 10 * time.Second, false},
		{[]string{"-simulate-tracking=2s"}, "", 2 * time.Second, false},
		{[]string{"-simulate-tracking=false"}, "", 0, false},
		{nil, "true", 10 * time.Second, false},
		{nil, "500ms", 500 * time.Millisecond, false},
		{[]string{"-simulate-tracking=false"}, "1s", 0, false},
		{[]string{"-simulate-tracking=0s"}, "", 0, true},
		{nil, "soon", 0, true},
	}
	for _, tt := range tests {
		e := &env{limits: defaultLimits, getenv: func(k string) string {
			if k == "WAYBILL_SIMULATE_TRACKING" {
				return tt.env
			}
			return ""
		}}
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		defineServe(fs, e, new(string))
		f := fs.Lookup("simulate-tracking").Value.(*simulateFlag)
		err := fs.Parse(tt.args)
		if err == nil {
			err = f.applyEnv()
		}
		if (err != nil) != tt.wantErr || err == nil && f.step != tt.want {
			t.Errorf("%q with WAYBILL_SIMULATE_TRACKING=%q: step %v, error %v; want %v (error: %v)", tt.args, tt.env, f.step, err, tt.want, tt.wantErr)
		}
	}
}

// TestMetricsAddr: -metrics-addr serves /metrics without a token on its own listener, and
// nothing else there; the API's /metrics still wants an ADMIN token.
func TestMetricsAddr(t *testing.T) {
	s := startServer(t, testLimits, "-metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`"msg":"metrics listening","addr":"([^"]+)"`).FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("no metrics listener in the log:\n%s", s.stderr)
	}
	do := func(method, url string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type") + " " + string(b)
	}
	get := func(url string) (int, string) { t.Helper(); return do("GET", url) }
	if code, body := get("http://" + m[1] + "/metrics"); code != 200 || !strings.Contains(body, "http_requests_total") {
		t.Errorf("GET /metrics on -metrics-addr = %d %.200s; want 200 with http_requests_total", code, body)
	}
	// Anything else there is answered in the API's error shape.
	for _, c := range []struct {
		method, path, code string
		status             int
	}{{"GET", "/shipments", "not_found", 404}, {"GET", "//metrics", "not_found", 404}, {"POST", "/metrics", "method_not_allowed", 405}} {
		if code, body := do(c.method, "http://"+m[1]+c.path); code != c.status ||
			!strings.HasPrefix(body, "application/json") || !strings.Contains(body, `"code":"`+c.code+`"`) {
			t.Errorf("%s %s on -metrics-addr = %d %q; want %d %s in JSON", c.method, c.path, code, body, c.status, c.code)
		}
	}
	if code, _ := get("http://" + s.addr + "/metrics"); code != 401 {
		t.Errorf("GET /metrics on the API without a token = %d; want 401", code)
	}
}

// TestDesignCommandLines runs the command lines as an operator may type them (double-dash
// flags after the positional argument) and checks their output to the letter: account create
// prints {"id","organization_id","ingest_secret"} in that order, token create the token alone
// on one line.
func TestDesignCommandLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.db")
	out, err := runCLI(t, "account", "create", "Acme", "--brand", "Acme Co", "-db", db)
	if err != nil {
		t.Fatal(err)
	}
	created := regexp.MustCompile(`^\{"id":"[0-9a-f-]{36}","organization_id":"[0-9a-f-]{36}","ingest_secret":"[A-Za-z0-9+/=]{44}"\}\n$`)
	if !created.MatchString(out) {
		t.Errorf("account create printed %q; want {\"id\":…,\"organization_id\":…,\"ingest_secret\":…} on one line", out)
	}
	var a map[string]string
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "token", "create", "--account", a["id"], "--scopes", "READ_SHIPMENTS,WRITE_SHIPMENTS", "-db", db)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^wb_[A-Za-z0-9_-]{43}\n$`).MatchString(out) {
		t.Errorf("token create printed %q; want the token alone on one line", out)
	}
	out, err = runCLI(t, "-db", db, "account", "show", a["id"])
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]string
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown["brand"] != "Acme Co" || shown["organization_id"] != a["organization_id"] || shown["ingest_secret"] != a["ingest_secret"] {
		t.Errorf("account show printed %q (%v); want the account with its brand, organization_id and ingest_secret", out, err)
	}
}

// TestCommandWordAlone: `waybill account` and `waybill token` without their second word say
// which commands follow it.
func TestCommandWordAlone(t *testing.T) {
	for word, want := range map[string]string{"account": "create, list, show", "token": "create, revoke"} {
		_, err := runCLI(t, word)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("waybill %s = %v; want an error listing %s", word, err, want)
		}
	}
}

// TestAllowPrivateEnv: WAYBILL_WEBHOOK_ALLOW_PRIVATE that is no boolean is an error, not a
// silent false, unless -webhook-allow-private is given.
func TestAllowPrivateEnv(t *testing.T) {
	getenv := func(name string) string {
		if name == "WAYBILL_WEBHOOK_ALLOW_PRIVATE" {
			return "yes"
		}
		return ""
	}
	db := filepath.Join(t.TempDir(), "w.db")
	run := func(args ...string) error {
		return Run(context.Background(), sqlite, args, getenv, strings.NewReader(""), io.Discard, io.Discard)
	}
	// An address that cannot be listened on, so that serve never runs on here.
	if err := run("serve", "-db", db, "-addr", "127.0.0.1:-1"); err == nil || !strings.Contains(err.Error(), "WAYBILL_WEBHOOK_ALLOW_PRIVATE") {
		t.Errorf("serve with WAYBILL_WEBHOOK_ALLOW_PRIVATE=yes = %v; want an error naming it", err)
	}
	// The flag wins: serve goes on, to fail only at listening on an address that cannot be.
	if err := run("serve", "-db", db, "-webhook-allow-private", "-addr", "127.0.0.1:-1"); err == nil || strings.Contains(err.Error(), "WAYBILL_WEBHOOK_ALLOW_PRIVATE") {
		t.Errorf("serve -webhook-allow-private with WAYBILL_WEBHOOK_ALLOW_PRIVATE=yes = %v; want the listen error only", err)
	}
}

// TestFirstStartNeedsTheListener: a first start that cannot listen prints no token and leaves
// the first start to the next one, which prints exactly one token line.
func TestFirstStartNeedsTheListener(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	db := filepath.Join(t.TempDir(), "w.db")
	out, err := runCLI(t, "serve", "-db", db, "-addr", busy.Addr().String())
	if err == nil || out != "" {
		t.Fatalf("serve on a busy address = %q, %v; want an error and nothing on stdout", out, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	e := &env{d: sqlite, limits: testLimits, getenv: noEnv, stdin: strings.NewReader(""), stdout: stdout, stderr: stderr}
	done := make(chan error, 1)
	go func() { done <- run(ctx, e, []string{"serve", "-db", db, "-addr", "127.0.0.1:0"}) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), `"msg":"listening"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^token: wb_[A-Za-z0-9_-]{43}\n$`).MatchString(stdout.String()) {
		t.Errorf("the first start that served printed %q; want exactly one token line", stdout)
	}
}

// TestCarrierCommands: waybill carrier put, prices and list store versions as the API does,
// print the version stored beside the one in force, read a grid as spreadsheets save it, and
// refuse a bad card or grid or a tracking range another carrier's meets, naming what is wrong.
func TestCarrierCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	card := filepath.Join(dir, "acme.json")
	write := func(name, body string) {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(card, `{"code": "ACMEX", "name": "Acme Express", "effective_from": "2026-01-01", "max_weight_oz": 1120,
	 "max_length_in": 108, "max_length_plus_girth_in": 165, "services": [{"code": "GROUND", "name": "Acme Ground",
	 "transit_days": [1, 2, 2, 3, 3, 4, 4, 5], "weight_breaks_oz": [16], "prices_cents": [[510, 525, 540, 560, 585, 610, 640, 675]]}],
	 "tracking": {"scheme": "luhn", "prefix": "AX", "digits": 12, "range_start": 1, "range_end": 999999}}`)
	future := filepath.Join(dir, "future.json") // no version in force yet
	body, err := os.ReadFile(card)
	if err != nil {
		t.Fatal(err)
	}
	write(future, strings.NewReplacer("ACMEX", "FUTUR", "2026-01-01", "2099-01-01", `"AX"`, `"FX"`).Replace(string(body)))
	grid := filepath.Join(dir, "grid.csv")
	write(grid, "weight_lb,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\n1,5.10,5.25,5.40,5.60,5.85,6.10,6.40,6.75\n2,6.20,6.40,6.60,6.85,7.15,7.45,7.80,8.20\n")
	excelGrid := filepath.Join(dir, "excel.csv") // the same grid, saved as "CSV UTF-8"
	write(excelGrid, "\ufeffweight_lb,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\r\n1,5.10,5.25,5.40,5.60,5.85,6.10,6.40,6.75\r\n2,6.20,6.40,6.60,6.85,7.15,7.45,7.80,8.20\r\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-db", db, "carrier", "put", card}, `{"code":"ACMEX","version":1,"effective_from":"2026-01-01","in_force_version":1,"created":true}`},
		{[]string{"carrier", "prices", "ACMEX", "GROUND", grid, "-effective-from", "2099-01-01", "-db", db}, `{"code":"ACMEX","version":2,"effective_from":"2099-01-01","in_force_version":1,"created":false}`},
		{[]string{"carrier", "put", future, "-db", db}, `{"code":"FUTUR","version":1,"effective_from":"2099-01-01","in_force_version":null,"created":true}`},
		{[]string{"carrier", "-db", db, "list"}, `{"code":"ACMEX","name":"Acme Express","version":1,"effective_from":"2026-01-01","in_force_version":1,"services":["GROUND"]}` + "\n" +
			`{"code":"FUTUR","name":"Acme Express","version":1,"effective_from":"2099-01-01","in_force_version":null,"services":["GROUND"]}`},
		{[]string{"carrier", "prices", "ACMEX", "GROUND", excelGrid, "-effective-from", "2099-01-01", "-dry-run", "-db", db},
			`{"code":"ACMEX","version":3,"effective_from":"2099-01-01","in_force_version":1,"created":false,"dry_run":true,"changes":[]}`},
	} {
		out, err := runCLI(t, tt.args...)
		if err != nil || strings.TrimSpace(out) != tt.want {
			t.Errorf("waybill %q = %q, %v; want %s", tt.args, out, err, tt.want)
		}
	}
	write(grid, "weight_oz,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\n16,5,5,5,5,5,5,5,x\n")
	if _, err := runCLI(t, "carrier", "prices", "ACMEX", "GROUND", grid, "-db", db); err == nil || !strings.Contains(err.Error(), "row 1, zone_8") {
		t.Errorf("carrier prices with a bad cell = %v; want an error naming row 1, zone_8", err)
	}
	beta := filepath.Join(dir, "beta.json")
	write(beta, strings.Replace(strings.Replace(string(body), "ACMEX", "BETAX", 1), `"range_start": 1,`, `"range_start": 999999,`, 1))
	for _, dry := range []string{"-dry-run", "-dry-run=false"} {
		if _, err := runCLI(t, "carrier", "put", dry, beta, "-db", db); err == nil || !strings.Contains(err.Error(), "tracking.range_start") || !strings.Contains(err.Error(), "carrier ACMEX") {
			t.Errorf("carrier put %s of a range ACMEX's meets = %v; want an error naming tracking.range_start and ACMEX", dry, err)
		}
	}
	write(card, `{"code": "ACMEX", "name": ""}`)
	if _, err := runCLI(t, "carrier", "put", card, "-db", db); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("carrier put of a bad card = %v; want a validation error", err)
	}
	if _, err := runCLI(t, "carrier", "prices", "NOPE", "GROUND", grid, "-db", db); err == nil {
		t.Error("carrier prices of an unknown carrier succeeded")
	}
}

// TestBaseURLFlag: a -base-url that is not an http or https URL with a host stops serve before
// it opens anything: label and document URLs begin with it.
func TestBaseURLFlag(t *testing.T) {
	for _, v := range []string{"not a url", "ftp://example.com", "https://", "example.com/waybill"} {
		db := filepath.Join(t.TempDir(), "w.db")
		_, err := runCLI(t, "serve", "-db", db, "-base-url", v)
		if err == nil || !strings.Contains(err.Error(), "-base-url") {
			t.Errorf("serve -base-url %q: %v; want an error naming the flag", v, err)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("serve -base-url %q created the database", v)
		}
	}
}

// TestStopWhileOpening: a stop (SIGINT, SIGTERM) that comes while serve opens its database — a
// first start's migrations — is not a failure: serve returns nil, logs it and prints no token;
// the database opens again.
func TestStopWhileOpening(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.db")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	e := &env{d: sqlite, limits: testLimits, getenv: noEnv, stdin: strings.NewReader(""), stdout: stdout, stderr: stderr}
	if err := run(ctx, e, []string{"serve", "-db", db, "-addr", "127.0.0.1:0"}); err != nil || stdout.String() != "" {
		t.Fatalf("serve stopped while opening = %v, printed %q; want nil and nothing", err, stdout)
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped before serving"`) {
		t.Errorf("serve stopped while opening logged %q; want a JSON line saying so", stderr)
	}
	if _, err := os.Stat(db); err == nil {
		if _, err := runCLI(t, "account", "list", "-db", db); err != nil {
			t.Errorf("the database after a stop while opening: %v", err)
		}
	}
}

// TestTrackingPollIntervalFlag: a bad -tracking-poll-interval stops serve before it opens
// anything.
func TestTrackingPollIntervalFlag(t *testing.T) {
	for _, v := range []string{"soon", "0s", "-1h"} {
		_, err := runCLI(t, "serve", "-db", filepath.Join(t.TempDir(), "w.db"), "-tracking-poll-interval", v)
		if err == nil || !strings.Contains(err.Error(), "tracking-poll-interval") {
			t.Errorf("serve -tracking-poll-interval %s: %v; want an error naming the flag", v, err)
		}
	}
}
