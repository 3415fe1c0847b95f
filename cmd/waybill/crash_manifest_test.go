package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
)

// crashClient sends JSON requests; an error is a request the server never answered whole.
type crashClient struct {
	base, token string
	client      *http.Client
}

func (c *crashClient) do(method, path string, header map[string]string, body string, out any) (int, error) {
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
		return 0, err // cut off mid-answer: not acknowledged
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return 0, err
		}
	}
	return res.StatusCode, nil
}

// buyLabels buys n labels and returns the carrier and their tracking codes.
func (c *crashClient) buyLabels(t *testing.T, n int) (carrier string, codes []string) {
	t.Helper()
	for range n {
		var s struct {
			Data struct {
				ID    string
				Rates []struct{ ID string } `json:"shipping_rates"`
			}
		}
		if code, err := c.do("POST", "/shipments", nil, crashShipmentBody, &s); code != http.StatusCreated {
			t.Fatalf("POST /shipments: %d %v", code, err)
		}
		var b struct {
			Data struct {
				Label struct {
					Carrier      string
					TrackingCode string `json:"tracking_code"`
				} `json:"shipping_label"`
			}
		}
		if code, err := c.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.Rates[0].ID, nil, "", &b); code != http.StatusOK {
			t.Fatalf("buy: %d %v", code, err)
		}
		carrier, codes = b.Data.Label.Carrier, append(codes, b.Data.Label.TrackingCode)
	}
	return carrier, codes
}

// checkNoHalfManifest reads the database after a kill: every manifest's labels point back at it,
// every manifested label is listed by its manifest, and no label is listed twice.
func checkNoHalfManifest(t *testing.T, dbPath string) (manifests, manifested int) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, label_ids, label_count FROM manifests`)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for rows.Next() {
		var id, ids string
		var n int
		if err := rows.Scan(&id, &ids, &n); err != nil {
			t.Fatal(err)
		}
		var list []string
		if err := json.Unmarshal([]byte(ids), &list); err != nil || len(list) != n {
			t.Errorf("manifest %s: label_count %d, ids %s (%v)", id, n, ids, err)
		}
		for _, l := range list {
			if other, dup := listed[l]; dup {
				t.Errorf("label %s is in manifests %s and %s", l, other, id)
			}
			listed[l] = id
		}
		manifests++
	}
	rows.Close()
	rows, err = db.Query(`SELECT id, manifest_id FROM shipping_labels WHERE manifest_id IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, m string
		if err := rows.Scan(&id, &m); err != nil {
			t.Fatal(err)
		}
		if listed[id] != m {
			t.Errorf("label %s has manifest_id %s; its manifest lists it: %v", id, m, listed[id] == m)
		}
		manifested++
	}
	rows.Close()
	if manifested != len(listed) {
		t.Errorf("%d labels have a manifest_id; the manifests list %d", manifested, len(listed))
	}
	return manifests, manifested
}

