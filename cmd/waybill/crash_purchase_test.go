package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/store"
)

// ledgerCarrier is a host's Go carrier that sells labels outside waybill: each sale and void is
// appended to a ledger file, the carrier's own books, which no crash of waybill touches. A
// repeated Purchase of a label id it sold answers that label, unless it is Unrepeatable, which
// sells again.
type ledgerCarrier struct {
	shipping.Carrier // a sample card quotes
	path             string
	mode             shipping.PurchaseMode
	pauseAfterSale   bool
}

var ledgerMu sync.Mutex

func (c ledgerCarrier) Name() string                        { return "LEDGER" }
func (c ledgerCarrier) PurchaseMode() shipping.PurchaseMode { return c.mode }

func (c ledgerCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	sold, n := readLedger(c.path)
	if code, ok := sold[req.LabelID]; ok && c.mode != shipping.Unrepeatable {
		return code, nil
	}
	code := fmt.Sprintf("LG-%d-%s", n+1, req.LabelID[len(req.LabelID)-12:])
	if err := appendLedger(c.path, "sold "+req.LabelID+" "+code); err != nil {
		return "", err
	}
	if c.pauseAfterSale {
		slog.Info("sold", "tracking_code", code)
		time.Sleep(time.Minute) // killed meanwhile: sold, not recorded
	}
	return code, nil
}

func (c ledgerCarrier) Void(ctx context.Context, code string) error {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	return appendLedger(c.path, "void - "+code)
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

// ledgerCounts counts the sales and voids in the ledger.
func ledgerCounts(path string) (sales, voids int, codes []string) {
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

// hostChild is a host program embedding waybill with the ledger carrier, as TestMain runs it
// under WAYBILL_TEST_HOST: it serves until killed.
func hostChild() error {
	ctx := context.Background()
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	db, err := store.OpenSQLite(ctx, os.Getenv("WAYBILL_TEST_DB"))
	if err != nil {
		return err
	}
	c := ledgerCarrier{path: os.Getenv("WAYBILL_TEST_LEDGER"), pauseAfterSale: os.Getenv("WAYBILL_TEST_PAUSE") == "1"}
	if os.Getenv("WAYBILL_TEST_HOST") == "unrepeatable" {
		c.mode = shipping.Unrepeatable
	}
	for _, sample := range carrier.SampleCarriers() {
		if sample.Name() == "POSTLINE" {
			c.Carrier = sample
		}
	}
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: "http://127.0.0.1", Carriers: []shipping.Carrier{c},
		CarrierTimeout: time.Second, Logger: slog.Default()})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	slog.Info("listening", "addr", ln.Addr().String())
	go api.Run(ctx)
	return http.Serve(ln, api)
}

// startHost starts hostChild on dbPath and the ledger, and returns its base URL and process.
func startHost(t *testing.T, dbPath, ledger, mode string, pause bool) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WAYBILL_TEST_HOST="+mode, "WAYBILL_TEST_DB="+dbPath, "WAYBILL_TEST_LEDGER="+ledger,
		"WAYBILL_TEST_PAUSE="+map[bool]string{true: "1", false: "0"}[pause])
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	re := regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], cmd
		}
	}
	t.Fatalf("host did not start:\n%s", stderr)
	return "", nil
}

