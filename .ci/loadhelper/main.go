// Command loadhelper serves .ci/load: the bare net/http yardstick and the request files wrk
// replays. It uses the standard library only and is built outside the module (GO111MODULE=off).
//
//	loadhelper bare ADDR DIR          serve DIR/NAME's bytes at /NAME (status from DIR/NAME.status)
//	loadhelper buys URL TOKEN N OUT   create N shipments; write "POST /shipments/ID/rates/RATE" lines
//	loadhelper orders SECRET N OUT    write N unique signed order bodies: "SIGNATURE<TAB>BODY" lines
//	loadhelper send URL TOKEN FILE N  POST to the first N paths of FILE (buys' lines), 64 at a time
//	loadhelper median                 read numbers, one a line; print their median
package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: loadhelper bare|buys|orders|median …")
	}
	switch os.Args[1] {
	case "bare":
		bare(os.Args[2], os.Args[3])
	case "buys":
		n, _ := strconv.Atoi(os.Args[4])
		buys(os.Args[2], os.Args[3], n, os.Args[5])
	case "orders":
		n, _ := strconv.Atoi(os.Args[3])
		orders(os.Args[2], n, os.Args[4])
	case "send":
		n, _ := strconv.Atoi(os.Args[5])
		send(os.Args[2], os.Args[3], os.Args[4], n)
	case "median":
		median()
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "loadhelper:", msg)
	os.Exit(1)
}

// bare answers each /NAME with the bytes waybill answered for that endpoint, read into memory
// at start: the same bytes, none of the work.
func bare(addr, dir string) {
	type answer struct {
		status int
		body   []byte
	}
	answers := map[string]answer{}
	names, _ := filepath.Glob(filepath.Join(dir, "*.body"))
	for _, p := range names {
		body, err := os.ReadFile(p)
		if err != nil {
			fail(err.Error())
		}
		status := http.StatusOK
		if s, err := os.ReadFile(strings.TrimSuffix(p, ".body") + ".status"); err == nil {
			status, _ = strconv.Atoi(strings.TrimSpace(string(s)))
		}
		answers["/"+strings.TrimSuffix(filepath.Base(p), ".body")] = answer{status, body}
	}
	err := http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		w.Write(a.body)
	}))
	fail(err.Error())
}

// ShipmentBody is the POST /shipments body the load uses.
const ShipmentBody = `{"origin": {"name": "A", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "B", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`

// buys creates n OPEN shipments, 64 at a time, and writes one buy request line for each.
func buys(base, token string, n int, out string) {
	lines := make([]string, n)
	parallel(n, func(i int) error {
		res, err := post(base+"/shipments", token, ShipmentBody)
		if err != nil {
			return err
		}
		var s struct {
			Data struct {
				ID    string `json:"id"`
				Rates []struct {
					ID string `json:"id"`
				} `json:"shipping_rates"`
			} `json:"data"`
		}
		err = json.NewDecoder(res.Body).Decode(&s)
		res.Body.Close()
		if err != nil || len(s.Data.Rates) == 0 {
			return fmt.Errorf("create shipment: %d %v", res.StatusCode, err)
		}
		lines[i] = "/shipments/" + s.Data.ID + "/rates/" + s.Data.Rates[0].ID
		return nil
	})
	writeLines(out, lines)
}

// send POSTs to the first n paths listed in file (buys' lines: it buys their labels).
func send(base, token, file string, n int) {
	b, err := os.ReadFile(file)
	if err != nil {
		fail(err.Error())
	}
	paths := strings.Split(strings.TrimSpace(string(b)), "\n")
	parallel(min(n, len(paths)), func(i int) error {
		res, err := post(base+paths[i], token, "")
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("POST %s: %d", paths[i], res.StatusCode)
		}
		return nil
	})
}

func post(url, token, body string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// parallel calls f(0) … f(n-1), 64 at a time (or $PAR), and fails on the last error.
func parallel(n int, f func(i int) error) {
	par := 64
	if p, err := strconv.Atoi(os.Getenv("PAR")); err == nil && p > 0 {
		par = p
	}
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = par
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	work := make(chan int)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := f(i); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if failed != nil {
		fail(failed.Error())
	}
}

// orders writes n signed order import bodies, unique across runs (a random prefix).
func orders(secret string, n int, out string) {
	var run [6]byte
	rand.Read(run[:])
	lines := make([]string, n)
	for i := range lines {
		body := fmt.Sprintf(`{"id":"LOAD-%x-%d","name":"#%d","tags":["load"],"fulfillmentOrders":[{"id":"FO-1",`+
			`"destination":{"firstName":"Ann","lastName":"Lee","address1":"1 Main St","city":"Austin","province":"TX",`+
			`"zip":"78701","countryCode":"US"},"lineItems":[{"id":"LI-1","weight":{"unit":"POUNDS","value":2},"totalQuantity":1}]}]}`,
			run, i, i)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(body))
		lines[i] = hex.EncodeToString(mac.Sum(nil)) + "\t" + body
	}
	writeLines(out, lines)
}

func writeLines(out string, lines []string) {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		fail(err.Error())
	}
}

func median() {
	var xs []float64
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if x, err := strconv.ParseFloat(strings.TrimSpace(sc.Text()), 64); err == nil {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		fmt.Println("-")
		return
	}
	sort.Float64s(xs)
	m := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		m = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	fmt.Printf("%.2f\n", m)
}
