package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every route of routes.go (TestOpenAPIRoutes keeps the two in step,
// TestOpenAPIGoldens checks every golden answer against it, and CI lints it with Redocly).
//
//go:embed openapi.json
var openAPIDocument []byte

// getOpenAPI: GET /openapi.json, without authentication.
func (a *API) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDocument)
}
