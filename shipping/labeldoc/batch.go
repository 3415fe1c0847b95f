package labeldoc

import "github.com/waybill/waybill/shipping"

// BatchDocumentFormat is the format of a batch's label document: ZPL when every label is ZPL
// (one stream a thermal printer prints), otherwise PDF, one 4 × 6 in page per label. PNG
// labels go into the PDF: an image format has no pages.
func BatchDocumentFormat(labelFormats []string) string {
	if len(labelFormats) == 0 {
		return shipping.LabelFormatPDF
	}
	for _, f := range labelFormats {
		if f != shipping.LabelFormatZPL {
			return shipping.LabelFormatPDF
		}
	}
	return shipping.LabelFormatZPL
}

// BatchLabels is a batch's label document: the labels of its purchased shipments in the
// batch's order, in BatchDocumentFormat, with its content type. carrier finds a label's
// carrier, which prints the label as it does (see For).
func BatchLabels(shipments []*shipping.Shipment, carrier func(name string) (shipping.Carrier, bool)) (body []byte, format, contentType string, err error) {
	docs := make([]Document, 0, len(shipments))
	formats := make([]string, 0, len(shipments))
	for _, s := range shipments {
		if l := s.ShippingLabel; l != nil {
			c, _ := carrier(l.Carrier)
			docs = append(docs, For(s, l, c))
			formats = append(formats, l.LabelFormat)
		}
	}
	if format = BatchDocumentFormat(formats); format == shipping.LabelFormatZPL {
		body, err = LabelsZPL(docs)
		return body, format, ContentTypeZPL, err
	}
	body, err = LabelsPDF(docs)
	return body, format, ContentTypePDF, err
}
