package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/store"
)

// LedgerCarrier is a host's Go carrier that sells labels outside waybill: each sale and void is
// appended to a ledger file, the carrier's own books, which no crash of waybill touches. A
// repeated Purchase of a label id it sold answers that label, unless it is Unrepeatable, which
// sells again. PauseAfterSale holds each sale for a while before answering, for a test to kill
// the process between the sale and its record, or to buy in another process meanwhile.
type LedgerCarrier struct {
	shipping.Carrier // a sample card quotes
	Path             string
	Mode             shipping.PurchaseMode
	PauseAfterSale   time.Duration
}

var ledgerMu sync.Mutex

func (c LedgerCarrier) Name() string                        { return "LEDGER" }
func (c LedgerCarrier) PurchaseMode() shipping.PurchaseMode { return c.Mode }

func (c LedgerCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	ledgerMu.Lock()
	sold, n := readLedger(c.Path)
	if code, ok := sold[req.LabelID]; ok && c.Mode != shipping.Unrepeatable {
		ledgerMu.Unlock()
		return code, nil
	}
	code := fmt.Sprintf("LG-%d-%s", n+1, req.LabelID[len(req.LabelID)-12:])
	err := appendLedger(c.Path, "sold "+req.LabelID+" "+code)
	ledgerMu.Unlock()
	if err != nil {
		return "", err
	}
	time.Sleep(c.PauseAfterSale)
	return code, nil
}

func (c LedgerCarrier) Void(ctx context.Context, code string) error {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	return appendLedger(c.Path, "void - "+code)
}

// readLedger returns the labels the ledger sold, tracking code by label id, and its sales.
func readLedger(path string) (sold map[string]string, sales int) {
	b, _ := os.ReadFile(path)
	sold = map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "sold" {
			sold[f[1]] = f[2]
			sales++
		}
	}
	return sold, sales
}

// LedgerCounts counts the sales and voids in the ledger, with the codes sold in order.
func LedgerCounts(path string) (sales, voids int, codes []string) {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "sold":
			sales++
			codes = append(codes, f[2])
		case len(f) == 3 && f[0] == "void":
			voids++
		}
	}
	return sales, voids, codes
}

func appendLedger(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		return err
	}
	return f.Sync()
}

// HostMain is a host program embedding waybill with the ledger carrier, for a TestMain to run
// first: under WAYBILL_TEST_HOST it opens WAYBILL_TEST_DB with open, serves until killed and
// exits; otherwise it returns at once.
func HostMain(open func(ctx context.Context, dsn string) (*store.DB, error)) {
	mode := os.Getenv("WAYBILL_TEST_HOST")
	if mode == "" {
		return
	}
	if err := host(open, mode); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func host(open func(ctx context.Context, dsn string) (*store.DB, error), mode string) error {
	ctx := context.Background()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	db, err := open(ctx, os.Getenv("WAYBILL_TEST_DB"))
	if err != nil {
		return err
	}
	pause, _ := time.ParseDuration(os.Getenv("WAYBILL_TEST_PAUSE"))
	c := LedgerCarrier{Path: os.Getenv("WAYBILL_TEST_LEDGER"), PauseAfterSale: pause}
	if mode == "unrepeatable" {
		c.Mode = shipping.Unrepeatable
	}
	for _, sample := range carrier.SampleCarriers() {
		if sample.Name() == "POSTLINE" {
			c.Carrier = sample
		}
	}
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: "http://127.0.0.1", Carriers: []shipping.Carrier{c},
		CarrierTimeout: 2 * time.Second, Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	log.Info("listening", "addr", ln.Addr().String())
	go api.Run(ctx)
	return http.Serve(ln, api)
}

// StartHost starts this test binary as a host (HostMain) on the database dsn and the ledger,
// the carrier holding each sale for pause, and returns its base URL and process.
func StartHost(t *testing.T, dsn, ledger, mode string, pause time.Duration) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WAYBILL_TEST_HOST="+mode, "WAYBILL_TEST_DB="+dsn, "WAYBILL_TEST_LEDGER="+ledger,
		"WAYBILL_TEST_PAUSE="+pause.String())
	return Listening(t, cmd), cmd
}

// Listening starts cmd, a waybill server, waits until it logs the address it listens on, and
// returns its base URL; the process is killed when the test ends.
func Listening(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stderr := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	re := regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1]
		}
	}
	t.Fatalf("%s did not start:\n%s", cmd.Path, stderr)
	return ""
}

// HostClient sends a host's API requests with one token.
type HostClient struct {
	Base, Token string
}

// Do sends a request (an Idempotency-Key with key when not empty) and decodes a 2xx answer
// into out; status 0 is a request never answered.
func (c *HostClient) Do(method, path, key, body string, out any) int {
	req, _ := http.NewRequest(method, c.Base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	if out != nil && res.StatusCode < 300 {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			return 0
		}
	}
	return res.StatusCode
}