// TestCrashBetweenSaleAndRecord kills a host process (SIGKILL) after its Go carrier sold a label
// and before waybill recorded it, then starts it again. The purchase was recorded before the
// carrier was called, so nothing is lost: a carrier that may be asked again under the same label
// id is, and the label recorded, which the client's retry under its Idempotency-Key replays; a
// carrier that cannot be is left UNRESOLVED (the retry is 422 purchase_unresolved, the operator
// lists it and resolves it with what the carrier did). Either way the carrier sells once.
func TestCrashBetweenSaleAndRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills server processes")
	}
	for _, mode := range []string{"repeatable", "unrepeatable"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			dbPath, ledger := filepath.Join(dir, "waybill.db"), filepath.Join(dir, "ledger")
			_, token := createAccount(t, dbPath, "Host", "READ_SHIPMENTS,WRITE_SHIPMENTS,ADMIN")
			base, cmd := startHost(t, dbPath, ledger, mode, true)
			c := &crashClient{base: base, token: token, client: &http.Client{Timeout: 30 * time.Second}}
			if code, err := c.do("PUT", "/admin/rate_shopping_profiles/ledger", nil, `{"name": "Ledger", "carriers": ["LEDGER"]}`, nil); code != http.StatusCreated {
				t.Fatalf("PUT profile: %d %v", code, err)
			}
			var s struct {
				Data struct {
					ID    string
					Rates []struct{ ID string } `json:"shipping_rates"`
				}
			}
			body := strings.Replace(crashShipmentBody, "{", `{"rate_shopping_profile": "ledger", `, 1)
			if code, err := c.do("POST", "/shipments", nil, body, &s); code != http.StatusCreated || len(s.Data.Rates) == 0 {
				t.Fatalf("POST /shipments: %d %v %+v", code, err, s)
			}
			path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.Rates[0].ID
			key := map[string]string{"Idempotency-Key": "crash-1"}
			go c.do("POST", path, key, "", nil)
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
				if sales, _, _ := ledgerCounts(ledger); sales == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the carrier never sold")
				}
			}
			soldAt := time.Now()
			cmd.Process.Kill() // SIGKILL between the sale and its record
			cmd.Wait()
			_, _, codes := ledgerCounts(ledger)
			time.Sleep(time.Until(soldAt.Add(7 * time.Second))) // past the deadline and the grace
			base, _ = startHost(t, dbPath, ledger, mode, false)
			c.base = base

			var b struct {
				Data struct {
					Label struct {
						ID           string
						TrackingCode string `json:"tracking_code"`
					} `json:"shipping_label"`
				}
			}
			code, err := c.do("POST", path, key, "", &b)
			if mode == "repeatable" {
				if code != http.StatusOK || b.Data.Label.TrackingCode != codes[0] {
					t.Fatalf("the retry under the key = %d %v, label %q; want the label sold before the crash, %q", code, err, b.Data.Label.TrackingCode, codes[0])
				}
			} else {
				if code != http.StatusUnprocessableEntity {
					t.Fatalf("the retry under the key = %d %v; want 422 purchase_unresolved", code, err)
				}
				var list struct {
					Data []struct {
						LabelID string `json:"label_id"`
						State   string
					}
				}
				if code, err := c.do("GET", "/admin/purchases?state=UNRESOLVED", nil, "", &list); code != http.StatusOK || len(list.Data) != 1 {
					t.Fatalf("GET /admin/purchases?state=UNRESOLVED = %d %v %+v; want the one attempt", code, err, list)
				}
				var out strings.Builder
				if err := run(context.Background(), []string{"purchase", "resolve", list.Data[0].LabelID, "-tracking", codes[0], "-db", dbPath},
					env(nil), nil, &out, io.Discard); err != nil {
					t.Fatalf("purchase resolve: %v", err)
				}
				if code, err := c.do("POST", path, key, "", &b); code != http.StatusOK || b.Data.Label.TrackingCode != codes[0] {
					t.Fatalf("the retry once resolved = %d %v, label %q; want %q replayed", code, err, b.Data.Label.TrackingCode, codes[0])
				}
			}
			sales, voids, _ := ledgerCounts(ledger)
			db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var labels, attempts int
			db.QueryRow(`SELECT COUNT(*) FROM shipping_labels`).Scan(&labels)
			db.QueryRow(`SELECT COUNT(*) FROM purchase_attempts`).Scan(&attempts)
			if sales != 1 || voids != 0 || labels != 1 || attempts != 0 {
				t.Errorf("ledger: %d sold, %d voided; stored: %d labels, %d attempts; want 1, 0, 1, 0", sales, voids, labels, attempts)
			}
		})
	}
}
