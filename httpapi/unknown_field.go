package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// unknownFieldPath finds where in body the unknown field that encoding/json reported by its
// bare name sits, as a field path ("origin.foo", "customs_info.customs_items[0].foo"), by
// walking body along v's type. It returns name unchanged when it cannot tell (the body was
// already checked by checkJSON, so it is well-formed).
func unknownFieldPath(body []byte, v any, name string) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if path, ok := findUnknown(dec, reflect.TypeOf(v), "", name); ok {
		return path
	}
	return name
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// findUnknown reads one JSON value from dec, of Go type t, and reports the path of the first
// object key that t has no field for and that is named name.
func findUnknown(dec *json.Decoder, t reflect.Type, path, name string) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			t = nil // decodes itself: not walked
			break
		}
		t = t.Elem()
	}
	if t != nil && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return "", false
			}
			k := key.(string)
			var elem reflect.Type
			known := true
			if t != nil {
				switch t.Kind() {
				case reflect.Struct:
					elem, known = jsonField(t, k)
				case reflect.Map:
					elem = t.Elem()
				}
			}
			if !known && k == name {
				return fieldPath(path, k), true
			}
			if p, ok := findUnknown(dec, elem, fieldPath(path, k), name); ok {
				return p, true
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if p, ok := findUnknown(dec, elem, fmt.Sprintf("%s[%d]", path, i), name); ok {
				return p, true
			}
		}
		_, err = dec.Token()
	}
	return "", false
}

// jsonField finds the struct field encoding/json decodes key into (exact name first, then
// case-insensitively, as encoding/json does), embedded structs included.
func jsonField(t reflect.Type, key string) (reflect.Type, bool) {
	var folded reflect.Type
	foundFolded := false
	var walk func(t reflect.Type) (reflect.Type, bool)
	walk = func(t reflect.Type) (reflect.Type, bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			n, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && n == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					if typ, ok := walk(et); ok {
						return typ, true
					}
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if n == "" {
				n = f.Name
			}
			if n == key {
				return ft, true
			}
			if !foundFolded && strings.EqualFold(n, key) {
				folded, foundFolded = ft, true
			}
		}
		return nil, false
	}
	if typ, ok := walk(t); ok {
		return typ, true
	}
	return folded, foundFolded
}
