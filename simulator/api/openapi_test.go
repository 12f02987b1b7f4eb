package api

import (
	"encoding/json"
	"reflect"
	"slices"
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
	OneOf                []schema          `json:"oneOf"`
	Items                *schema           `json:"items"`
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
		"ValidationError":    reflect.TypeOf(ValidationError{}),
		// A map's values are checked here: the walk from the answer stops
		// at its $ref.
		"Coordinate":    reflect.TypeOf(Coordinate{}),
		"PairsInterest": reflect.TypeOf(PairsInterest{}),
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

// checkStruct holds a schema to a Go struct. A pointer field is optional and
// nullable; a field tagged omitzero or omitempty is optional and not nullable;
// any other field is required.
func checkStruct(t *testing.T, doc document, name string, s schema, typ reflect.Type) {
	t.Helper()
	var wantRequired, gotRequired []string
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")
		jsonName := tag[0]
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
		} else if !slices.Contains(tag[1:], "omitzero") && !slices.Contains(tag[1:], "omitempty") {
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
		t.Errorf("%s required = %v, Go's required fields (neither pointers nor omitzero) are %v", name, gotRequired, wantRequired)
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
	case ft.Kind() == reflect.Bool:
		expect(t, where, s.Type, "boolean")
	case ft.Kind() == reflect.Int:
		expect(t, where, s.Type, "integer")
	case ft.Kind() == reflect.String:
		expect(t, where, s.Type, "string")
	case ft.Kind() == reflect.Interface:
		// Any of several JSON types, as a list's ValidationError.loc elements.
		if len(s.AnyOf) == 0 {
			t.Errorf("%s: Go type %s must be anyOf in the document", where, ft)
		}
	case ft.Kind() == reflect.Slice:
		expect(t, where, s.Type, "array")
		if s.Items == nil {
			t.Errorf("%s: an array must have items", where)
			return
		}
		checkType(t, doc, where+"[]", *s.Items, ft.Elem())
	case ft.Kind() == reflect.Struct && ft.Implements(reflect.TypeFor[json.Marshaler]()):
		// A union, as Detail: each field, in order, is one of the document's
		// oneOf alternatives.
		if len(s.OneOf) != ft.NumField() {
			t.Errorf("%s: Go union %s has %d fields, the document's oneOf %d alternatives", where, ft, ft.NumField(), len(s.OneOf))
			return
		}
		for i := range ft.NumField() {
			checkType(t, doc, where+"|"+ft.Field(i).Name, s.OneOf[i], ft.Field(i).Type)
		}
	case ft.Kind() == reflect.Struct:
		ref := strings.TrimPrefix(s.Ref, "#/components/schemas/")
		if ref != ft.Name() {
			t.Errorf("%s: a %s in Go, $ref %q in the document", where, ft.Name(), s.Ref)
			return
		}
		target, ok := doc.Components.Schemas[ref]
		if !ok {
			t.Errorf("%s: $ref %s does not resolve", where, ref)
			return
		}
		checkStruct(t, doc, ref, target, ft)
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
	for _, p := range []string{"/simulate", "/healthz", "/readyz"} {
		if _, ok := doc.Paths[p]["get"]; !ok {
			t.Errorf("document has no GET %s", p)
		}
	}
	var interest struct {
		RequestBody struct {
			Required bool `json:"required"`
			Content  map[string]struct {
				Schema schema `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	}
	if err := json.Unmarshal(doc.Paths["/pairs/interest"]["put"], &interest); err != nil {
		t.Fatalf("PUT /pairs/interest: %v", err)
	}
	if b := interest.RequestBody; !b.Required || b.Content["application/json"].Schema.Ref != "#/components/schemas/PairsInterest" {
		t.Errorf("PUT /pairs/interest takes %+v, want a required PairsInterest", b)
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

// TestRequiredFields holds the document to the contract: consumers rely on
// results and each result's score only.
func TestRequiredFields(t *testing.T) {
	doc := loadDocument(t)
	tests := []struct {
		schema string
		want   []string
	}{
		{"SimulationResponse", []string{"results"}},
		{"NodeResult", []string{"score"}},
		{"HTTPError", []string{"detail"}},
		{"ValidationError", []string{"loc", "msg", "type"}},
	}
	for _, tt := range tests {
		s, ok := doc.Components.Schemas[tt.schema]
		if !ok {
			t.Errorf("document has no schema %s", tt.schema)
			continue
		}
		got := append([]string(nil), s.Required...)
		sort.Strings(got)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s required = %v, want %v", tt.schema, got, tt.want)
		}
	}
}

type response struct {
	Ref     string `json:"$ref"`
	Headers map[string]struct {
		Ref    string `json:"$ref"`
		Schema schema `json:"schema"`
	} `json:"headers"`
	Content map[string]struct {
		Schema schema `json:"schema"`
	} `json:"content"`
}

type operation struct {
	Parameters []struct {
		Name     string `json:"name"`
		In       string `json:"in"`
		Required bool   `json:"required"`
		Schema   schema `json:"schema"`
	} `json:"parameters"`
	Responses map[string]response `json:"responses"`
}

// TestDocumentDescribesResponses checks the answers each path gives, their
// headers and their bodies' schemas, and the shared error answers.
func TestDocumentDescribesResponses(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]operation `json:"paths"`
		Components struct {
			Responses map[string]response `json:"responses"`
			Headers   map[string]struct {
				Schema schema `json:"schema"`
			} `json:"headers"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	const httpError = "#/components/schemas/HTTPError"
	resolve := func(r response) response {
		if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
			return doc.Components.Responses[name]
		}
		return r
	}
	tests := []struct {
		where       string
		r           response
		contentType string // "" for no body
		schemaRef   string // "" to skip
		headers     []string
	}{
		{"GET /simulate 200", doc.Paths["/simulate"]["get"].Responses["200"], "application/json", "#/components/schemas/SimulationResponse", []string{"ETag"}},
		{"GET /simulate 304", doc.Paths["/simulate"]["get"].Responses["304"], "", "", []string{"ETag"}},
		{"GET /simulate 5XX", doc.Paths["/simulate"]["get"].Responses["5XX"], "application/json", httpError, nil},
		{"GET /healthz 200", doc.Paths["/healthz"]["get"].Responses["200"], "text/plain", "", nil},
		{"GET /readyz 200", doc.Paths["/readyz"]["get"].Responses["200"], "text/plain", "", nil},
		{"GET /readyz 503", doc.Paths["/readyz"]["get"].Responses["503"], "application/json", httpError, nil},
		{"PUT /pairs/interest 204", doc.Paths["/pairs/interest"]["put"].Responses["204"], "", "", nil},
		{"PUT /pairs/interest 422", doc.Paths["/pairs/interest"]["put"].Responses["422"], "application/json", httpError, nil},
		{"404 for other paths", doc.Components.Responses["NotFound"], "application/json", httpError, nil},
		{"405 for other methods", doc.Components.Responses["MethodNotAllowed"], "application/json", httpError, []string{"Allow"}},
	}
	for _, tt := range tests {
		r := resolve(tt.r)
		if tt.contentType == "" {
			if len(r.Content) != 0 {
				t.Errorf("%s: document gives a body, want none", tt.where)
			}
		} else if c, ok := r.Content[tt.contentType]; !ok {
			t.Errorf("%s: no %s content", tt.where, tt.contentType)
		} else if tt.schemaRef != "" && c.Schema.Ref != tt.schemaRef {
			t.Errorf("%s: schema %q, want %q", tt.where, c.Schema.Ref, tt.schemaRef)
		}
		for _, h := range tt.headers {
			hd, ok := r.Headers[h]
			if !ok {
				t.Errorf("%s: no %s header", tt.where, h)
				continue
			}
			s := hd.Schema
			if name, ok := strings.CutPrefix(hd.Ref, "#/components/headers/"); ok {
				s = doc.Components.Headers[name].Schema
			}
			if s.Type != "string" {
				t.Errorf("%s: header %s is %q, want a string", tt.where, h, s.Type)
			}
		}
	}
	var ifNoneMatch bool
	for _, p := range doc.Paths["/simulate"]["get"].Parameters {
		if p.Name == "If-None-Match" && p.In == "header" && !p.Required && p.Schema.Type == "string" {
			ifNoneMatch = true
		}
	}
	if !ifNoneMatch {
		t.Error("GET /simulate: no optional If-None-Match header parameter")
	}
}

// TestReferencesResolve follows every $ref in the document.
func TestReferencesResolve(t *testing.T) {
	var root any
	if err := json.Unmarshal(OpenAPIDocument, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !resolves(root, ref) {
					t.Errorf("$ref %q does not resolve", ref)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(root)
}

func resolves(root any, ref string) bool {
	pointer, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	v := root
	for _, key := range strings.Split(pointer, "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[key]; !ok {
			return false
		}
	}
	return true
}
