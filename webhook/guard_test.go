package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestBlocked(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.255.0.9", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"0.0.0.0", true},
		{"224.0.0.1", true},
		{"255.255.255.255", true},
		{"8.8.8.8", false},
		{"100.63.255.255", false},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"198.20.0.1", false},
		{"192.0.0.8", true},
		{"192.0.2.10", true},
		{"192.0.3.1", false},
		{"198.51.100.7", true},
		{"203.0.113.200", true},
		{"203.0.114.1", false},
		{"192.88.99.1", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"223.255.255.255", false},
		{"255.255.255.254", true},
		{"93.184.216.34", false},
		{"::1", true},
		{"::", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::a00:1", true},
		{"2002:7f00:1::", true},
		{"2002:5db8:d822::1", true}, // 6to4, whatever it embeds
		{"2001:db8::1", true},
		{"3fff::1", true},
		{"2001::1", true}, // Teredo
		{"2001:2::1", true},
		{"ff05::1:3", true},
		{"fdff:ffff::1", true},
		{"::ffff:203.0.113.1", true},
		{"::ffff:100.64.0.1", true},
		{"2606:4700:4700::1111", false},
		{"2001:4860:4860::8888", false},
	}
	for _, tt := range tests {
		if got := Blocked(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("Blocked(%q) = %v; want %v", tt.ip, got, tt.want)
		}
	}
	if !Blocked(netip.Addr{}) {
		t.Errorf("Blocked(zero Addr) = false; want true")
	}
}

// fakeResolver answers from a map; a missing host does not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range ips {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	r := fakeResolver{
		"hooks.example.com": {"93.184.216.34"},
		"localhost":         {"127.0.0.1", "::1"},
		"rebind.example":    {"93.184.216.34", "10.0.0.5"},
		"v6.example":        {"2606:4700::1"},
		"v6private.example": {"fd00::5"},
	}
	tests := []struct {
		url          string
		allowPrivate bool
		wantCode     string // "" when valid
	}{
		{"https://hooks.example.com/waybill", false, ""},
		{"http://hooks.example.com:8080/x?y=1", false, ""},
		{"https://v6.example/", false, ""},
		{"https://93.184.216.34/", false, ""},
		{"", false, "required"},
		{"hooks.example.com/x", false, "invalid_url"},
		{"/relative", false, "invalid_url"},
		{"ftp://hooks.example.com/", false, "invalid_url"},
		{"javascript:alert(1)", false, "invalid_url"},
		{"https://", false, "invalid_url"},
		{"http://hooks.example.com:99999/", false, "invalid_url"}, // no such port
		{"http://hooks.example.com:0/", false, "invalid_url"},
		{"http://hooks.example.com:65535/", false, ""},
		{"http://hooks.example.com:/", false, ""}, // an empty port is the scheme's
		{"https://hooks.example.com/" + strings.Repeat("a", MaxURLLength), false, "too_long"},
		{"http://localhost:8080/", false, "private_address"},
		{"http://LocalHost./", false, "private_address"},
		{"http://api.localhost/", false, "private_address"},
		{"http://127.0.0.1/", false, "private_address"},
		{"http://[::1]/", false, "private_address"},
		{"http://[::ffff:127.0.0.1]/", false, "private_address"},
		{"http://169.254.169.254/latest/meta-data", false, "private_address"},
		{"http://100.64.1.1/", false, "private_address"},
		{"http://198.18.0.1/", false, "private_address"},
		{"http://192.0.2.1/", false, "private_address"},
		{"http://198.51.100.1/", false, "private_address"},
		{"http://203.0.113.1/", false, "private_address"},
		{"http://224.0.0.251/", false, "private_address"},
		{"http://240.1.2.3/", false, "private_address"},
		{"http://255.255.255.255/", false, "private_address"},
		{"http://[2001:db8::1]/", false, "private_address"},
		{"http://[ff02::1]/", false, "private_address"},
		{"http://[fd00::1]/", false, "private_address"},
		{"http://127.1/", false, "numeric_shorthand"},
		{"http://0x7f000001/", false, "numeric_shorthand"},
		{"http://0X7F000001:8080/", false, "numeric_shorthand"},
		{"http://2130706433/", false, "numeric_shorthand"},
		{"http://0177.0.0.1/", false, "numeric_shorthand"},
		{"http://0/", false, "numeric_shorthand"},
		{"http://127.0.0.1./", false, "private_address"},
		{"http://127.1./", false, "numeric_shorthand"},
		{"http://8.8.8.010/", false, "numeric_shorthand"},
		{"http://127.1/", true, ""}, // refused unless -webhook-allow-private
		{"http://0x7f000001/", true, ""},
		{"http://2130706433:8080/", true, ""},
		{"ftp://127.1/", true, "invalid_url"},
		{"https://1password.com/", false, ""},
		{"https://example.0x/", false, "numeric_shorthand"},
		{"http://0.0.0.0/", false, "private_address"},
		{"http://[fe80::1%25eth0]/", false, "private_address"},
		{"https://rebind.example/", false, "private_address"},
		{"https://v6private.example/", false, "private_address"},
		{"https://nowhere.example/", false, ""}, // checked again when dialled
		{"http://localhost:8080/", true, ""},
		{"http://127.0.0.1/", true, ""},
		{"ftp://127.0.0.1/", true, "invalid_url"},
	}
	for _, tt := range tests {
		err := CheckURL(context.Background(), "url", tt.url, tt.allowPrivate, r)
		got := ""
		var fe *FieldError
		if errors.As(err, &fe) && fe.Field == "url" {
			got = fe.Code
		} else if err != nil {
			t.Errorf("CheckURL(%q) = %v; want a FieldError on url", tt.url, err)
			continue
		}
		if got != tt.wantCode {
			t.Errorf("CheckURL(%q, allowPrivate=%v) code = %q; want %q", tt.url, tt.allowPrivate, got, tt.wantCode)
		}
	}
}