// HostShipment makes the ledger profile and a shipment it quotes, and returns the buy's path.
func (c *HostClient) HostShipment(t *testing.T) string {
	t.Helper()
	if code := c.Do("PUT", "/admin/rate_shopping_profiles/ledger", "", `{"name": "Ledger", "carriers": ["LEDGER"]}`, nil); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("PUT profile: %d", code)
	}
	var s struct {
		Data struct {
			ID    string
			Rates []struct{ ID string } `json:"shipping_rates"`
		}
	}
	body := `{"rate_shopping_profile": "ledger", "origin": {"name": "A", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "B", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`
	if code := c.Do("POST", "/shipments", "", body, &s); code != http.StatusCreated || len(s.Data.Rates) == 0 {
		t.Fatalf("POST /shipments: %d %+v", code, s)
	}
	return "/shipments/" + s.Data.ID + "/rates/" + s.Data.Rates[0].ID
}

// SoldOnce: buys of one shipment sent to two processes at once, 20 of them alternating between
// the two, reach the carrier once: the purchase's attempt, in the database, is what the others
// wait on. dsn is the database, token one with WRITE_SHIPMENTS and ADMIN.
func SoldOnce(t *testing.T, dsn, token, ledger string) {
	a, _ := StartHost(t, dsn, ledger, "repeatable", 300*time.Millisecond)
	b, _ := StartHost(t, dsn, ledger, "repeatable", 300*time.Millisecond)
	hosts := []*HostClient{{a, token}, {b, token}}
	path := hosts[0].HostShipment(t)
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			switch hosts[i%2].Do("POST", path, "", "", nil) {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusUnprocessableEntity: // bought by the first: not OPEN any more
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if sales, voids, _ := LedgerCounts(ledger); sales != 1 || voids != 0 || ok.Load() != 1 || refused.Load() != 19 {
		t.Errorf("20 buys of one shipment in two processes: %d answered 200, %d 422; the carrier sold %d and voided %d; want 1, 19, 1 and 0",
			ok.Load(), refused.Load(), sales, voids)
	}
}

// CrashBetweenSaleAndRecord kills a host process (SIGKILL) after its Go carrier sold a label and
// before waybill recorded it, then starts it again. The purchase was recorded before the carrier
// was called, so nothing is lost: a carrier that may be asked again under the same label id is,
// and the label recorded, which the client's retry under its Idempotency-Key replays; a carrier
// that cannot be is left UNRESOLVED (the retry is 422 purchase_unresolved, GET /admin/purchases
// lists it, and resolve — `waybill purchase resolve` — records what the operator found at the
// carrier). Either way the carrier sells once.
func CrashBetweenSaleAndRecord(t *testing.T, dsn, token string, resolve func(labelID, code string) error) {
	for _, mode := range []string{"repeatable", "unrepeatable"} {
		t.Run(mode, func(t *testing.T) {
			ledger := t.TempDir() + "/ledger"
			base, cmd := StartHost(t, dsn, ledger, mode, time.Minute)
			c := &HostClient{base, token}
			path := c.HostShipment(t)
			key := "crash-" + mode
			go c.Do("POST", path, key, "", nil)
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
				if sales, _, _ := LedgerCounts(ledger); sales == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the carrier never sold")
				}
			}
			soldAt := time.Now()
			cmd.Process.Kill() // SIGKILL between the sale and its record
			cmd.Wait()
			_, _, codes := LedgerCounts(ledger)
			// Past the carrier's deadline (2 s) and the grace recovery gives a live process.
			time.Sleep(time.Until(soldAt.Add(8 * time.Second)))
			c.Base, _ = StartHost(t, dsn, ledger, mode, 0)

			var b struct {
				Data struct {
					Label struct {
						TrackingCode string `json:"tracking_code"`
					} `json:"shipping_label"`
				}
			}
			code := c.Do("POST", path, key, "", &b)
			if mode == "unrepeatable" {
				if code != http.StatusUnprocessableEntity {
					t.Fatalf("the retry under the key = %d; want 422 purchase_unresolved", code)
				}
				var list struct {
					Data []struct {
						LabelID string `json:"label_id"`
					}
				}
				if code := c.Do("GET", "/admin/purchases?state=UNRESOLVED", "", "", &list); code != http.StatusOK || len(list.Data) != 1 {
					t.Fatalf("GET /admin/purchases?state=UNRESOLVED = %d %+v; want the one attempt", code, list)
				}
				if err := resolve(list.Data[0].LabelID, codes[0]); err != nil {
					t.Fatalf("purchase resolve: %v", err)
				}
				code = c.Do("POST", path, key, "", &b)
			}
			if code != http.StatusOK || b.Data.Label.TrackingCode != codes[0] {
				t.Errorf("the retry under the key = %d, label %q; want the label sold before the crash, %q", code, b.Data.Label.TrackingCode, codes[0])
			}
			var left struct{ Data []any }
			if code := c.Do("GET", "/admin/purchases", "", "", &left); code != http.StatusOK || len(left.Data) != 0 {
				t.Errorf("GET /admin/purchases = %d, %d attempts; want none left", code, len(left.Data))
			}
			if sales, voids, _ := LedgerCounts(ledger); sales != 1 || voids != 0 {
				t.Errorf("the carrier sold %d and voided %d; want 1 and 0", sales, voids)
			}
		})
	}
}
