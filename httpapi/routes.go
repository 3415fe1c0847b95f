package httpapi

// Scopes a token can hold. Scopes are independent: WRITE does not imply READ.
const (
	ScopeReadShipments  = "READ_SHIPMENTS"
	ScopeWriteShipments = "WRITE_SHIPMENTS"
	ScopeReadBilling    = "READ_BILLING"
	ScopeReadWebhooks   = "READ_WEBHOOKS"
	ScopeWriteWebhooks  = "WRITE_WEBHOOKS"
	ScopeReadProfiles   = "READ_RATE_SHOPPING_PROFILES"
	ScopeReadOrders     = "READ_ORDERS"
	ScopeAdmin          = "ADMIN"
)

// AllScopes lists every scope, ADMIN last.
var AllScopes = []string{ScopeReadShipments, ScopeWriteShipments, ScopeReadBilling, ScopeReadWebhooks,
	ScopeWriteWebhooks, ScopeReadProfiles, ScopeReadOrders, ScopeAdmin}

// routes is the whole API surface: the accounts' routes, the routes whose credential is not a
// bearer token, and the operators'.
func (a *API) routes() {
	a.mux.HandleFunc("GET /healthz", a.healthz)
	a.mux.HandleFunc("GET /openapi.json", a.getOpenAPI)
	a.accountRoutes()
	a.publicRoutes()
	a.adminRoutes()
}

// accountRoutes are the routes an account's token reaches, by scope.
func (a *API) accountRoutes() {
	a.handle("POST /shipments", ScopeWriteShipments, a.createShipment)
	a.handle("GET /shipments", ScopeReadShipments, a.listShipments)
	a.handle("GET /shipments/{id}", ScopeReadShipments, a.getShipment)
	a.handle("PATCH /shipments/{id}", ScopeWriteShipments, a.updateShipment)
	a.handle("POST /shipments/{id}/rates/{rate_id}", ScopeWriteShipments, a.buyRate)
	a.handle("PUT /shipments/{id}/cancel", ScopeWriteShipments, a.cancelShipment)

	a.handle("POST /batches", ScopeWriteShipments, a.createBatch)
	a.handle("GET /batches", ScopeReadShipments, a.listBatches)
	a.handle("GET /batches/{id}", ScopeReadShipments, a.getBatch)

	a.handle("GET /shipping_labels", ScopeReadShipments, a.listLabels)
	a.handle("GET /shipping_labels/{id}", ScopeReadShipments, a.getLabel)
	a.handle("GET /shipping_labels/{id}/label", ScopeReadShipments, a.getLabelDocument)
	a.handle("GET /shipping_labels/{id}/tracking_events", ScopeReadShipments, a.listTrackingEvents)

	a.handle("POST /manifests", ScopeWriteShipments, a.createManifest)
	a.handle("GET /manifests", ScopeReadShipments, a.listManifests)
	a.handle("GET /manifests/pending", ScopeReadShipments, a.pendingManifests)
	a.handle("GET /manifests/{id}", ScopeReadShipments, a.getManifest)

	a.handle("GET /rate_shopping_profiles", ScopeReadProfiles, a.listProfiles)
	a.handle("GET /rate_shopping_profiles/{profile_key}", ScopeReadProfiles, a.getProfile)

	a.handle("GET /billing/invoices", ScopeReadBilling, a.listInvoices)
	a.handle("GET /billing/invoices/{id}", ScopeReadBilling, a.getInvoice)
	a.handle("GET /billing/invoices/{id}/line_items", ScopeReadBilling, a.listLineItems)
	a.handle("GET /billing/invoices/{id}/pdf", ScopeReadBilling, a.getInvoicePDF)
	a.handle("GET /billing/invoices/{id}/csv", ScopeReadBilling, a.getInvoiceCSV)

	a.handle("POST /webhooks", ScopeWriteWebhooks, a.createWebhook)
	a.handle("GET /webhooks", ScopeReadWebhooks, a.listWebhooks)
	a.handle("GET /webhooks/{id}", ScopeReadWebhooks, a.getWebhook)
	a.handle("PATCH /webhooks/{id}", ScopeWriteWebhooks, a.updateWebhook)
	a.handle("DELETE /webhooks/{id}", ScopeWriteWebhooks, a.deleteWebhook)
	a.handle("GET /webhooks/{id}/events", ScopeReadWebhooks, a.listWebhookEvents)
	a.handle("POST /webhooks/{id}/events/{event_id}/redeliver", ScopeWriteWebhooks, a.redeliverWebhookEvent)

	a.handle("GET /orders", ScopeReadOrders, a.listOrders)
	a.handle("GET /orders/{id}", ScopeReadOrders, a.getOrder)
	// Orders to labels reads an order and writes a shipment: WRITE_SHIPMENTS is checked first.
	a.handleScopes("POST /orders/{id}/shipments", []string{ScopeWriteShipments, ScopeReadOrders}, a.createOrderShipment)
	a.handle("GET /order_imports", ScopeReadOrders, a.listOrderImports)
	a.handle("GET /order_imports/{id}", ScopeReadOrders, a.getOrderImport)
}