func TestNumericShorthand(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"127.1", true},
		{"0x7f000001", true},
		{"0x7F.1", true},
		{"2130706433", true},
		{"0177.0.0.1", true},
		{"0", true},
		{"0x", true},
		{"1.2.3.4.5", true},
		{"127.0.0.01", true},
		{"hooks.example.1", true},
		{"127.0.0.1", false},
		{"8.8.8.8", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"hooks.example.com", false},
		{"1password.com", false},
		{"0x7f000001.example", false},
		{"example.0xg", false},
		{"localhost", false},
	}
	for _, tt := range tests {
		if got := NumericShorthand(tt.host); got != tt.want {
			t.Errorf("NumericShorthand(%q) = %v; want %v", tt.host, got, tt.want)
		}
	}
}

// TestDialGuard shows the guard at dial time: the client of a worker that does not allow
// private addresses cannot reach a loopback receiver, whatever the URL's host resolves to.
func TestDialGuard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	for _, tt := range []struct {
		allowPrivate bool
		wantErr      bool
	}{{false, true}, {true, false}} {
		res, err := NewClient(tt.allowPrivate, 1).Get(srv.URL)
		if err == nil {
			res.Body.Close()
		}
		if (err != nil) != tt.wantErr {
			t.Errorf("GET loopback with allowPrivate=%v: err = %v; want error %v", tt.allowPrivate, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "refused") {
			t.Errorf("GET loopback: err = %v; want the guard's refusal, not a connection refusal", err)
		}
	}
	// "localhost" resolves at dial time; every address it resolves to is refused.
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	if _, err := NewClient(false, 1).Get("http://localhost:" + port + "/"); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("GET http://localhost:%s = %v; want the guard's refusal", port, err)
	}
}

func TestDialControl(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:4700::1]:443", true},
		{"127.0.0.1:80", false},
		{"[::1]:80", false},
		{"[::ffff:10.0.0.1]:80", false},
		{"10.0.0.1:80", false},
		{"not-an-address", false},
	}
	for _, tt := range tests {
		if err := DialControl("tcp", tt.addr, nil); (err == nil) != tt.ok {
			t.Errorf("DialControl(%q) = %v; want ok %v", tt.addr, err, tt.ok)
		}
	}
}
