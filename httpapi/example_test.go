package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

// Example mounts waybill under /shipping/ in a host application's mux.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, _ := os.MkdirTemp("", "waybill-example")
	defer os.RemoveAll(dir)

	db, err := store.OpenSQLite(ctx, filepath.Join(dir, "waybill.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: "https://example.com/shipping"})
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- api.Run(ctx) }() // webhook delivery, order import, billing close

	mux := http.NewServeMux()
	mux.Handle("/shipping/", http.StripPrefix("/shipping", api))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/shipping/healthz", nil))
	fmt.Println(w.Code, w.Body.String())

	cancel()
	<-done
	// Output: 200 {"status":"ok"}
}
