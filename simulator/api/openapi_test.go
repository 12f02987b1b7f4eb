package api

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

type schema struct {
	Type                 string            `json:"type"`
	Format               string            `json:"format"`
	Ref                  string            `json:"$ref"`
	AnyOf                []schema          `json:"anyOf"`
	Properties           map[string]schema `json:"properties"`
	Required             []string          `json:"required"`
	AdditionalProperties *schema           `json:"additionalProperties"`
}

type document struct {
	OpenAPI    string `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage
	Components struct {
		Schemas map[string]schema `json:"schemas"`
	} `json:"components"`
}

func loadDocument(t *testing.T) document {
	t.Helper()
	var doc document
	if err := json.Unmarshal(OpenAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q, want an OpenAPI 3 document", doc.OpenAPI)
	}
	return doc
}

// TestDocumentMatchesGoTypes walks the Go types served by the stub and checks
// that the document declares exactly their fields, types and required-ness: a
// field added, renamed or retyped on one side only fails here.
func TestDocumentMatchesGoTypes(t *testing.T) {
	doc := loadDocument(t)
	for name, typ := range map[string]reflect.Type{
		"SimulationResponse": reflect.TypeOf(SimulationResponse{}),
		"NodeResult":         reflect.TypeOf(NodeResult{}),
		"HTTPError":          reflect.TypeOf(HTTPError{}),
	} {
		t.Run(name, func(t *testing.T) {
			s, ok := doc.Components.Schemas[name]
			if !ok {
				t.Fatalf("document has no schema %s", name)
			}
			checkStruct(t, doc, name, s, typ)
		})
	}
}

func checkStruct(t *testing.T, doc document, name string, s schema, typ reflect.Type) {
	t.Helper()
	var wantRequired, gotRequired []string
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		jsonName := strings.Split(f.Tag.Get("json"), ",")[0]
		seen[jsonName] = true
		prop, ok := s.Properties[jsonName]
		if !ok {
			t.Errorf("%s.%s: Go field %s is not in the document", name, jsonName, f.Name)
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			// Optional fields are pointers in Go and number-or-null in the document.
			ft = ft.Elem()
			if len(prop.AnyOf) != 2 || prop.AnyOf[1].Type != "null" {
				t.Errorf("%s.%s: Go pointer field must be anyOf [<type>, null] in the document", name, jsonName)
				continue
			}
			prop = prop.AnyOf[0]
		} else {
			wantRequired = append(wantRequired, jsonName)
		}
		checkType(t, doc, name+"."+jsonName, prop, ft)
	}
	for p := range s.Properties {
		if !seen[p] {
			t.Errorf("%s.%s is in the document but not in the Go type", name, p)
		}
	}
	gotRequired = append(gotRequired, s.Required...)
	sort.Strings(wantRequired)
	sort.Strings(gotRequired)
	if !reflect.DeepEqual(wantRequired, gotRequired) {
		t.Errorf("%s required = %v, Go's non-pointer fields are %v", name, gotRequired, wantRequired)
	}
}

func checkType(t *testing.T, doc document, where string, s schema, ft reflect.Type) {
	t.Helper()
	switch {
	case ft == reflect.TypeOf(time.Time{}):
		if s.Type != "string" || s.Format != "date-time" {
			t.Errorf("%s: time.Time must be a date-time string, document says %q/%q", where, s.Type, s.Format)
		}
	case ft.Kind() == reflect.Float64:
		expect(t, where, s.Type, "number")
	case ft.Kind() == reflect.Int:
		expect(t, where, s.Type, "integer")
	case ft.Kind() == reflect.String:
		expect(t, where, s.Type, "string")
	case ft.Kind() == reflect.Map:
		expect(t, where, s.Type, "object")
		if s.AdditionalProperties == nil || s.AdditionalProperties.Ref == "" {
			t.Errorf("%s: a map must have additionalProperties with a $ref", where)
			return
		}
		ref := strings.TrimPrefix(s.AdditionalProperties.Ref, "#/components/schemas/")
		if ref != ft.Elem().Name() {
			t.Errorf("%s: map values are %s in Go, %s in the document", where, ft.Elem().Name(), ref)
		}
		if _, ok := doc.Components.Schemas[ref]; !ok {
			t.Errorf("%s: $ref %s does not resolve", where, ref)
		}
	default:
		t.Errorf("%s: Go type %s has no rule in this test", where, ft)
	}
}

func expect(t *testing.T, where, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: document type %q, Go type needs %q", where, got, want)
	}
}

func TestDocumentDescribesTheServedPaths(t *testing.T) {
	doc := loadDocument(t)
	for _, p := range []string{"/simulate", "/healthz"} {
		if _, ok := doc.Paths[p]["get"]; !ok {
			t.Errorf("document has no GET %s", p)
		}
	}
	var sim struct {
		Responses map[string]struct {
			Content map[string]struct {
				Schema schema `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	}
	if err := json.Unmarshal(doc.Paths["/simulate"]["get"], &sim); err != nil {
		t.Fatal(err)
	}
	if ref := sim.Responses["200"].Content["application/json"].Schema.Ref; ref != "#/components/schemas/SimulationResponse" {
		t.Errorf("GET /simulate 200 schema = %q, want SimulationResponse", ref)
	}
}