// publicRoutes are the routes whose credential is not a bearer token: a signature.
func (a *API) publicRoutes() {
	// Order import authenticates by signature, not by bearer token.
	a.mux.Handle("POST /webhook/custom-orders", a.orderImportHandler())
	// Carriers push tracking events signed with their inbound secret, not with a bearer token.
	a.public("POST /carrier_events/{carrier}", a.postCarrierEvents)

	// Capability document URLs (label_url, pdf_url, csv_url): the signature in the path is the
	// credential, no bearer token (documents.go).
	a.public("GET /documents/shipping_labels/{id}/{sig}", a.capability(docLabel, a.labelDocumentOf))
	a.public("GET /documents/commercial_invoices/{id}/{sig}", a.capability(docCommercialInvoice, a.commercialInvoiceOf))
	a.public("GET /documents/batches/{id}/{sig}", a.capability(docBatchLabels, a.batchLabelsOf))
	a.public("GET /documents/invoices/{id}/pdf/{sig}", a.capability(docInvoicePDF, a.invoicePDFOf))
	a.public("GET /documents/invoices/{id}/csv/{sig}", a.capability(docInvoiceCSV, a.invoiceCSVOf))
	a.public("GET /documents/manifests/{id}/pdf/{sig}", a.capability(docManifestPDF, a.manifestPDFOf))
	a.public("GET /documents/manifests/{id}/csv/{sig}", a.capability(docManifestCSV, a.manifestCSVOf))
}

// adminRoutes are the operators' routes (ADMIN).
func (a *API) adminRoutes() {
	a.handle("GET /metrics", ScopeAdmin, a.serveMetrics)

	a.handle("POST /admin/accounts", ScopeAdmin, a.createAccount)
	a.handle("GET /admin/accounts", ScopeAdmin, a.listAccounts)
	a.handle("GET /admin/accounts/{id}", ScopeAdmin, a.getAccount)
	a.handle("GET /admin/accounts/{id}/tokens", ScopeAdmin, a.listTokens)
	a.handle("POST /admin/accounts/{id}/tokens", ScopeAdmin, a.createToken)
	a.handle("DELETE /admin/tokens/{id}", ScopeAdmin, a.revokeToken)
	a.handle("POST /admin/accounts/{id}/ingest_secret/rotate", ScopeAdmin, a.rotateIngestSecret)
	a.handle("PUT /admin/rate_shopping_profiles/{key}", ScopeAdmin, a.putProfile)
	a.handle("POST /admin/tracking_events", ScopeAdmin, a.postTrackingEvent)
	a.handle("GET /admin/carriers", ScopeAdmin, a.listCarriers)
	a.handle("GET /admin/purchases", ScopeAdmin, a.listPurchases)
	a.handle("GET /admin/carriers/{code}", ScopeAdmin, a.getCarrier)
	a.handle("PUT /admin/carriers/{code}", ScopeAdmin, a.putCarrier)
	a.handle("DELETE /admin/carriers/{code}", ScopeAdmin, a.deleteCarrier)
	a.handle("PUT /admin/carriers/{code}/services/{service}/prices", ScopeAdmin, a.putPriceGrid)
	a.handle("POST /admin/carriers/{code}/event_secret/rotate", ScopeAdmin, a.rotateCarrierEventSecret)
	a.handle("GET /admin/accounts/{id}/billing_profile", ScopeAdmin, a.getBillingProfile)
	a.handle("PATCH /admin/accounts/{id}/billing_profile", ScopeAdmin, a.updateBillingProfile)
	a.handle("POST /admin/billing/invoices", ScopeAdmin, a.openDraftInvoice)
	a.handle("POST /admin/billing/invoices/{id}/line_items", ScopeAdmin, a.addInvoiceFee)
	a.handle("DELETE /admin/billing/line_items/{id}", ScopeAdmin, a.deleteLineItem)
	a.handle("POST /admin/billing/invoices/{id}/finalize", ScopeAdmin, a.invoiceAction("finalize"))
	a.handle("POST /admin/billing/invoices/{id}/pay", ScopeAdmin, a.invoiceAction("pay"))
	a.handle("POST /admin/billing/invoices/{id}/mark_uncollectible", ScopeAdmin, a.invoiceAction("mark_uncollectible"))
	a.handle("POST /admin/billing/invoices/{id}/void", ScopeAdmin, a.invoiceAction("void"))
}