// TestCrashDuringCloseOutAndPush kills the server (SIGKILL) while a close-out of a few hundred
// labels runs, and while a carrier push of 1,000 events is being applied, at several moments.
// After each kill: no label is half-manifested (a manifest and its labels are written together
// or not at all), an acknowledged close-out is whole, and an acknowledged push is recorded in
// full; the carrier's retry of a cut-off push completes it, the events already applied coming
// back DUPLICATE.
func TestCrashDuringCloseOutAndPush(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills server processes")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	_, token := createAccount(t, dbPath, "Crash", "READ_SHIPMENTS,WRITE_SHIPMENTS,ADMIN")
	var allCodes []string
	var carrier string
	acknowledged := 0 // labels in acknowledged manifests
	for round, delay := range []time.Duration{5 * time.Millisecond, 60 * time.Millisecond, 250 * time.Millisecond, time.Second} {
		base, cmd := startChild(t, dbPath)
		c := &crashClient{base: base, token: token, client: &http.Client{Timeout: 30 * time.Second}}
		var codes []string
		carrier, codes = c.buyLabels(t, 120)
		allCodes = append(allCodes, codes...)
		type answer struct {
			code  int
			count int
		}
		done := make(chan answer, 1)
		go func() {
			var m struct {
				Data struct {
					LabelCount int `json:"label_count"`
				}
			}
			code, _ := c.do("POST", "/manifests", nil, fmt.Sprintf(`{"carrier": %q}`, carrier), &m)
			done <- answer{code, m.Data.LabelCount}
		}()
		time.Sleep(delay)
		cmd.Process.Kill() // SIGKILL: no shutdown, no flush
		cmd.Wait()
		a := <-done
		if a.code == http.StatusCreated {
			acknowledged += a.count
		}
		manifests, manifested := checkNoHalfManifest(t, dbPath)
		t.Logf("close-out round %d (kill after %v): answered %d; %d manifests, %d labels manifested", round+1, delay, a.code, manifests, manifested)
		if manifested < acknowledged {
			t.Errorf("%d labels manifested; acknowledged close-outs hold %d", manifested, acknowledged)
		}
	}

	// The push: all labels picked up, 1,000 events at most per push.
	base, cmd := startChild(t, dbPath)
	c := &crashClient{base: base, token: token, client: &http.Client{Timeout: 60 * time.Second}}
	var secret struct{ Data struct{ Secret string } }
	if code, err := c.do("POST", "/admin/carriers/"+carrier+"/event_secret/rotate", nil, "", &secret); code != http.StatusOK {
		t.Fatalf("rotate: %d %v", code, err)
	}
	var events []string
	for _, code := range allCodes {
		events = append(events, fmt.Sprintf(`{"tracking_code": %q, "status": "IN_TRANSIT", "message": "Picked up", "occurred_at": %q}`,
			code, time.Now().Add(time.Minute).UTC().Format(time.RFC3339)))
	}
	body := `{"events": [` + strings.Join(events, ",") + `]}`
	sig := map[string]string{"X-Carrier-Signature": ingest.Sign(secret.Data.Secret, []byte(body))}
	type pushAnswer struct {
		Data struct{ Accepted, Duplicates int }
	}
	done := make(chan int, 1)
	go func() {
		code, _ := c.do("POST", "/carrier_events/"+carrier, sig, body, nil)
		done <- code
	}()
	time.Sleep(150 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	code := <-done
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	var recorded, moved int
	db.QueryRow(`SELECT COUNT(*) FROM tracking_events`).Scan(&recorded)
	db.QueryRow(`SELECT COUNT(*) FROM shipping_labels WHERE status = 'IN_TRANSIT'`).Scan(&moved)
	db.Close()
	t.Logf("push killed after 150ms: answered %d; %d of %d events recorded", code, recorded, len(allCodes))
	if recorded != moved {
		t.Errorf("%d events recorded but %d labels moved: an event was applied in part", recorded, moved)
	}
	if code == http.StatusOK && recorded != len(allCodes) {
		t.Errorf("acknowledged push: %d of %d events recorded", recorded, len(allCodes))
	}

	// The carrier sends the push again: it completes, and nothing is applied twice.
	base, _ = startChild(t, dbPath)
	c.base = base
	var again pushAnswer
	if code, err := c.do("POST", "/carrier_events/"+carrier, sig, body, &again); code != http.StatusOK {
		t.Fatalf("push again: %d %v", code, err)
	}
	if again.Data.Accepted != len(allCodes)-recorded || again.Data.Duplicates != recorded {
		t.Errorf("push again: %d accepted, %d duplicates; want %d, %d", again.Data.Accepted, again.Data.Duplicates, len(allCodes)-recorded, recorded)
	}
	if _, manifested := checkNoHalfManifest(t, dbPath); manifested < acknowledged {
		t.Errorf("after the restart %d labels manifested; acknowledged %d", manifested, acknowledged)
	}
}
