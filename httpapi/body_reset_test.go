package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// bodyRoutes lists the document's operations that take a request body, as "METHOD /path"
// with every path parameter filled with an id that names nothing.
func bodyRoutes(t *testing.T) []string {
	t.Helper()
	var routes []string
	for pattern, op := range documentedRoutes(openAPIDoc(t)) {
		if _, ok := op["requestBody"]; ok {
			routes = append(routes, pathParam.ReplaceAllString(pattern, "00000000-0000-7000-8000-0000000000ff"))
		}
	}
	slices.Sort(routes)
	if len(routes) < 10 {
		t.Fatalf("only %d operations take a body", len(routes))
	}
	return routes
}

// rawExchange sends one request over a new connection the way most clients do: the whole
// request first (head, then body pieces, sleeping pause between them), then the answer is
// read. It returns the answer's status and body, and the error that kept the request from
// being sent or the answer from being read whole.
func rawExchange(addr, head string, pieces [][]byte, pause time.Duration) (int, []byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetWriteBuffer(32 << 10)
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, nil, err
	}
	for _, p := range pieces {
		if _, err := conn.Write(p); err != nil {
			// The server closed the connection under the body: many clients (Python's
			// urllib3, say) give up here and never read the answer.
			return 0, nil, fmt.Errorf("sending the body: %w", err)
		}
		time.Sleep(pause)
	}
	conn.(*net.TCPConn).CloseWrite()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, err
	}
	b, err := io.ReadAll(res.Body)
	if err == nil && res.ContentLength < 0 {
		err = fmt.Errorf("the answer has no Content-Length (%v)", res.TransferEncoding)
	}
	return res.StatusCode, b, err
}

// TestBodyRefusalsArriveWhole: every route that takes a body answers an oversized, slowly sent
// or mis-declared body with a complete JSON error, read by a client that sends its whole body
// before it reads (a fuzzer saw "connection reset by peer" here: the server closed the
// connection with body bytes unread, and the reset threw the answer away).
func TestBodyRefusalsArriveWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: sends megabytes to every body route")
	}
	e := newEnv(t)
	srv := httptest.NewUnstartedServer(e.api)
	// Kernel buffers as small as a real network path holds in flight; on loopback they would
	// take in megabytes before the client ever waits on the server.
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close) // after the parallel subtests
	addr := srv.Listener.Addr().String()
	big := bytes.Repeat([]byte("x"), 4<<20) // 4 MiB: more than the kernel buffers hold
	split := func(b []byte, n int) [][]byte {
		var out [][]byte
		for len(b) > n {
			out, b = append(out, b[:n]), b[n:]
		}
		return append(out, b)
	}
	chunked := func(b []byte) []byte {
		var out []byte
		for _, p := range split(b, 32<<10) {
			out = append(out, fmt.Sprintf("%x\r\n", len(p))...)
			out = append(append(out, p...), "\r\n"...)
		}
		return append(out, "0\r\n\r\n"...)
	}
	cases := []struct {
		name    string
		headers string
		pieces  [][]byte
		pause   time.Duration
		status  int
		code    string
	}{
		{"4 MiB with Content-Length", fmt.Sprintf("Content-Length: %d\r\n", len(big)), split(big, 256<<10), 0, 413, "payload_too_large"},
		{"4 MiB chunked", "Transfer-Encoding: chunked\r\n", split(chunked(big), 256<<10), 0, 413, "payload_too_large"},
		{"2 MiB sent slowly", fmt.Sprintf("Content-Length: %d\r\n", 2<<20), split(big[:2<<20], 64<<10), 10 * time.Millisecond, 413, "payload_too_large"},
		{"Content-Length beyond the body", "Content-Length: 100\r\n", [][]byte{[]byte(`{"a":`)}, 0, 400, "malformed_json"},
		{"a chunk cut short", "Transfer-Encoding: chunked\r\n", [][]byte{[]byte("10\r\n{\"a\"")}, 0, 400, "malformed_json"},
	}
	for _, route := range bodyRoutes(t) {
		method, path, _ := strings.Cut(route, " ")
		cases := cases
		if method == "PUT" && strings.Count(path, "/") == 3 && strings.HasPrefix(path, "/admin/carriers/") {
			// Cards may be 16 MiB: the oversized bodies are over that.
			card := bytes.Repeat([]byte("x"), maxCardBody+(3<<20))
			cases = slices.Clone(cases)
			cases[0].headers, cases[0].pieces = fmt.Sprintf("Content-Length: %d\r\n", len(card)), split(card, 1<<20)
			cases[1].pieces = split(chunked(card), 1<<20)
			cases[2].headers, cases[2].pieces = fmt.Sprintf("Content-Length: %d\r\n", maxCardBody+(1<<20)), split(card[:maxCardBody+(1<<20)], 1<<20)
		}
		for _, tc := range cases {
			t.Run(route+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: waybill.test\r\nAuthorization: Bearer %s\r\n"+
					"Content-Type: application/json\r\n%s\r\n", method, path, e.tokens["admin"], tc.headers)
				status, body, err := rawExchange(addr, head, tc.pieces, tc.pause)
				var got struct {
					Errors struct{ Code string } `json:"errors"`
				}
				if err != nil || json.Unmarshal(body, &got) != nil || status != tc.status || got.Errors.Code != tc.code {
					t.Errorf("%d %.200s (%v); want a whole %d %s", status, body, err, tc.status, tc.code)
				}
			})
		}
	}
}

// smallBuffers is a listener whose connections have small receive buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(32 << 10)
	}
	return c, err
}
